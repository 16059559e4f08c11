package stack

// TCP receive (tcp_v4_rcv and the socket it queues to), the reading
// application, and the ACKs the host sends back. Kernel files followed:
// net/ipv4/tcp_ipv4.c (tcp_v4_rcv, __inet_lookup_established),
// net/ipv4/tcp_input.c (tcp_rcv_established, tcp_data_queue,
// tcp_try_rmem_schedule, __tcp_ack_snd_check, tcp_event_data_recv),
// net/ipv4/tcp.c (tcp_recvmsg, tcp_cleanup_rbuf, tcp_sendmsg),
// net/ipv4/tcp_output.c (tcp_send_ack, __tcp_select_window,
// tcp_send_delayed_ack), include/net/tcp.h (TCP_DELACK_MIN).
//
// Modelled: per-skb plus per-segment cost of tcp_v4_rcv (a GRO super-skb
// pays the per-skb part once); in-order queueing to sk_receive_queue with
// truesize charged to sk_rmem_alloc against sk_rcvbuf, an skb that
// continues the queue's tail merged into it while the frags fit
// (tcp_try_coalesce, TCPRcvCoalesce); the advertised
// window as the free receive space scaled by payload/truesize (the
// scaling_ratio of v6.x); __tcp_ack_snd_check's "more than one full-sized
// segment unacknowledged and the window does not shrink" rule for an
// immediate ACK, else a delayed ACK (TCP_DELACK_MIN timer, or the next
// read's tcp_cleanup_rbuf, or the response that piggybacks it); an
// immediate duplicate ACK for an out-of-order segment; tcp_recvmsg with a
// per-call, per-skb and per-byte (_copy_to_iter) cost; the request/response
// server that answers each complete request with tcp_sendmsg. ACK and
// response transmission is a CPU cost on the sending context (softirq for
// ACKs from tcp_v4_rcv, the application for ACKs from tcp_cleanup_rbuf and
// for responses) and a hand-off to the remote peer at the step's clock.
//
// A CPU step is atomic: a softirq step queues all its skbs when it starts,
// each stamped with the step's clock at that point; the reader only takes
// skbs stamped at or before its own clock (and sleeps until the next one),
// and __tcp_ack_snd_check judges the window by the queue as it stood when
// the step began. A reader that sleeps until an skb stamped ahead of it is
// woken by that skb's sk_data_ready: the step that queued it has already
// run, so the wake-up (sock_def_readable) is owed by the next step of the
// same class on that CPU (sim.CPU.Owe). On the validation machine the
// wake-up is the largest single item of a GRO-off stream's softirq
// (validate/testdata/perf/tcp-gro-off.folded.gz: 16% of the sender/NAPI
// CPU).
//
// The socket backlog: while the reader's step runs (it holds lock_sock in
// tcp_recvmsg, from after its idle exit until the step ends, preemption
// included), an arriving skb pays tcp_v4_rcv's own part and
// tcp_add_backlog, and the reader runs tcp_v4_do_rcv for it (with any ACK
// it sends) before its next read; a non-empty backlog keeps the socket
// owned, so nothing is reordered. An skb that continues the backlog's tail
// is coalesced into it (tcp_add_backlog since v5.0), so the reader runs
// tcp_v4_do_rcv once per coalesced skb. Every tcp_v4_rcv starts a CPU step
// (sim.Work.Yield), so a reader on another CPU that took the socket before
// that time is seen, however long the softirq step that delivers it.
//
// Quick-ACK mode (tcp_incr_quickack, tcp_in_quickack_mode,
// tcp_dec_quickack_mode): the first data, data after a gap longer than the
// RTO and out-of-order data give min(window / 2 MSS, TCP_MAX_QUICKACKS)
// ACKs sent at once for every segment; every ACK sent uses one; a
// request/response server is in pingpong mode and sends none.
//
// Segments above a hole wait in the out-of-order queue and are SACKed
// (tcp_ofo.go); the socket's receive buffer is autotuned (tcp_drs.go).
//
// Left out: the backlog limit (sk_rcvbuf + sk_sndbuf; the window keeps
// the backlog below it), the prequeue/ucopy history, TCP options other
// than timestamps and SACK, memory pressure (tcp_mem, and pruning the
// out-of-order queue) and the TX completion interrupt (its cost is part of
// the per-ACK cost).
//
// Freeing: the reader frees each skb it has copied out (tcp_recvmsg per
// skb), unless the skb was built on another CPU and that CPU's softnet has
// skb_defer_max > 0: skb_attempt_defer_free (v5.19+) then pushes it on
// that CPU's defer list and its net_rx_action frees it (napi.Softnet
// DeferFree), and the skb's RX buffers return to their queue only then.

import (
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// TCPDelackMin is TCP_DELACK_MIN (include/net/tcp.h: HZ/25 = 40 ms), the
// delayed-ACK timeout used when nothing else sends the pending ACK.
const TCPDelackMin = 40 * sim.Millisecond

// TCPMaxQuickAcks is TCP_MAX_QUICKACKS (include/net/tcp.h: 16), the most
// ACKs sent at once for every segment in quick-ACK mode.
const TCPMaxQuickAcks = 16

// TCPRTOMinRcv is TCP_RTO_MIN (200 ms), used for the receiver's icsk_rto:
// a gap in the data longer than it re-enters quick-ACK mode
// (tcp_event_data_recv).
const TCPRTOMinRcv = 200 * sim.Millisecond

// TCPPeer is the remote end of the host's TCP connections. The host calls
// it at the moment a frame leaves (the sending step's clock): Ack for a pure
// ACK (cumulative ack, advertised window in bytes, and the SACK blocks of
// the out-of-order queue, nil when it is empty), and Data for response data
// (which carries the ACK).
type TCPPeer interface {
	Ack(t sim.Time, flow, ack, wnd uint32, sack []pkt.SackBlock)
	Data(t sim.Time, flow, ack uint32, bytes int)
}

// TCPCosts are the TCP cost items in ns (from the hw cost profile).
type TCPCosts struct {
	// RcvSkb is tcp_v4_rcv's own part per skb: socket lookup, checksum
	// and filter, bh_lock_sock.
	RcvSkb float64
	// DoRcvSkb and DoRcvSeg: tcp_v4_do_rcv (tcp_rcv_established,
	// tcp_queue_rcv) per skb, plus per segment it carries; run in softirq,
	// or by the socket's owner from the backlog.
	DoRcvSkb, DoRcvSeg float64
	// AddBacklog is tcp_add_backlog per skb, when the user owns the socket.
	AddBacklog float64
	// OfoQueue is tcp_data_queue_ofo per skb held above a hole, beyond
	// tcp_v4_do_rcv: the rb-tree insert and coalesce, and moving it in
	// order later (tcp_ofo_queue).
	OfoQueue float64
	// SendAck is tcp_send_ack: skb alloc, header build, ip_queue_xmit,
	// dev_queue_xmit, the driver's transmit and its TX completion.
	SendAck float64
	// RecvCall, RecvSkb, CopyByte: tcp_recvmsg per call (syscall, socket
	// lock, tcp_cleanup_rbuf), per skb consumed (unlink, rmem uncharge),
	// and _copy_to_iter per byte.
	RecvCall, RecvSkb, CopyByte float64
	// SendCall, SendByte: tcp_sendmsg of a response per call (including
	// its transmission) and per byte copied from the user.
	SendCall, SendByte float64
	// Wake and WakeLocal: sk_data_ready waking a reader that sleeps on
	// another CPU (with an IPI) or on the waker's own, charged to the waker.
	Wake, WakeLocal float64
	// WakeQueued is sk_data_ready for a reader that was woken and has not
	// run yet: sk_wait_data's wait entry (woken_wake_function) stays on the
	// socket's wait queue until the reader runs, so sock_def_readable takes
	// the queue lock again and try_to_wake_up finds the task running.
	WakeQueued float64
}

// autotune reports whether receive-buffer autotuning may grow sk_rcvbuf.
func (c TCPConfig) autotune() bool { return !c.Locked && c.RmemMax > c.Rcvbuf }

// TCPConfig configures the host's TCP receive side.
type TCPConfig struct {
	// Rcvbuf is sk_rcvbuf in bytes when the connection starts
	// (tcp_rmem[1], or what SO_RCVBUF set).
	Rcvbuf int
	// RmemMax is tcp_rmem[2], the most receive-buffer autotuning grows
	// sk_rcvbuf to (see tcp_drs.go); Locked turns autotuning off: the
	// application set SO_RCVBUF (SOCK_RCVBUF_LOCK), or
	// net.ipv4.tcp_moderate_rcvbuf is 0. RmemMax 0 also turns it off.
	RmemMax int
	Locked  bool
	// MSS is the receiver's rcv_mss.
	MSS int
	// SegTruesize is the truesize one received segment charges (its RX
	// buffer; the skb shell is charged once per skb: SkbTruesize-2048).
	SegTruesize int
	// ReadSize is the application's recv() size in bytes.
	ReadSize int
	// ReqSize and RespSize make the application a request/response server:
	// after each ReqSize bytes read it sends RespSize bytes (0 = a sink).
	// Such a socket is in pingpong (interactive) mode, which turns quick
	// ACKs off: the response carries the ACK.
	ReqSize, RespSize int
	// MaxQuickAcks is TCP_MAX_QUICKACKS (0 = the kernel's 16; negative
	// turns quick-ACK mode off, to test the delayed-ACK rules alone).
	MaxQuickAcks int
	// TimerJitter delays the delayed-ACK timer's expiries (nil = exact).
	TimerJitter *sim.Jitter
}

// TCPStats are TCP counters (segment counts are wire segments).
type TCPStats struct {
	Skbs             uint64 // skbs through tcp_v4_rcv (Tcp InSegs)
	CsumSkbs         uint64 // of those, checksummed in software (no checksum status)
	Segs, Bytes      uint64 // received in order and queued
	DupDrops         uint64 // segments dropped as duplicates of data already received
	OfoQueued        uint64 // segments held in the out-of-order queue
	RcvbufDrops      uint64 // segments dropped for receive space
	NoSocket         uint64 // segments for no socket
	AcksSoftirq      uint64 // ACKs sent from tcp_v4_rcv where the skb arrived (softirq, cpumap kthread, NAPI thread)
	AcksBacklog      uint64 // ACKs sent from tcp_v4_do_rcv of the socket backlog, by the reader in release_sock
	QuickAcks        uint64 // of those, sent because of quick-ACK mode
	AcksApp          uint64 // ACKs sent from tcp_cleanup_rbuf (window updates)
	AcksDelack       uint64 // ACKs sent by the delayed-ACK timer
	DupAcks          uint64 // duplicate ACKs for out-of-order segments
	Responses        uint64 // responses sent (piggybacking the ACK)
	Backlogged       uint64 // skbs put on sk_backlog because the reader owned the socket
	BacklogCoalesced uint64 // of those, merged into the backlog's tail skb (TCPBacklogCoalesce)
	RcvCoalesced     uint64 // skbs merged into the receive queue's tail skb (TCPRcvCoalesce)
	DeferredFrees    uint64 // consumed skbs handed to their allocating CPU (skb_attempt_defer_free)
	BytesRead        uint64 // payload bytes copied to the application
	Reads            uint64 // tcp_recvmsg calls that returned data
	Wakeups          uint64 // sk_data_ready wakeups of a sleeping reader
	WakeQueued       uint64 // sk_data_ready calls that found the reader woken but not yet run
}

// Acks returns all ACK-only frames sent.
func (s *TCPStats) Acks() uint64 {
	return s.AcksSoftirq + s.AcksBacklog + s.AcksApp + s.AcksDelack + s.DupAcks
}

// TCP is tcp_v4_rcv with the host's established sockets (one per flow).
type TCP struct {
	cfg   TCPConfig
	costs TCPCosts
	st    *Stack
	peer  TCPPeer
	eng   *sim.Engine
	socks []*TCPSocket
	first uint32
	byID  map[uint32]*TCPSocket // only for flows outside [first, first+len)

	fnRcv, fnAck, fnRecv, fnCopy, fnSend    sim.FuncID
	fnDoRcv, fnBacklog                      sim.FuncID
	cRcvSkb, cDoRcvSkb, cDoRcvSeg, cBacklog sim.Time
	cAck, cRecvCall, cRecvSkb, cSendCall    sim.Time
	wake                                    wakeCosts
	fnWakeQueued, fnOfo                     sim.FuncID
	cWakeQueued, cOfo                       sim.Time

	Stats TCPStats
}

var _ L4Receiver = (*TCP)(nil)

// NewTCP returns tcp_v4_rcv for st, registered for pkt.TCP, talking to peer.
func NewTCP(st *Stack, cfg TCPConfig, c TCPCosts, funcs *sim.Funcs, peer TCPPeer, eng *sim.Engine) *TCP {
	if cfg.SegTruesize <= 0 {
		cfg.SegTruesize = 2048
	}
	if cfg.ReadSize <= 0 {
		cfg.ReadSize = 128 << 10
	}
	t := &TCP{cfg: cfg, costs: c, st: st, peer: peer, eng: eng,
		fnRcv: funcs.ID("tcp_v4_rcv"), fnAck: funcs.ID("tcp_send_ack"), fnRecv: funcs.ID("tcp_recvmsg"),
		fnCopy: funcs.ID("_copy_to_iter"), fnSend: funcs.ID("tcp_sendmsg"),
		fnDoRcv: funcs.ID("tcp_v4_do_rcv"), fnBacklog: funcs.ID("tcp_add_backlog"),
		cRcvSkb: ns(c.RcvSkb), cDoRcvSkb: ns(c.DoRcvSkb), cDoRcvSeg: ns(c.DoRcvSeg), cBacklog: ns(c.AddBacklog),
		cAck: ns(c.SendAck), cRecvCall: ns(c.RecvCall),
		cRecvSkb: ns(c.RecvSkb), cSendCall: ns(c.SendCall), wake: newWakeCosts(funcs, c.Wake, c.WakeLocal),
		fnWakeQueued: funcs.ID("sock_def_readable_woken"), cWakeQueued: ns(c.WakeQueued),
		fnOfo: funcs.ID("tcp_data_queue_ofo"), cOfo: ns(c.OfoQueue),
	}
	st.Register(pkt.TCP, t)
	return t
}

// Config returns the configuration.
func (t *TCP) Config() TCPConfig { return t.cfg }

// Sockets returns the sockets in creation order.
func (t *TCP) Sockets() []*TCPSocket { return t.socks }

// Listen adds the established socket of flow with its reading application
// thread on cpu. Flows should be numbered contiguously from the first one
// (the lookup is then an index, as __inet_lookup_established's hash is
// constant time).
func (t *TCP) Listen(flow uint32, cpu *sim.CPU) *TCPSocket {
	sk := newTCPSocket(t, flow)
	if len(t.socks) == 0 {
		t.first = flow
	}
	if flow != t.first+uint32(len(t.socks)) {
		if t.byID == nil {
			t.byID = map[uint32]*TCPSocket{}
		}
		t.byID[flow] = sk
	}
	t.socks = append(t.socks, sk)
	sk.app = newTCPApp(sk, cpu)
	return sk
}

func (t *TCP) lookup(flow uint32) *TCPSocket {
	if i := int(flow - t.first); i >= 0 && i < len(t.socks) && t.socks[i].flow == flow {
		return t.socks[i]
	}
	return t.byID[flow]
}

// Rcv implements L4Receiver: tcp_v4_rcv of one skb (a GRO super-skb
// included) on cpu.
//
// While the reader is inside tcp_recvmsg (its step's interval) the socket
// is owned by the user: the skb goes to sk_backlog (tcp_add_backlog) and
// the reader runs tcp_v4_do_rcv for it in release_sock, before its next
// read (TCPApp.Run). Otherwise tcp_v4_do_rcv runs here.
func (t *TCP) Rcv(w *sim.Work, cpu int, p pkt.Packet) {
	// A step boundary here: a reader on another CPU that took the socket
	// lock before this time, in a step that began after this one, is seen.
	w.Yield()
	t.Stats.Skbs++ // Tcp InSegs: every skb tcp_v4_rcv sees
	segs := p.WireSegs()
	w.Add(t.fnRcv, t.cRcvSkb)
	t.checksum(w, &p)
	sk := t.lookup(p.Flow)
	if sk == nil {
		t.Stats.NoSocket += uint64(segs)
		t.st.Led.Deliver(pkt.ToStack, segs)
		t.st.Release(p.Queue, segs)
		return
	}
	// The owner runs the backlog before it lets the socket go (release_sock
	// keeps it owned until the backlog is empty), so a non-empty backlog
	// means owned: the skbs stay in order.
	if now := w.Now(); len(sk.backlog) > 0 || (now >= sk.ownedFrom && now < sk.ownedUntil) {
		w.Add(t.fnBacklog, t.cBacklog)
		t.Stats.Backlogged++
		if n := len(sk.backlog); n > 0 && coalesce(&sk.backlog[n-1], p) {
			t.Stats.BacklogCoalesced++
			return
		}
		sk.backlog = append(sk.backlog, p)
		return
	}
	t.doRcv(w, sk, t.st.cpu(cpu), p)
}

// checksum is tcp_checksum_complete of an skb without checksum status
// (Stack.checksum, at the stack's CsumByte per L4 byte). tcp_v4_rcv's
// skb_checksum_init only seeds skb->csum with the pseudo-header for a
// segment longer than CHECKSUM_BREAK (76 bytes); the sum over the segment
// is done in tcp_add_backlog (before the backlog coalescing) or in
// tcp_rcv_established, whichever comes first, and it marks the skb
// csum_valid, so it is done once, on the CPU that runs tcp_v4_rcv. The
// no-socket path (before a reset) does the same.
func (t *TCP) checksum(w *sim.Work, p *pkt.Packet) {
	if t.st.checksum(w, t.st.fnCsum, p) {
		t.Stats.CsumSkbs++
	}
}

// coalesceMaxSegs bounds an skb grown by skb_try_coalesce, in the socket
// backlog (tcp_add_backlog) or the receive queue (tcp_try_coalesce): each
// added segment's page head becomes one frag and the tail keeps its own
// head, so MAX_SKB_FRAGS + 1 segments of one frame each; an skb with more
// (a GRO super-skb carrying a frag_list) is not coalesced.
const coalesceMaxSegs = gro.MaxSkbFrags + 1

// coalesce is tcp_add_backlog's coalescing (v5.0, commit 4f693b55c3d2 "tcp:
// implement coalescing on backlog queue"): an skb that continues the
// backlog's tail in sequence, with neither carrying SYN, RST or URG and the
// same ECE/CWR, from the same RX queue, is merged into the tail while the
// frags fit (skb_try_coalesce). The reader then runs tcp_v4_do_rcv (and
// its ACK decision) once for the merged skb. It reports whether p was
// merged into tail.
func coalesce(tail *pkt.Packet, p pkt.Packet) bool {
	const never = pkt.FlagSYN | pkt.FlagRST | pkt.FlagURG
	switch {
	case tail.Seq+uint32(tail.Payload) != p.Seq, (tail.Flags|p.Flags)&never != 0,
		(tail.Flags^p.Flags)&pkt.FlagCWR != 0, tail.Queue != p.Queue,
		tail.WireSegs()+p.WireSegs() > coalesceMaxSegs:
		return false
	}
	segs := tail.WireSegs() + p.WireSegs()
	tail.Len += p.Len
	tail.Payload += p.Payload
	tail.Segs = uint16(segs)
	tail.Flags |= p.Flags
	if int32(p.Ack-tail.Ack) > 0 {
		tail.Ack = p.Ack
	}
	return true
}

// doRcv is tcp_v4_do_rcv of one skb on the CPU of w.
func (t *TCP) doRcv(w *sim.Work, sk *TCPSocket, cpu *sim.CPU, p pkt.Packet) {
	w.Add(t.fnDoRcv, t.cDoRcvSkb+sim.Time(p.WireSegs())*t.cDoRcvSeg)
	sk.rcv(w, cpu, p)
}

// sendAck transmits a pure ACK of sk from the step of w, with the SACK
// blocks of its out-of-order queue.
func (t *TCP) sendAck(w *sim.Work, sk *TCPSocket) {
	w.Add(t.fnAck, t.cAck)
	wnd := sk.window()
	if r := int32(sk.rcvWup + sk.wnd - sk.rcvNxt); r > 0 && uint32(r) > wnd {
		wnd = uint32(r) // never shrink the advertised right edge (tcp_select_window)
	}
	sk.rcvWup, sk.wnd = sk.rcvNxt, wnd
	sk.ackPending = false
	sk.ackSent()
	t.peer.Ack(w.Now(), sk.flow, sk.rcvNxt, sk.wnd, sk.sackBlocks())
}

// Queued implements pkt.Queuer: a TCP socket's receive queue was
// delivered at enqueue; what waits on a socket's backlog or in its
// out-of-order queue is still queued.
func (t *TCP) Queued() int {
	n := 0
	for _, sk := range t.socks {
		for _, p := range sk.backlog {
			n += p.WireSegs()
		}
		n += sk.ofoSegs
	}
	return n
}

// SocketBytes returns the payload bytes queued in all sockets.
func (t *TCP) SocketBytes() uint64 {
	var n uint64
	for _, sk := range t.socks {
		n += uint64(sk.bytes)
	}
	return n
}

// SocketSegs returns the wire segments queued in all sockets.
func (t *TCP) SocketSegs() uint64 {
	var n uint64
	for _, sk := range t.socks {
		n += uint64(sk.segs)
	}
	return n
}
