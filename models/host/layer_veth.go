package host

import (
	"fmt"

	"github.com/rxsim/rxsim/models/backlog"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/stack"

	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// VethLayer builds the veth device of hw = "veth" (validate's harness): the
// receiving end's RX queue with its NAPI and XDP hook, and the local
// generator thread on traffic.gen_cpu that sends into the peer, and the
// load of other processes of noise.background (the validation machine is
// shared; that load shows as user time on the CPU the path leaves idle). The NAPI is
// on the generator CPU's softnet (it runs in softirq on the transmitting
// CPU), or in a kthread on napi.thread_cpus[0] when threaded. For other
// devices it does nothing.
func VethLayer(h *Host) error {
	if h.Profile.NIC.Driver != "veth" {
		return nil
	}
	s := h.Spec
	kind, err := traffic.ParseGenKind(s.Traffic.Generator)
	if err != nil {
		return err
	}
	vc, gc, err := h.vethCosts(kind)
	if err != nil {
		return err
	}
	gcpu := s.Traffic.GenCPU
	rxcpu := gcpu
	if s.NAPI.Threaded && len(s.NAPI.ThreadCPUs) > 0 {
		rxcpu = s.NAPI.ThreadCPUs[0]
	}
	hook := xdp.NewHook(h.Prog, rxcpu, h.xdpCosts(), &h.Ledger, h.Funcs)
	rq := nic.NewVethRQ(s.NIC.RingSize, hook, &h.Ledger, vc, h.Funcs)
	rq.NAPI = napi.New(napi.Config{Name: "veth-rx-0", Weight: s.NAPI.Weight,
		GROFlushTimeout: sim.Time(s.NAPI.GROFlushTimeout.Nanoseconds()), DeferHardIRQs: s.NAPI.DeferHardIRQs,
		TimerJitter: h.timerJitter(),
	}, rq, h.Softnet[gcpu])
	if s.NAPI.Threaded {
		rq.NAPI.SetThreaded(h.CPUs[rxcpu])
	}
	g := traffic.NewGen(traffic.GenConfig{Kind: kind, PktSize: s.Traffic.PktSize, Flows: s.Traffic.Flows, Count: s.Traffic.Count},
		gc, rq, gcpu, &h.Ledger, h.Funcs)
	th := h.CPUs[gcpu].NewThread("gen/"+kind.String(), "app", g)
	v := &VethExt{h: h, RQ: rq, Gen: g, Thread: th}
	h.Ext = append(h.Ext, v)
	if err := h.vethStack(rq, rxcpu); err != nil {
		return err
	}
	// veth_poll's re-check of the ring must see what the sender produced
	// while the poll ran: each step may yield there
	for _, c := range h.CPUs {
		c.SetYield(true)
	}
	h.CPUs[gcpu].Wake(th)
	for i, d := range s.Noise.Background {
		if d > 0 {
			v.Background = append(v.Background, traffic.NewBackground(h.CPUs[i], d, h.Funcs))
		}
	}
	return nil
}

func (h *Host) xdpCosts() xdp.Costs {
	return xdp.Costs{
		ReturnFrame: h.Cost("xdp_return_frame").Pkt, TxPkt: h.Cost("xdp_tx").Pkt, TxCall: h.Cost("xdp_tx").Call,
		Redirect: h.Cost("xdp_do_redirect").Pkt, Flush: h.Cost("xdp_do_flush").Call,
	}
}

// vethCostNames are the costs the veth layer needs beyond hw.RequiredCosts.
var vethCostNames = []string{
	"veth_xmit", "veth_xmit_remote", "veth_xdp_xmit", "veth_poll", "veth_poll_remote", "veth_convert_skb_to_xdp_buff",
	"kfree_skb", "veth_xdp_rcv_bulk_skb", "wake_up_process", "idle_wake_latency", "idle_wake_cost",
}

var genCostNames = [...]string{"bpf_test_run_xdp_live", "packet_sendmmsg", "udp_sendmmsg"}

func (h *Host) vethCosts(kind traffic.GenKind) (nic.VethCosts, traffic.GenCosts, error) {
	for _, n := range append(vethCostNames, genCostNames[kind]) {
		if _, err := h.Profile.CostOf(n); err != nil {
			return nic.VethCosts{}, traffic.GenCosts{}, fmt.Errorf("host: veth: %w", err)
		}
	}
	c := h.Cost
	vc := nic.VethCosts{
		XmitPkt: c("veth_xmit").Pkt, XmitRemote: c("veth_xmit_remote").Pkt, XdpXmitCall: c("veth_xdp_xmit").Call, XdpXmitPkt: c("veth_xdp_xmit").Pkt,
		PollCall: c("veth_poll").Call, PollPkt: c("veth_poll").Pkt, RemotePkt: c("veth_poll_remote").Pkt,
		ConvertPkt: c("veth_convert_skb_to_xdp_buff").Pkt, ConvertByte: c("veth_convert_skb_to_xdp_buff").Byte,
		SkbFree: c("kfree_skb").Pkt, BulkSkbCall: c("veth_xdp_rcv_bulk_skb").Call, BulkSkbPkt: c("veth_xdp_rcv_bulk_skb").Pkt,
		Wake: c("wake_up_process").Call,
	}
	g := c(genCostNames[kind])
	return vc, traffic.GenCosts{Call: g.Call, Pkt: g.Pkt, Byte: g.Byte}, nil
}

// VethExt is the veth device and its generator as a host Extension: it
// reports the receive rate (packets veth_poll consumed), polls and per-CPU
// receive, and a "veth" section in Result.Extra.
type VethExt struct {
	h      *Host
	RQ     *nic.VethRQ
	Gen    *traffic.Gen
	Thread *sim.Thread
	// Background is the load of other processes (noise.background).
	Background []*traffic.Background
	snap       vethCounters
}

var _ Extension = (*VethExt)(nil)

type vethCounters struct {
	pkts, polls, sent, ringFull, wakes, calls uint64
}

func (v *VethExt) counters() vethCounters {
	return vethCounters{pkts: v.RQ.Packets, polls: v.RQ.Polls, sent: v.Gen.Sent, ringFull: v.RQ.RingFull,
		wakes: v.RQ.Wakes, calls: v.Gen.Calls}
}

// Snapshot implements Extension.
func (v *VethExt) Snapshot() { v.snap = v.counters() }

// Queued implements Extension: entries in the veth ring and the PASS bulk.
func (v *VethExt) Queued() int { return v.RQ.Queued() }

// Report implements Extension.
func (v *VethExt) Report(r *Result, secs float64) {
	now, old := v.counters(), v.snap
	rate := func(a, b uint64) float64 { return float64(a-b) / secs }
	r.OfferedPPS = rate(now.sent, old.sent)
	r.RxPPS = rate(now.pkts, old.pkts)
	r.PollsPerSec = rate(now.polls, old.polls)
	r.PktsPerPoll = 0
	if now.polls > old.polls {
		r.PktsPerPoll = float64(now.pkts-old.pkts) / float64(now.polls-old.polls)
	}
	for i := range r.PerCPURx {
		r.PerCPURx[i] = 0
	}
	if c := v.RQ.ConsumerCPU(); c < len(r.PerCPURx) {
		r.PerCPURx[c] = r.RxPPS
	}
	if r.Extra == nil {
		r.Extra = map[string]any{}
	}
	r.Extra["veth"] = map[string]any{
		"generator":          v.Gen.String(),
		"sent_pps":           r.OfferedPPS,
		"ring_full_pps":      rate(now.ringFull, old.ringFull),
		"napi_wakes_per_sec": rate(now.wakes, old.wakes),
		"gen_calls_per_sec":  rate(now.calls, old.calls),
		"consumer_cpu":       v.RQ.ConsumerCPU(),
		"napi_threaded":      v.RQ.NAPI.Thread() != nil,
		"generator_cpu":      v.h.Spec.Traffic.GenCPU,
	}
}

// vethStack builds the path above veth_poll as StackLayer does for NIC
// queues: the stack with UDP, its sockets and readers, the backlogs, the
// receiving device's GRO node (veth skbs need no build_skb: socket skbs
// exist, and XDP_PASS frames are built by veth_xdp_rcv_bulk_skb), and the
// cpumap for redirect-cpu.
func (h *Host) vethStack(rq *nic.VethRQ, rxcpu int) error {
	s := h.Spec
	sc, err := h.stackCosts()
	if err != nil {
		return err
	}
	bc, err := h.backlogCosts()
	if err != nil {
		return err
	}
	gc, err := h.groCosts()
	if err != nil {
		return err
	}
	x := &StackExt{h: h}
	x.Stack = stack.New(sc, h.Funcs, h.Softnet, &h.Ledger, h.release)
	if err := h.udpDefer(x.Stack); err != nil {
		return err
	}
	x.UDP = stack.NewUDP(x.Stack, h.Funcs)
	x.Backlog = backlog.New(backlog.Config{MaxBacklog: s.Backlog.MaxBacklog, DevWeight: s.Backlog.DevWeight,
		RPSCPUs: s.Backlog.RPSCPUs, Threads: s.Backlog.Threads}, bc, h.Funcs, h.Softnet, x.Stack, &h.Ledger,
		backlog.Releaser(h.release))
	if x.Backlog.RPS() {
		x.Stack.RPS = x.Backlog
	}
	if err := h.busyPoll(x.Stack, []*napi.NAPI{rq.NAPI}); err != nil {
		return err
	}
	h.buildSockets(x)
	jiffy := sim.Second / sim.Time(s.Kernel.HZ)
	d := stack.NewDriverRx(x.Stack, rxcpu, h.groConfig(), gc, h.Funcs)
	rq.Stack = vethGRO{d}
	rq.NAPI.GRO = &stack.NAPIGRO{E: d.GRO, Jiffy: jiffy}
	followPollCPU(rq.NAPI, d, rq.Hook)
	x.Drivers = append(x.Drivers, d)
	h.Ext = append(h.Ext, x)
	if s.XDP.Program != "redirect-cpu" {
		return nil
	}
	if err := h.buildCpumap(x, gc, jiffy); err != nil {
		return err
	}
	if m, ok := h.Ext[len(h.Ext)-1].(*CpumapExt); ok {
		rq.Hook.Redir = m.Map
	}
	return nil
}

// vethGRO is napi_gro_receive for veth skbs (no driver skb build): the
// skbs are built by veth_xdp_rcv_bulk_skb on the CPU that polls the NAPI
// (the skb path's CPU).
type vethGRO struct {
	d *stack.DriverRx
}

var _ xdp.Stack = vethGRO{}

// Receive implements xdp.Stack.
func (g vethGRO) Receive(w *sim.Work, p pkt.Packet) {
	p.AllocCPU = uint16(g.d.CPU())
	g.d.GRO.Receive(w, p)
}
