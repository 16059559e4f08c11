package host

import (
	"fmt"

	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/sim"
)

// buildTCPTraffic is buildTraffic for traffic.kind tcp_stream and tcp_rr:
// the wire towards the host, whose push feed the NIC reads. The senders
// and the receive side are built by TCPLayer once the NIC exists.
func (h *Host) buildTCPTraffic() error {
	t := h.Spec.Traffic
	nic := h.Profile.NIC
	n := t.Streams
	if t.Kind == "tcp_rr" {
		n = t.Flows
	}
	// Room for every flow's window in flight before the queue grows.
	capacity := n*(h.Spec.Stack.Rcvbuf/2048+2) + 64
	w := traffic.NewWire(nic.LineRateGbps.V, int(nic.WireOverhead.V), sim.Time(t.WireDelay.Nanoseconds()), min(capacity, 1<<20))
	h.Source = w
	if t.Kind == "tcp_stream" {
		h.OfferedPPS = traffic.LinePPS(t.MSS+traffic.TCPFrameOverhead, int(nic.WireOverhead.V), nic.LineRateGbps.V)
		if pace, _ := scenarios.ParseRate(t.Rate); pace > 0 {
			h.OfferedPPS = min(h.OfferedPPS, pace)
		}
	}
	return nil
}

// TCPExt is the TCP layer of a host: the remote senders, the host's TCP
// receive side and the GRO nodes of the queues it built.
type TCPExt struct {
	h      *Host
	Wire   *traffic.Wire
	Rev    *traffic.Link
	Stream *traffic.TCPStream
	RR     *traffic.TCPRR
	TCP    *stack.TCP
	Stack  *stack.Stack
	// GRO are the GRO nodes whose counters the report sums (the NAPI GRO
	// nodes of the RX queues, and any registered with AddGRO).
	GRO  []*gro.Engine
	Hist stack.Histogram

	snap tcpSnap
}

var _ Extension = (*TCPExt)(nil)

// TCPLayer builds the TCP traffic's remote senders and the host's TCP
// receive side: tcp_v4_rcv registered in the host's stack, one socket and
// reading thread per flow. The stack layer must have run: it owns the
// XDP_PASS path (build_skb, the NAPI GRO nodes) and the cpumap. For other
// traffic it does nothing.
func TCPLayer(h *Host) error {
	w, ok := h.Source.(*traffic.Wire)
	if !ok {
		return nil
	}
	s := h.Spec
	x := &TCPExt{h: h, Wire: w, Rev: traffic.NewLink(h.Profile.NIC.LineRateGbps.V, int(h.Profile.NIC.WireOverhead.V), sim.Time(s.Traffic.WireDelay.Nanoseconds()))}
	x.Stack = h.IPStack()
	if x.Stack == nil {
		return fmt.Errorf("host: traffic.kind %s needs the stack layer (StackLayer before TCPLayer)", s.Traffic.Kind)
	}
	if err := h.need("tcp", "tcp_v4_rcv", "tcp_v4_do_rcv", "tcp_add_backlog", "tcp_send_ack", "tcp_recvmsg", "skb_release_data", "_copy_to_iter", "tcp_sendmsg", "sock_def_readable", "sock_def_readable_local", "sock_def_readable_woken", "tcp_data_queue_ofo"); err != nil {
		return err
	}
	if err := h.enableDefer(); err != nil {
		return err
	}
	x.collectGRO()
	// every tcp_v4_rcv starts a CPU step (sim.Work.Yield), so that whether
	// the reader owns the socket is judged at that time on any CPU
	for _, c := range h.CPUs {
		c.SetYield(true)
	}
	if err := x.buildTCP(); err != nil {
		return err
	}
	// a segment pushed now arrives no sooner than the wire's delay: a busy
	// poller may spin that far ahead of the ring's known arrivals
	for _, q := range h.Queues {
		q.PushLead = sim.Time(s.Traffic.WireDelay.Nanoseconds())
	}
	w.OnPush = func(hash uint32, wasEmpty bool) {
		if wasEmpty || len(h.Queues) > 1 {
			h.Queues[h.Demux.QueueOf(hash)].Kick()
		}
	}
	h.Ext = append(h.Ext, x)
	if x.Stream != nil {
		x.Stream.Start()
	} else {
		x.RR.Start()
	}
	return nil
}

// AddGRO registers a GRO node (e.g. a cpumap entry's) for the gro report.
func (x *TCPExt) AddGRO(e *gro.Engine) { x.GRO = append(x.GRO, e) }

// collectGRO finds the GRO nodes: the NAPI GRO nodes of the RX queues and
// those of the cpumap entries (gro and napi delivery).
func (x *TCPExt) collectGRO() {
	for _, q := range x.h.Queues {
		if g, ok := q.NAPI.GRO.(*stack.NAPIGRO); ok {
			x.GRO = append(x.GRO, g.E)
		}
	}
	for _, e := range x.h.Ext {
		if c, ok := e.(*CpumapExt); ok {
			for _, en := range c.Map.Entries() {
				if en.GRO != nil {
					x.GRO = append(x.GRO, en.GRO)
				}
			}
		}
	}
}

// enableDefer turns on skb_attempt_defer_free towards every CPU with
// stack.skb_defer_max (the costs are needed only when it is on).
func (h *Host) enableDefer() error {
	max := h.Spec.Stack.SkbDeferMax
	if max <= 0 {
		return nil
	}
	if err := h.need("skb_defer_max", "skb_attempt_defer_free", "skb_release_data", "net_rps_send_ipi", "ipi_handler"); err != nil {
		return err
	}
	c := napi.DeferCosts{Push: h.Cost("skb_attempt_defer_free").Call, FreeSkb: h.Cost("skb_release_data").Call, FreeSeg: h.Cost("skb_release_data").Pkt,
		IPISend: h.Cost("net_rps_send_ipi").Call, IPIHandler: h.Cost("ipi_handler").Call}
	if f, err := h.Profile.CostOf("skb_defer_free_flush"); err == nil {
		c.Flush = f.Call
	}
	for _, sn := range h.Softnet {
		sn.EnableDefer(max, c, h.Funcs, h.release)
	}
	return nil
}

func (h *Host) tcpCosts() stack.TCPCosts {
	return stack.TCPCosts{
		RcvSkb: h.Cost("tcp_v4_rcv").Call, DoRcvSkb: h.Cost("tcp_v4_do_rcv").Call, DoRcvSeg: h.Cost("tcp_v4_do_rcv").Pkt,
		AddBacklog: h.Cost("tcp_add_backlog").Call, OfoQueue: h.Cost("tcp_data_queue_ofo").Call,
		SendAck:  h.Cost("tcp_send_ack").Call,
		RecvCall: h.Cost("tcp_recvmsg").Call, RecvSkb: h.Cost("tcp_recvmsg").Pkt,
		CopyByte: h.Cost("_copy_to_iter").Byte,
		SendCall: h.Cost("tcp_sendmsg").Call, SendByte: h.Cost("tcp_sendmsg").Byte,
		Wake: h.Cost("sock_def_readable").Call, WakeLocal: h.Cost("sock_def_readable_local").Call,
		WakeQueued: h.Cost("sock_def_readable_woken").Call,
	}
}

// buildTCP builds the senders, tcp_v4_rcv and the sockets with their
// application threads.
func (x *TCPExt) buildTCP() error {
	h := x.h
	s := h.Spec
	t := s.Traffic
	csum := h.Profile.NIC.Checksum
	cfg := stack.TCPConfig{Rcvbuf: s.Stack.Rcvbuf, MSS: t.MSS, TimerJitter: h.timerJitter(),
		RmemMax: s.Stack.TCPRmemMax, Locked: s.RcvbufSet() || !s.Stack.TCPModerateRcvbuf}
	var flows []uint32
	var peer stack.TCPPeer
	if t.Kind == "tcp_rr" {
		cfg.ReqSize, cfg.RespSize = t.ReqSize, t.RespSize
		x.RR = traffic.NewTCPRR(traffic.TCPRRConfig{Flows: t.Flows, ReqSize: t.ReqSize, RespSize: t.RespSize, MSS: t.MSS,
			RemoteDelay: sim.Time(t.RemoteDelay.Nanoseconds()), CsumOK: csum}, x.Wire, x.Rev)
		warm := sim.Time(s.Warmup.Nanoseconds())
		x.RR.Record = func(lat, at sim.Time) {
			if at >= warm {
				x.Hist.Record(lat)
			}
		}
		flows, peer = x.RR.Flows(), x.RR
	} else {
		pace, _ := scenarios.ParseRate(t.Rate) // "line" = 0: no pacing
		x.Stream = traffic.NewTCPStream(traffic.TCPStreamConfig{Streams: t.Streams, MSS: t.MSS, TSOBytes: t.TSOBytes,
			PSH: t.PSH, CsumOK: csum, PacingPPS: pace}, x.Wire, x.Rev, h.Eng)
		flows, peer = x.Stream.Flows(), x.Stream
		x.Wire.Stamp = x.Stream.Stamp
	}
	x.TCP = stack.NewTCP(x.Stack, cfg, h.tcpCosts(), h.Funcs, peer, h.Eng)
	if x.Stream != nil {
		x.Stream.SetInitWindow(x.TCP.InitialWindow())
	}
	cpus := h.appCPUs()
	for i, f := range flows {
		x.TCP.Listen(f, h.CPUs[cpus[i%len(cpus)]])
	}
	return nil
}

// appCPUs returns app.cpus, or by default the first CPU that takes no RX
// interrupt (CPU 0 if all do).
func (h *Host) appCPUs() []int {
	if len(h.Spec.App.CPUs) > 0 {
		return h.Spec.App.CPUs
	}
	irq := map[int]bool{}
	for _, c := range h.Spec.NIC.IRQAffinity {
		irq[c] = true
	}
	for c := 0; c < h.Spec.CPUs; c++ {
		if !irq[c] {
			return []int{c}
		}
	}
	return []int{0}
}
