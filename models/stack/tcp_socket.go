package stack

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
	"strconv"
)

// tcpSkbShell is the truesize of an skb's shell (SKB_DATA_ALIGN(sizeof(struct
// sk_buff)), see SkbTruesize), charged once per queued skb on top of its
// segments' buffers.
const tcpSkbShell = SkbTruesize - 2048

// tcpSkb is one skb on sk_receive_queue.
type tcpSkb struct {
	at       sim.Time // when tcp_v4_rcv queued it (the queueing step's clock)
	end      uint32   // rcv_nxt after it
	bytes    int32    // payload not yet copied
	segs     int32
	truesize int32
	queue    uint16
	allocCPU uint16 // skb->alloc_cpu
	// cpu and class: the CPU and class of the step that queued it, which
	// pays the wake-up of a reader that sleeps until it (see TCPApp.Done).
	cpu   *sim.CPU
	class sim.Class
}

// TCPSocket is one established connection's receive side: rcv_nxt,
// rcv_wup and rcv_wnd, sk_receive_queue with sk_rmem_alloc, and the
// delayed-ACK state.
type TCPSocket struct {
	t    *TCP
	flow uint32

	rcvNxt, rcvWup uint32
	wnd            uint32 // rcv_wnd: window advertised at rcv_wup
	ackPending     bool   // ICSK_ACK_SCHED
	ackSince       sim.Time
	delackArmed    bool

	rmem   int
	rcvbuf int // sk_rcvbuf
	// copiedSeq is copied_seq: payload bytes the reader has copied.
	copiedSeq uint32
	drs       drs
	// stepAt and rmemStep: the softirq step that last queued data, and
	// sk_rmem_alloc when it began (see ackSndCheck).
	stepAt   sim.Time
	rmemStep int
	q        []tcpSkb
	head     int
	n        int
	bytes    int // payload queued
	segs     int // wire segments queued

	seenNxt   uint32 // rcv_nxt as far as the reader has read
	reqGot    int    // request bytes read towards the next response
	app       *TCPApp
	sleeping  bool
	wakeArmed bool
	// waiting: the reader's sk_wait_data entry is on the socket's wait
	// queue, from when it sleeps until it runs again (woken or not);
	// unqueuedAt is when its last run took the entry off (after the idle
	// exit and the switch in), which may be ahead of a waker's clock.
	waiting    bool
	unqueuedAt sim.Time

	// quick is icsk_ack.quick: ACKs still to send for every segment;
	// started and lastRcv: data has arrived, and when it last did
	// (icsk_ack.lrcvtime).
	quick   int
	started bool
	lastRcv sim.Time

	// ownedFrom and ownedUntil: the interval of the reader's last step, in
	// which the user owns the socket (lock_sock in tcp_recvmsg); backlog
	// holds the skbs that arrived meanwhile (sk_backlog).
	ownedFrom, ownedUntil sim.Time
	// inBacklog is set while the reader runs the backlog (release_sock).
	inBacklog bool
	backlog   []pkt.Packet

	// ofo is out_of_order_queue, sorted by sequence; ofoSegs its wire
	// segments. sackRcvNxt, dupAckCounter and compressed are the
	// compressed-SACK state (tp->compressed_ack_rcv_nxt, dup_ack_counter,
	// compressed_ack).
	ofo                       []ofoSkb
	ofoSegs                   int
	sackRcvNxt                uint32
	dupAckCounter, compressed int
}

func newTCPSocket(t *TCP, flow uint32) *TCPSocket {
	sk := &TCPSocket{t: t, flow: flow, q: make([]tcpSkb, 64), rcvbuf: t.cfg.Rcvbuf}
	sk.wnd = sk.window()
	sk.initSpace(0)
	return sk
}

// Flow returns the socket's flow id.
func (sk *TCPSocket) Flow() uint32 { return sk.flow }

// RcvNxt returns rcv_nxt (payload bytes received in order).
func (sk *TCPSocket) RcvNxt() uint32 { return sk.rcvNxt }

// Rmem returns sk_rmem_alloc in bytes.
func (sk *TCPSocket) Rmem() int { return sk.rmem }

// QueuedBytes returns the payload waiting in the receive queue.
func (sk *TCPSocket) QueuedBytes() int { return sk.bytes }

// App returns the socket's reading application.
func (sk *TCPSocket) App() *TCPApp { return sk.app }

// window is __tcp_select_window's free space in payload bytes: the free
// receive space scaled by payload/truesize of a full-sized segment, rounded
// down to whole segments (the receiver-side silly window avoidance).
func (sk *TCPSocket) window() uint32 { return sk.windowAt(sk.rmem) }

func (sk *TCPSocket) windowAt(rmem int) uint32 {
	c := sk.t.cfg
	free := sk.rcvbuf - rmem
	if free <= 0 {
		return 0
	}
	segs := free / (c.SegTruesize + tcpSkbShell)
	return uint32(segs * c.MSS)
}

// InitialWindow returns the window of an empty socket (the sender's
// window before the first ACK).
func (t *TCP) InitialWindow() uint32 {
	sk := TCPSocket{t: t, rcvbuf: t.cfg.Rcvbuf}
	return sk.window()
}

// rcv is tcp_rcv_established / tcp_data_queue for one skb.
func (sk *TCPSocket) rcv(w *sim.Work, cpu *sim.CPU, p pkt.Packet) {
	t := sk.t
	segs := p.WireSegs()
	if sk.app != nil {
		sk.app.busy.mark(p.Queue) // sk_mark_napi_id
	}
	if p.Payload == 0 {
		t.st.Led.Deliver(pkt.ToStack, segs) // a pure ACK: consumed by tcp_ack
		t.st.Release(p.Queue, segs)
		return
	}
	if !sk.trimOld(&p) {
		sk.dupAck(w) // all of it arrived already: a DSACK
		return
	}
	if p.Seq != sk.rcvNxt {
		sk.rcvOfo(w, cpu, p)
		return
	}
	segs = p.WireSegs()
	truesize := segs*t.cfg.SegTruesize + tcpSkbShell
	if sk.rmem+truesize > sk.rcvbuf {
		// tcp_try_rmem_schedule failed (TCPRcvQDrop).
		t.Stats.RcvbufDrops += uint64(segs)
		t.st.Led.Drop(pkt.Rcvbuf, segs)
		sk.drop(w, p)
		return
	}
	if w.Start() != sk.stepAt {
		sk.stepAt, sk.rmemStep = w.Start(), sk.rmem
	}
	sk.eventDataRecv(w.Now())
	sk.rttMeasureTS(w.Now(), p)
	sk.enqueue(w.Now(), p, truesize, cpu, w.Class())
	sk.rttMeasure(w.Now())
	t.Stats.Segs += uint64(segs)
	t.Stats.Bytes += uint64(p.Payload)
	t.st.Led.Deliver(pkt.ToSocket, segs)
	if len(sk.ofo) > 0 && sk.ofoQueue(w) {
		// the hole is filled: ACK at once (ICSK_ACK_NOW)
		if sk.inBacklog {
			t.Stats.AcksBacklog++
		} else {
			t.Stats.AcksSoftirq++
		}
		t.sendAck(w, sk)
	} else {
		sk.ackSndCheck(w)
	}
	sk.dataReady(w, cpu)
}

// drop frees a segment that was not queued and sends the immediate
// duplicate ACK (tcp_data_queue's out-of-window / out-of-order path).
func (sk *TCPSocket) drop(w *sim.Work, p pkt.Packet) {
	sk.t.st.Release(p.Queue, p.WireSegs())
	sk.dupAck(w)
}

// dupAck sends the immediate duplicate ACK for a segment not queued, and
// enters quick-ACK mode (tcp_enter_quickack_mode).
func (sk *TCPSocket) dupAck(w *sim.Work) {
	sk.incrQuickack()
	sk.t.Stats.DupAcks++
	sk.t.sendAck(w, sk)
}

// enqueue queues p at the step clock at; cpu and cl are the CPU and class
// of that step.
func (sk *TCPSocket) enqueue(at sim.Time, p pkt.Packet, truesize int, cpu *sim.CPU, cl sim.Class) {
	if sk.n == len(sk.q) {
		nq := make([]tcpSkb, 2*len(sk.q))
		for i := 0; i < sk.n; i++ {
			nq[i] = sk.q[(sk.head+i)%len(sk.q)]
		}
		sk.q, sk.head = nq, 0
	}
	sk.rcvNxt += uint32(p.Payload)
	if sk.tryCoalesce(at, p, truesize, cpu, cl) {
		return
	}
	i := (sk.head + sk.n) % len(sk.q)
	sk.q[i] = tcpSkb{at: at, end: sk.rcvNxt, bytes: p.Payload, segs: int32(p.WireSegs()), truesize: int32(truesize),
		queue: p.Queue, allocCPU: p.AllocCPU, cpu: cpu, class: cl}
	sk.n++
	sk.rmem += truesize
	sk.bytes += int(p.Payload)
	sk.segs += p.WireSegs()
}

// tryCoalesce is tcp_queue_rcv's tcp_try_coalesce: p, which continues the
// receive queue's tail skb (it is in order), is merged into it while the
// frags fit and both come from the same RX queue (same page pool / recycle
// mode). p's own skb is freed at once (kfree_skb_partial with its head
// stolen: inside tcp_v4_do_rcv's cost), and only its buffers are charged
// to sk_rmem_alloc. The merged skb becomes visible to the reader at the
// later of the two queueing times (the model keeps one time per skb). It
// reports whether p was merged (TcpExt TCPRcvCoalesce).
func (sk *TCPSocket) tryCoalesce(at sim.Time, p pkt.Packet, truesize int, cpu *sim.CPU, cl sim.Class) bool {
	if sk.n == 0 {
		return false
	}
	tail := &sk.q[(sk.head+sk.n-1)%len(sk.q)]
	segs := int32(p.WireSegs())
	if tail.bytes == 0 || tail.queue != p.Queue || tail.segs+segs > coalesceMaxSegs {
		return false
	}
	delta := truesize - tcpSkbShell
	tail.end = sk.rcvNxt
	tail.bytes += p.Payload
	tail.segs += segs
	tail.truesize += int32(delta)
	if at > tail.at {
		tail.at, tail.cpu, tail.class = at, cpu, cl
	}
	sk.rmem += delta
	sk.bytes += int(p.Payload)
	sk.segs += int(segs)
	sk.t.Stats.RcvCoalesced++
	return true
}

// ackSndCheck is __tcp_ack_snd_check: ACK now when more than one
// full-sized segment is unacknowledged and the window would not shrink;
// otherwise schedule a delayed ACK. The window is judged by the receive
// queue as it stood when the step began: a softirq step starts at every
// tcp_v4_rcv where something could have happened meanwhile (sim.Work.Yield),
// so that is the queue the skb found, with what a reader on another CPU has
// consumed by then (a reader that keeps up has emptied it; one that falls
// behind, or cannot run because the softirq holds its CPU, has not); the
// reader judges every backlog skb it processes by the queue at the start
// of its step.
func (sk *TCPSocket) ackSndCheck(w *sim.Work) {
	t := sk.t
	rcvAcks := &t.Stats.AcksSoftirq
	if sk.inBacklog {
		rcvAcks = &t.Stats.AcksBacklog
	}
	if sk.rcvNxt-sk.rcvWup > uint32(t.cfg.MSS) && sk.windowAt(sk.rmemStep) >= sk.wnd {
		*rcvAcks++
		t.sendAck(w, sk)
		return
	}
	if sk.inQuickack() {
		*rcvAcks++
		t.Stats.QuickAcks++
		t.sendAck(w, sk)
		return
	}
	if !sk.ackPending {
		sk.ackPending = true
		sk.ackSince = w.Now()
	}
	sk.armDelack(w.Now() + TCPDelackMin)
}

// eventDataRecv is tcp_event_data_recv's quick-ACK part: the first data
// and data after a gap longer than the RTO enter quick-ACK mode.
func (sk *TCPSocket) eventDataRecv(now sim.Time) {
	if !sk.started || now-sk.lastRcv > TCPRTOMinRcv {
		sk.started = true
		sk.incrQuickack()
	}
	sk.lastRcv = now
}

// incrQuickack is tcp_incr_quickack(sk, TCP_MAX_QUICKACKS): enough quick
// ACKs for half the advertised window in segments (2 if that is 0), at most
// TCP_MAX_QUICKACKS.
func (sk *TCPSocket) incrQuickack() {
	limit := sk.t.cfg.MaxQuickAcks
	if limit < 0 {
		return
	}
	if limit == 0 {
		limit = TCPMaxQuickAcks
	}
	q := int(sk.wnd) / (2 * sk.t.cfg.MSS)
	if q == 0 {
		q = 2
	}
	sk.quick = max(sk.quick, min(q, limit))
}

// inQuickack is tcp_in_quickack_mode: quick ACKs left and not interactive
// (a request/response socket is in pingpong mode).
func (sk *TCPSocket) inQuickack() bool { return sk.quick > 0 && sk.t.cfg.ReqSize <= 0 }

// ackSent is tcp_event_ack_sent's tcp_dec_quickack_mode for one ACK.
func (sk *TCPSocket) ackSent() {
	if sk.quick > 0 {
		sk.quick--
	}
}

func (sk *TCPSocket) armDelack(at sim.Time) {
	if sk.delackArmed || sk.t.eng == nil {
		return
	}
	sk.delackArmed = true
	sk.t.eng.Schedule(at+sk.t.cfg.TimerJitter.Delay(), (*delackTimer)(sk), 0)
}

// dataReady is sk_data_ready (sock_def_readable): wake the reader if it
// sleeps in tcp_recvmsg. The wake-up takes effect at the waker's clock.
func (sk *TCPSocket) dataReady(w *sim.Work, cpu *sim.CPU) {
	if !sk.waiting && w.Now() >= sk.unqueuedAt {
		return
	}
	t := sk.t
	if !sk.sleeping || sk.wakeArmed {
		// woken and not yet run: the wait entry is still queued
		w.Add(t.fnWakeQueued, t.cWakeQueued)
		t.Stats.WakeQueued++
		return
	}
	fn, c := sk.wakeCost(cpu)
	w.Add(fn, c)
	t.Stats.Wakeups++
	sk.wakeArmed = true
	if t.eng == nil {
		sk.wake()
		return
	}
	t.eng.Schedule(w.Now(), (*wakeEvent)(sk), 0)
}

// wakeCost is sock_def_readable's cost on the waker's CPU: a reader that
// sleeps there is woken by a local enqueue, one elsewhere with an IPI.
func (sk *TCPSocket) wakeCost(waker *sim.CPU) (sim.FuncID, sim.Time) {
	return sk.t.wake.of(waker != nil && waker == sk.app.th.CPU())
}

func (sk *TCPSocket) wake() {
	sk.wakeArmed = false
	if sk.sleeping {
		sk.sleeping = false
		sk.app.th.CPU().Wake(sk.app.th)
	}
}

type wakeEvent TCPSocket

// Fire implements sim.Handler: the reader becomes runnable.
func (e *wakeEvent) Fire(now sim.Time, _ int64) { (*TCPSocket)(e).wake() }

type delackTimer TCPSocket

// Fire implements sim.Handler: tcp_delack_timer. A pending ACK older than
// TCPDelackMin is sent from the timer interrupt of the reader's CPU; a
// younger one re-arms the timer.
func (d *delackTimer) Fire(now sim.Time, _ int64) {
	sk := (*TCPSocket)(d)
	sk.delackArmed = false
	if !sk.ackPending {
		return
	}
	if due := sk.ackSince + TCPDelackMin; due > now {
		sk.armDelack(due)
		return
	}
	sk.app.th.CPU().RaiseIRQ((*delackIRQ)(sk))
}

type delackIRQ TCPSocket

// Run implements sim.Task: the timer sends the pending ACK.
func (d *delackIRQ) Run(now sim.Time, w *sim.Work) {
	sk := (*TCPSocket)(d)
	if sk.ackPending {
		sk.t.Stats.AcksDelack++
		sk.t.sendAck(w, sk)
	}
}

// Done implements sim.Task.
func (d *delackIRQ) Done(now sim.Time) bool { return false }

// TCPApp is the application reading one TCP socket (netperf's receiver, or
// a request/response server): one tcp_recvmsg of up to ReadSize bytes per
// step (which goes on through the backlog, see Run), sleeping when the
// socket is empty.
type TCPApp struct {
	sk   *TCPSocket
	th   *sim.Thread
	busy *busyRead // sk_busy_loop (nil: busy polling off)
}

var (
	_ sim.Task   = (*TCPApp)(nil)
	_ sim.Atomic = (*TCPApp)(nil)
)

// Atomic implements sim.Atomic: not switched out while busy polling owns a
// NAPI.
func (a *TCPApp) Atomic() bool { return a.busy.atomic() }

func newTCPApp(sk *TCPSocket, cpu *sim.CPU) *TCPApp {
	a := &TCPApp{sk: sk}
	name := "netserver/"
	a.th = cpu.NewThread(name+strconv.Itoa(int(sk.flow)), "app", a)
	a.busy = sk.t.st.newBusyRead(cpu, sk.readable)
	sk.sleeping, sk.waiting = true, true
	return a
}

// readable reports whether the reader has something to do at time at: skbs
// on the backlog, or an skb queued by then.
func (sk *TCPSocket) readable(at sim.Time) bool {
	return len(sk.backlog) > 0 || (sk.n > 0 && sk.q[sk.head].at <= at)
}

// Thread returns the application thread.
func (a *TCPApp) Thread() *sim.Thread { return a.th }

// Run implements sim.Task: one tcp_recvmsg of what was queued by the
// step's clock, then the responses it completes and tcp_cleanup_rbuf.
func (a *TCPApp) Run(now sim.Time, w *sim.Work) {
	sk := a.sk
	t := sk.t
	if a.busy.active() {
		// sk_busy_loop, before lock_sock: the socket is not owned, so
		// what the loop's polls receive goes to the receive queue
		a.busy.step(w)
		return
	}
	// back from sk_wait_data (remove_wait_queue), then lock_sock, after the
	// idle exit and the switch in; the socket is owned until the step ends
	// (Done), preemption included
	sk.waiting, sk.unqueuedAt = false, w.Now()
	sk.ownedFrom, sk.ownedUntil = w.Now(), sim.Never
	sk.releaseBacklog(w)
	if sk.n == 0 || sk.q[sk.head].at > w.Now() {
		return
	}
	w.Add(t.fnRecv, t.cRecvCall)
	t.Stats.Reads++
	a.busy.read()
	copied := sk.copyOut(w, t.cfg.ReadSize)
	// tcp_recvmsg_locked: with the receive queue copied out, the call
	// runs what arrived on the backlog meanwhile (__sk_flush_backlog) and
	// copies on, up to the read size; the step boundary lets the skbs
	// other CPUs backlogged by now be seen. A request/response server
	// answers what it read instead.
	for t.cfg.ReqSize <= 0 && copied < t.cfg.ReadSize {
		w.Yield()
		if len(sk.backlog) == 0 {
			break
		}
		sk.releaseBacklog(w)
		copied += sk.copyOut(w, t.cfg.ReadSize-copied)
	}
	if !a.serve(w, copied) {
		sk.cleanupRbuf(w, copied)
	}
}

// copyOut copies up to room bytes of what is queued by the step's clock
// (skb_copy_datagram_msg, freeing each skb it empties) and returns them.
func (sk *TCPSocket) copyOut(w *sim.Work, room int) int {
	t := sk.t
	copied := 0
	for sk.n > 0 && copied < room && sk.q[sk.head].at <= w.Now() {
		e := &sk.q[sk.head]
		take := min(int(e.bytes), room-copied)
		w.Add(t.fnCopy, ns(t.costs.CopyByte*float64(take)))
		copied += take
		e.bytes -= int32(take)
		sk.copiedSeq += uint32(take)
		sk.seenNxt = e.end
		if e.bytes == 0 {
			sk.eat(w, e)
			sk.rmem -= int(e.truesize)
			sk.segs -= int(e.segs)
			sk.head = (sk.head + 1) % len(sk.q)
			sk.n--
		}
		sk.spaceAdjust(w.Now())
	}
	sk.bytes -= copied
	t.Stats.BytesRead += uint64(copied)
	return copied
}

// eat is tcp_eat_recv_skb for an skb copied out (tcp_recvmsg per skb:
// unlink and uncharge): skb_attempt_defer_free (v5.19+) hands an skb built
// on another CPU to that CPU's defer list, whose net_rx_action frees it;
// the reader frees the others itself (skb_release_data per segment
// buffer), and those that find the list full.
func (sk *TCPSocket) eat(w *sim.Work, e *tcpSkb) {
	t := sk.t
	w.Add(t.fnRecv, t.cRecvSkb)
	if t.st.freeSkb(w, sk.app.th.CPU().ID, int(e.allocCPU), e.queue, int(e.segs), true) {
		t.Stats.DeferredFrees++
	}
}

// serve answers every complete request read so far (tcp_sendmsg of the
// response, which carries the pending ACK). It reports whether it sent.
func (a *TCPApp) serve(w *sim.Work, copied int) bool {
	sk := a.sk
	t := sk.t
	if t.cfg.ReqSize <= 0 {
		return false
	}
	sk.reqGot += copied
	sent := false
	for sk.reqGot >= t.cfg.ReqSize {
		sk.reqGot -= t.cfg.ReqSize
		w.Add(t.fnSend, t.cSendCall+ns(t.costs.SendByte*float64(t.cfg.RespSize)))
		ack, wnd := sk.visible(w.Now())
		sk.rcvWup, sk.wnd, sk.ackPending = ack, wnd, false
		t.Stats.Responses++
		sk.ackSent()
		t.peer.Data(w.Now(), sk.flow, ack, t.cfg.RespSize)
		sent = true
	}
	return sent
}

// visible returns rcv_nxt and the window to advertise as of time at in
// the reader's context: skbs queued by a softirq step whose clock is
// still ahead of at are not there yet.
func (sk *TCPSocket) visible(at sim.Time) (ack, wnd uint32) {
	ack = sk.seenNxt
	rmem := sk.rmem
	for i, j := 0, sk.head; i < sk.n; i, j = i+1, (j+1)%len(sk.q) {
		e := &sk.q[j]
		if e.at <= at {
			ack = e.end
			continue
		}
		rmem -= int(e.truesize)
	}
	wnd = sk.windowAt(rmem)
	if r := int32(sk.rcvWup + sk.wnd - ack); r > 0 && uint32(r) > wnd {
		wnd = uint32(r) // never shrink the advertised right edge
	}
	return ack, wnd
}

// cleanupRbuf is tcp_cleanup_rbuf after copied bytes: send the scheduled
// ACK if more than one full segment is unacknowledged, or a window update
// when the window doubled.
func (sk *TCPSocket) cleanupRbuf(w *sim.Work, copied int) {
	t := sk.t
	ack, wnd := sk.visible(w.Now())
	timeToAck := sk.ackPending && int32(ack-sk.rcvWup) > int32(t.cfg.MSS)
	if int32(ack-sk.rcvWup) < 0 {
		return // the softirq already acknowledged beyond what the reader has seen
	}
	if copied > 0 && !timeToAck {
		now := uint32(max(int32(sk.rcvWup+sk.wnd-ack), 0))
		clamp := sk.windowAt(0) // window_clamp: the window of an empty buffer
		if 2*now <= clamp && wnd > 0 && wnd >= 2*now {
			timeToAck = true
		}
	}
	if !timeToAck {
		return
	}
	t.Stats.AcksApp++
	w.Add(t.fnAck, t.cAck)
	sk.rcvWup, sk.wnd = ack, wnd
	sk.ackPending = sk.rcvNxt != ack // data queued ahead of the reader's clock stays unacknowledged
	sk.ackSent()
	t.peer.Ack(w.Now(), sk.flow, ack, wnd, sk.sackBlocks())
}

// releaseBacklog is __release_sock: the owner runs tcp_v4_do_rcv for each
// skb that arrived on the backlog while it held the socket.
func (sk *TCPSocket) releaseBacklog(w *sim.Work) {
	if len(sk.backlog) == 0 {
		return
	}
	t := sk.t
	cpu := sk.app.th.CPU()
	sk.inBacklog = true
	for _, p := range sk.backlog {
		t.doRcv(w, sk, cpu, p)
	}
	sk.inBacklog = false
	sk.backlog = sk.backlog[:0]
}

// Done implements sim.Task: keep reading while data is queued, else sleep
// in sk_wait_data.
// Data queued by a step whose clock is ahead wakes it at that time.
func (a *TCPApp) Done(now sim.Time) bool {
	sk := a.sk
	if a.busy.active() {
		return true // a busy-poll step: the socket was not locked
	}
	sk.ownedUntil = now // release_sock
	if sk.readable(now) {
		return true // release_sock runs the backlog before the thread can sleep
	}
	if a.busy.begin(now) {
		return true // the next tcp_recvmsg finds the queue empty: sk_busy_loop
	}
	sk.sleeping, sk.waiting = true, true
	if sk.n > 0 && !sk.wakeArmed && sk.t.eng != nil {
		// The next skb was queued by a step whose clock is ahead of the
		// reader's: in the kernel the reader sleeps in sk_wait_data and that
		// skb's sk_data_ready wakes it. The queuing step already ran, so
		// the wake-up is owed by its CPU's next step of the same class.
		e := &sk.q[sk.head]
		if e.cpu != nil {
			fn, c := sk.wakeCost(e.cpu)
			e.cpu.Owe(e.class, fn, c)
		}
		sk.t.Stats.Wakeups++
		sk.wakeArmed = true
		sk.t.eng.Schedule(e.at, (*wakeEvent)(sk), 0)
	}
	return false
}
