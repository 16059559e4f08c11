package stack

import (
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Costs are the stack's cost items in ns (from the hw cost profile). Call
// parts are paid once per call (per list in list delivery), Pkt parts per
// skb, Byte parts per payload byte.
type Costs struct {
	// BuildSkb is the driver's skb build for XDP_PASS (ixgbe_build_skb,
	// ixgbe_process_skb_fields, eth_type_trans), per packet.
	BuildSkb float64
	// RecvCall, RecvPkt: netif_receive_skb / netif_receive_skb_list_internal
	// per call and __netif_receive_skb_core per skb.
	RecvCall, RecvPkt float64
	// IPCall, IPPkt: ip_rcv / ip_list_rcv per call, ip_rcv_core +
	// ip_rcv_finish (route lookup) + ip_local_deliver per skb.
	IPCall, IPPkt float64
	// UDPRcv is __udp4_lib_rcv with the socket lookup, per skb.
	UDPRcv float64
	// UDPEnqueue is udp_queue_rcv_skb + __udp_enqueue_schedule_skb, per skb
	// queued to a socket.
	UDPEnqueue float64
	// UDPNoPort is the no-listener path: the rate-limited icmp_send check
	// and kfree_skb, per skb.
	UDPNoPort float64
	// Wake is sock_def_readable waking a reader that sleeps on another CPU
	// (try_to_wake_up with the IPI), charged to the waker.
	Wake float64
	// WakeLocal is sock_def_readable waking a reader that sleeps on the
	// waker's own CPU (a local enqueue, no IPI), charged to the waker.
	WakeLocal float64
	// RawDrop is the IP-level part of an iptables raw-table drop, per skb:
	// ip_rcv_core, NF_HOOK(PREROUTING) into the raw table's rule and
	// kfree_skb (ip_rcv's per-call part is charged as usual).
	RawDrop float64
	// RecvmsgCall, RecvmsgPkt, RecvmsgByte: the reader's syscall per call,
	// udp_recvmsg + rmem uncharge per message (the skb's free is FreeSkb
	// and FreeSeg), copy_to_user per payload byte.
	RecvmsgCall, RecvmsgPkt, RecvmsgByte float64
	// FreeSkb and FreeSeg are the free of a consumed skb (skb_release_data
	// with the head), per skb and per segment buffer, where the reader
	// frees it itself.
	FreeSkb, FreeSeg float64
	// CsumByte is the software checksum (csum_partial) per L4 byte of an
	// skb without checksum status: __skb_checksum_complete in TCP and in
	// UDP's no-socket path, skb_copy_and_csum_datagram in udp_recvmsg.
	CsumByte float64
}

// Steerer is RPS in netif_receive_skb_internal: get_rps_cpu and, when it
// picks a CPU, enqueue_to_backlog. Steer reports whether it took the skb
// (queued to a backlog or dropped there).
type Steerer interface {
	Steer(w *sim.Work, cpu int, p pkt.Packet) bool
}

// L4Receiver is a transport protocol's receive function (udp_rcv,
// tcp_v4_rcv), called by ip_local_deliver on cpu.
type L4Receiver interface {
	Rcv(w *sim.Work, cpu int, p pkt.Packet)
}

// Releaser returns a buffer to the RX queue it came from when its skb is
// freed (the page-reuse rule, nic.Queue.Release).
type Releaser func(queue uint16, n int)

// Stats are the stack's counters.
type Stats struct {
	// Calls counts netif_receive_skb calls and lists; Skbs the skbs through
	// __netif_receive_skb_core.
	Calls, Lists, Skbs uint64
	// Steered counts skbs taken by RPS.
	Steered uint64
	// NoProto counts skbs of a protocol with no registered receiver
	// (delivered as pkt.ToStack).
	NoProto uint64
	// RawDrops counts skbs dropped by the raw-table rule (RawDropUDP).
	RawDrops uint64
}

// Stack is the host's IPv4 receive path.
type Stack struct {
	costs   Costs
	softnet []*napi.Softnet
	// Led is the host ledger; Release frees buffers to their RX queue.
	Led     *pkt.Ledger
	Release Releaser
	// RPS is the steering hook (nil: RPS off).
	RPS Steerer
	// DeferUDP: udp_recvmsg defers the free of an skb built on another CPU
	// to that CPU (skb_attempt_defer_free, v6.18+).
	DeferUDP bool
	// RawDropUDP is an iptables rule `-t raw -I PREROUTING -p udp -j DROP`:
	// every UDP skb is dropped at ip_rcv's PREROUTING hook.
	RawDropUDP bool
	l4         [2]L4Receiver
	busy       BusyPoll
	busyReads  []*busyRead

	fnRecv, fnIP, fnBuild, fnRaw, fnCsum, fnFree sim.FuncID
	cRecvCall, cRecvPkt                          sim.Time
	cIPCall, cIPPkt                              sim.Time
	cBuild, cRaw                                 sim.Time

	Stats Stats
}

// New returns a stack charging costs, counting sd->processed on softnet
// (indexed by CPU; may be nil in tests), recording packet fates in led.
// release may be nil.
func New(c Costs, funcs *sim.Funcs, softnet []*napi.Softnet, led *pkt.Ledger, release Releaser) *Stack {
	if release == nil {
		release = func(uint16, int) {}
	}
	return &Stack{
		costs: c, softnet: softnet, Led: led, Release: release,
		fnRecv: funcs.ID("netif_receive_skb"), fnIP: funcs.ID("ip_rcv"), fnBuild: funcs.ID("build_skb"),
		fnRaw: funcs.ID("iptables_raw_drop"), fnCsum: funcs.ID("__skb_checksum_complete"),
		fnFree:    funcs.ID("skb_release_data"),
		cRecvCall: ns(c.RecvCall), cRecvPkt: ns(c.RecvPkt),
		cIPCall: ns(c.IPCall), cIPPkt: ns(c.IPPkt), cBuild: ns(c.BuildSkb), cRaw: ns(c.RawDrop),
	}
}

func ns(x float64) sim.Time { return sim.Time(x + 0.5) }

// NeedsCsum reports whether p must be summed in software before its payload
// is trusted: the NIC gave no checksum status (CHECKSUM_NONE: an skb the
// cpumap kthread built from an xdp_frame, not validated by GRO; a frame
// from veth's XDP path) and the datagram carries a checksum.
func NeedsCsum(p *pkt.Packet) bool { return !p.CsumOK && !p.ZeroCsum }

// checksum sums p in software when NeedsCsum (charged to fn, per L4 byte:
// the TCP or UDP header and the payload) and marks it valid (csum_valid);
// it reports whether it summed.
func (s *Stack) checksum(w *sim.Work, fn sim.FuncID, p *pkt.Packet) bool {
	if !NeedsCsum(p) {
		return false
	}
	if l4 := p.Len - gro.EthHLen - gro.IPv4HLen; l4 > 0 {
		w.Add(fn, ns(s.costs.CsumByte*float64(l4)))
	}
	p.CsumOK = true
	return true
}

// freeSkb is the free of a consumed skb of segs RX buffers from queue,
// built on allocCPU, by a reader on cpu: with deferral allowed and another
// allocating CPU, skb_attempt_defer_free queues it on that CPU's defer list
// (freed, and its buffers released, by that CPU's next net_rx_action);
// otherwise (not allowed, the reader's own CPU, or a full list) the reader
// frees it here (skb_release_data). It reports whether it deferred.
func (s *Stack) freeSkb(w *sim.Work, cpu, allocCPU int, queue uint16, segs int, deferOK bool) bool {
	if deferOK && allocCPU != cpu {
		if sn := s.Softnet(allocCPU); sn != nil && sn.DeferFree(w, queue, segs) {
			return true
		}
	}
	w.Add(s.fnFree, ns(s.costs.FreeSkb+s.costs.FreeSeg*float64(segs)))
	s.Release(queue, segs)
	return false
}

// Costs returns the stack's cost items.
func (s *Stack) Costs() Costs { return s.costs }

// Register installs the receive function of proto (ip_local_deliver's
// inet_protos[] table).
func (s *Stack) Register(proto pkt.Proto, r L4Receiver) {
	if int(proto) < len(s.l4) {
		s.l4[proto] = r
	}
}

// Receive is netif_receive_skb(skb) on cpu: the per-call part, the RPS
// hook, then __netif_receive_skb.
func (s *Stack) Receive(w *sim.Work, cpu int, p pkt.Packet) {
	s.Stats.Calls++
	w.Add(s.fnRecv, s.cRecvCall)
	if s.RPS != nil && s.RPS.Steer(w, cpu, p) {
		s.Stats.Steered++
		return
	}
	s.DeliverSkb(w, cpu, p)
}

// ReceiveCore is netif_receive_skb_core(skb) on cpu: the per-call part and
// __netif_receive_skb_core without the RPS hook, as the cpumap kthread
// called it per packet before v5.13.
func (s *Stack) ReceiveCore(w *sim.Work, cpu int, p pkt.Packet) {
	s.Stats.Calls++
	w.Add(s.fnRecv, s.cRecvCall)
	s.DeliverSkb(w, cpu, p)
}

// DeliverSkb is __netif_receive_skb for one skb (no RPS): the core per skb,
// then ip_rcv with its own per-call part. process_backlog uses it.
func (s *Stack) DeliverSkb(w *sim.Work, cpu int, p pkt.Packet) {
	s.core(w, cpu)
	w.Add(s.fnIP, s.cIPCall)
	s.ip(w, cpu, p)
}

// ReceiveList is netif_receive_skb_list_internal on cpu: the per-call part
// once for the list, RPS per skb, __netif_receive_skb_core per remaining
// skb, one ip_list_rcv for them. The gro_normal list and the cpumap kthread
// (v5.13+) use it. skbs is not retained.
func (s *Stack) ReceiveList(w *sim.Work, cpu int, skbs []pkt.Packet) {
	if len(skbs) == 0 {
		return
	}
	s.Stats.Lists++
	w.Add(s.fnRecv, s.cRecvCall)
	ipCalled := false
	for i := range skbs {
		p := skbs[i]
		if s.RPS != nil && s.RPS.Steer(w, cpu, p) {
			s.Stats.Steered++
			continue
		}
		s.core(w, cpu)
		if !ipCalled {
			ipCalled = true
			w.Add(s.fnIP, s.cIPCall)
		}
		s.ip(w, cpu, p)
	}
}

// core is __netif_receive_skb_core's per-skb work and sd->processed++.
func (s *Stack) core(w *sim.Work, cpu int) {
	s.Stats.Skbs++
	w.Add(s.fnRecv, s.cRecvPkt)
	if sn := s.Softnet(cpu); sn != nil {
		sn.Processed++
	}
}

// ip is ip_rcv_core + ip_rcv_finish + ip_local_deliver per skb and the
// protocol demux.
func (s *Stack) ip(w *sim.Work, cpu int, p pkt.Packet) {
	if s.RawDropUDP && p.Proto == pkt.UDP {
		w.Add(s.fnRaw, s.cRaw)
		s.Stats.RawDrops++
		s.Led.Drop(pkt.NFRaw, p.WireSegs())
		s.Release(p.Queue, p.WireSegs())
		return
	}
	w.Add(s.fnIP, s.cIPPkt)
	if int(p.Proto) < len(s.l4) && s.l4[p.Proto] != nil {
		s.l4[p.Proto].Rcv(w, cpu, p)
		return
	}
	s.Stats.NoProto++
	s.Led.Deliver(pkt.ToStack, p.WireSegs())
	s.Release(p.Queue, p.WireSegs())
}

// BuildSkb charges the driver's skb build for one XDP_PASS packet.
func (s *Stack) BuildSkb(w *sim.Work) { w.Add(s.fnBuild, s.cBuild) }

// wakeCosts is sk_data_ready's wake-up of a sleeping reader
// (sock_def_readable), charged to the waker: with the IPI when the reader
// sleeps on another CPU, a local enqueue when it sleeps on the waker's own.
type wakeCosts struct {
	fn, fnLocal sim.FuncID
	c, cLocal   sim.Time
}

func newWakeCosts(funcs *sim.Funcs, remote, local float64) wakeCosts {
	return wakeCosts{fn: funcs.ID("sock_def_readable"), fnLocal: funcs.ID("sock_def_readable_local"),
		c: ns(remote), cLocal: ns(local)}
}

// of returns the function and cost of a wake-up on the reader's own CPU
// (local) or from another one.
func (k wakeCosts) of(local bool) (sim.FuncID, sim.Time) {
	if local {
		return k.fnLocal, k.cLocal
	}
	return k.fn, k.c
}

// Softnet returns CPU i's softnet (nil if the stack has none for it).
func (s *Stack) Softnet(i int) *napi.Softnet {
	if i >= 0 && i < len(s.softnet) {
		return s.softnet[i]
	}
	return nil
}

// cpu returns CPU i of the host (nil if the stack has no softnet for it).
func (s *Stack) cpu(i int) *sim.CPU {
	if sn := s.Softnet(i); sn != nil {
		return sn.CPU()
	}
	return nil
}
