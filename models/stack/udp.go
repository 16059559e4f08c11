package stack

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// SkbTruesize is skb->truesize of a small packet's skb in bytes, the charge
// to sk_rmem_alloc: build_skb on a half-page RX buffer (ixgbe/i40e
// truesize 2048, kernel-rx-path.md §2.4; cpumap's build_skb_around uses the
// same frame_sz) gives SKB_TRUESIZE = buffer + SKB_DATA_ALIGN(sizeof(struct
// sk_buff)) = 2048 + 256 (include/linux/skbuff.h; sizeof(struct sk_buff) =
// 232 on x86-64, assumed for the kernels of §9).
const SkbTruesize = 2048 + 256

// UDPStats are the /proc/net/snmp Udp counters the model keeps.
type UDPStats struct {
	InDatagrams  uint64 // counted at recvmsg (udp_recvmsg)
	NoPorts      uint64 // no socket bound (UDP_MIB_NOPORTS)
	RcvbufErrors uint64 // receive buffer full (UDP_MIB_RCVBUFERRORS)
	// DeferredFrees counts consumed skbs handed back to the CPU that built
	// them (Stack.DeferUDP).
	DeferredFrees uint64
}

// UDP is udp_rcv with its sockets.
type UDP struct {
	st    *Stack
	socks []*Socket

	fnRcv, fnEnq, fnNoPort sim.FuncID
	cRcv, cEnq, cNoPort    sim.Time
	wake                   wakeCosts

	Stats UDPStats
}

var _ L4Receiver = (*UDP)(nil)

// NewUDP returns udp_rcv for st and registers it for pkt.UDP.
func NewUDP(st *Stack, funcs *sim.Funcs) *UDP {
	c := st.costs
	u := &UDP{st: st,
		fnRcv: funcs.ID("udp_rcv"), fnEnq: funcs.ID("udp_queue_rcv_skb"),
		fnNoPort: funcs.ID("udp_noport"),
		cRcv:     ns(c.UDPRcv), cEnq: ns(c.UDPEnqueue), cNoPort: ns(c.UDPNoPort),
		wake: newWakeCosts(funcs, c.Wake, c.WakeLocal),
	}
	st.Register(pkt.UDP, u)
	return u
}

// Bind adds a socket bound to the traffic's port with receive buffer rcvbuf
// (sk_rcvbuf, bytes), each skb charging SkbTruesize. Several sockets share
// the port with SO_REUSEPORT: a flow always maps to the same one.
func (u *UDP) Bind(rcvbuf int) *Socket { return u.BindTruesize(rcvbuf, SkbTruesize) }

// BindTruesize is Bind with another per-skb truesize in bytes (e.g. the
// smaller truesize of a copy-break skb whose head was allocated for it).
func (u *UDP) BindTruesize(rcvbuf, truesize int) *Socket {
	sk := newSocket(len(u.socks), rcvbuf, max(truesize, 1), u)
	u.socks = append(u.socks, sk)
	return sk
}

// Sockets returns the bound sockets.
func (u *UDP) Sockets() []*Socket { return u.socks }

// Rcv implements L4Receiver: __udp4_lib_rcv.
func (u *UDP) Rcv(w *sim.Work, cpu int, p pkt.Packet) {
	w.Add(u.fnRcv, u.cRcv)
	if len(u.socks) == 0 {
		// __udp4_lib_rcv's no-socket path: udp_lib_checksum_complete
		// before the ICMP port unreachable.
		u.st.checksum(w, u.st.fnCsum, &p)
		w.Add(u.fnNoPort, u.cNoPort)
		u.Stats.NoPorts++
		u.st.Led.Drop(pkt.UDPNoPorts, p.WireSegs())
		u.st.Release(p.Queue, p.WireSegs())
		return
	}
	sk := u.socks[reuseport(p.Flow, len(u.socks))]
	w.Add(u.fnEnq, u.cEnq)
	sk.enqueue(w, cpu, p)
}

// reuseport picks a socket of the reuseport group: reciprocal_scale of a
// hash of the 4-tuple (reuseport_select_sock).
func reuseport(flow uint32, n int) int {
	if n == 1 {
		return 0
	}
	x := flow*0x9e3779b1 + 0x6a09e667
	x ^= x >> 15
	x *= 0x2c1b3c6d
	x ^= x >> 12
	return int(uint64(x) * uint64(n) >> 32)
}

// Socket is a UDP socket's receive queue (sk_receive_queue) with
// sk_rmem_alloc accounting. Packets are values in a preallocated ring.
type Socket struct {
	ID     int
	Rcvbuf int
	// Truesize is what each queued skb charges to sk_rmem_alloc.
	Truesize int
	u        *UDP
	rmem     int
	q        []pkt.Packet
	head     int
	n        int
	segs     int

	reader   *App
	sleeping bool

	// Stats.
	Enqueued     uint64
	RcvbufErrors uint64
	MaxQueued    int
}

func newSocket(id, rcvbuf, truesize int, u *UDP) *Socket {
	// rmem_before <= rcvbuf admits rcvbuf/truesize + 1 skbs.
	return &Socket{ID: id, Rcvbuf: rcvbuf, Truesize: truesize, u: u, q: make([]pkt.Packet, rcvbuf/truesize+2)}
}

// Len returns the skbs queued.
func (sk *Socket) Len() int { return sk.n }

// Rmem returns sk_rmem_alloc in bytes.
func (sk *Socket) Rmem() int { return sk.rmem }

// Queued implements pkt.Queuer: wire segments waiting for a reader (a socket
// without a reader counts its packets delivered at enqueue).
func (sk *Socket) Queued() int {
	if sk.reader == nil {
		return 0
	}
	return sk.segs
}

// enqueue is __udp_enqueue_schedule_skb + sk_data_ready on cpu.
func (sk *Socket) enqueue(w *sim.Work, cpu int, p pkt.Packet) {
	u := sk.u
	segs := p.WireSegs()
	if sk.rmem > sk.Rcvbuf || sk.n == len(sk.q) {
		sk.RcvbufErrors++
		u.Stats.RcvbufErrors++
		u.st.Led.Drop(pkt.Rcvbuf, segs)
		u.st.Release(p.Queue, segs)
		return
	}
	sk.rmem += sk.Truesize
	i := sk.head + sk.n
	if i >= len(sk.q) {
		i -= len(sk.q)
	}
	sk.q[i] = p
	sk.n++
	sk.segs += segs
	sk.MaxQueued = max(sk.MaxQueued, sk.n)
	sk.Enqueued++
	if sk.reader == nil {
		u.st.Led.Deliver(pkt.ToSocket, segs)
		return
	}
	sk.reader.busy.mark(p.Queue) // sk_mark_napi_id
	if sk.sleeping {
		sk.sleeping = false
		w.Add(u.wake.of(sk.reader.th.CPU().ID == cpu))
		sk.reader.wake()
	}
}

// readable reports whether datagrams are queued (the time is that of the
// queue's last change: UDP skbs are queued at once).
func (sk *Socket) readable(sim.Time) bool { return sk.n > 0 }

// pop dequeues the oldest skb (the reader's __skb_recv_udp) and uncharges it.
func (sk *Socket) pop() pkt.Packet {
	p := sk.q[sk.head]
	sk.head++
	if sk.head == len(sk.q) {
		sk.head = 0
	}
	sk.n--
	sk.segs -= p.WireSegs()
	sk.rmem -= sk.Truesize
	return p
}
