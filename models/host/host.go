package host

import (
	"fmt"
	"sort"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/sim"
)

// Extension is a model added to the host after the first path (cpumap,
// backlog, stack, GRO, TCP): it snapshots its counters at the end of the
// warm-up, reports its section of the Result, and says how many wire
// packets it still holds (for the conservation check).
type Extension interface {
	Snapshot()
	Report(r *Result, seconds float64)
	pkt.Queuer
}

// Host is one simulated receiving host.
type Host struct {
	Spec    *scenarios.Spec
	Profile *hw.Profile
	Eng     *sim.Engine
	Streams sim.Streams
	Funcs   *sim.Funcs
	Acct    *sim.Account
	CPUs    []*sim.CPU
	Softnet []*napi.Softnet
	Queues  []*nic.Queue
	Demux   *nic.Demux
	Source  traffic.Source
	Ledger  pkt.Ledger
	Prog    *xdp.Program
	// OfferedPPS is the traffic source's mean rate.
	OfferedPPS float64
	// Ext are the models added by later layers, in build order.
	Ext []Extension

	napiCosts *napi.Costs
	jitter    *sim.Jitter
	snap      snapshot
}

// Builder adds a layer to a host under construction. Layers run in
// registration order after the first path is built.
type Builder func(h *Host) error

// Build wires a host from spec with the random streams of seed. Extra
// layers (stack, cpumap, ...) are applied in order.
func Build(spec *scenarios.Spec, seed uint64, layers ...Builder) (*Host, error) {
	prof, err := hw.Load(spec.HW, spec.Costs)
	if err != nil {
		return nil, err
	}
	return BuildWith(spec, prof, seed, layers...)
}

// BuildWith is Build with the hw profile given (calibrate runs the same
// scenario with trial costs).
func BuildWith(spec *scenarios.Spec, prof *hw.Profile, seed uint64, layers ...Builder) (*Host, error) {
	if spec.CPUGHz > 0 {
		p, err := prof.AtClock(spec.CPUGHz)
		if err != nil {
			return nil, fmt.Errorf("cpu_ghz: %w", err)
		}
		prof = p
	}
	h := &Host{Spec: spec, Profile: prof, Eng: sim.NewEngine(1024), Streams: sim.NewStreams(seed), Funcs: sim.NewFuncs()}
	h.Acct = sim.NewAccount(spec.CPUs)
	h.Acct.From = sim.Time(spec.Warmup.Nanoseconds())
	h.Acct.To = h.Acct.From + sim.Time(spec.Duration.Nanoseconds())
	h.buildCPUs()
	if err := h.buildTraffic(); err != nil {
		return nil, err
	}
	if err := h.buildXDP(); err != nil {
		return nil, err
	}
	if prof.NIC.Driver != "veth" { // the veth layer (layer_veth.go) builds the device
		h.buildNIC()
	}
	for _, l := range layers {
		if err := l(h); err != nil {
			return nil, err
		}
	}
	if err := h.buildNoise(); err != nil {
		return nil, err
	}
	return h, nil
}

// Cost returns the named cost of the host's profile (panics if missing:
// profiles are validated at load).
func (h *Host) Cost(fn string) hw.Cost { return h.Profile.Must(fn) }

func (h *Host) buildCPUs() {
	s := h.Spec
	h.napiCosts = napi.NewCosts(h.Funcs, h.Cost("net_rx_action").Call, h.Cost("napi_poll").Call,
		h.Cost("napi_complete_done").Call, h.costOr("timer_tick", 0))
	for i := 0; i < s.CPUs; i++ {
		sched := sim.ScaledSched(max(h.Profile.Cores, s.CPUs))
		sched.IRQTime = s.Kernel.IRQTimeAccounting
		sched.EEVDF = s.Kernel.Sched == "eevdf"
		c := sim.NewCPU(i, h.Eng, h.Acct, sched)
		if d := h.costOr("context_switch", 0); d > 0 {
			c.SetSwitchCost(sim.Time(d), h.Funcs.ID("context_switch"))
		}
		// a thread woken on an idle CPU leaves the idle task first (and,
		// in a VM, waits for the host to run the halted vCPU again)
		if d := h.costOr("idle_wake_cost", 0); d > 0 {
			c.SetIdleWakeCost(sim.Time(d), h.Funcs.ID("idle_exit"))
		}
		c.SetIdleWakeLatency(sim.Time(h.costOr("idle_wake_latency", 0)))
		h.CPUs = append(h.CPUs, c)
		sn := napi.NewSoftnet(napi.SoftnetConfig{
			Budget: s.NAPI.Budget, BudgetUsecs: s.NAPI.BudgetUsecs, HZ: s.Kernel.HZ,
			KsoftirqdDefer: s.Kernel.KsoftirqdDefer, Tick: s.Kernel.Tick,
		}, c, h.napiCosts)
		h.Softnet = append(h.Softnet, sn)
	}
}

func (h *Host) costOr(fn string, def float64) float64 {
	if c, err := h.Profile.CostOf(fn); err == nil {
		return c.Call
	}
	return def
}

func (h *Host) buildTraffic() error {
	t := h.Spec.Traffic
	switch t.Kind {
	case "pktgen", "udp":
	case "tcp_stream", "tcp_rr":
		return h.buildTCPTraffic() // layer_tcp.go; TCPLayer builds the rest
	default:
		return fmt.Errorf("host: traffic.kind %q is not built by the first path (needs the TCP layer)", t.Kind)
	}
	rate, _ := scenarios.ParseRate(t.Rate)
	g := traffic.NewPktgen(traffic.PktgenConfig{
		PktSize: t.PktSize, Threads: t.Threads, Burst: t.Burst, Flows: t.Flows,
		RatePPS: rate, ThreadMaxPPS: t.ThreadMaxPPS, Count: t.Count, Jitter: t.Jitter,
		LineGbps: h.Profile.NIC.LineRateGbps.V, Overhead: int(h.Profile.NIC.WireOverhead.V),
		Proto: pkt.UDP, ZeroCsum: t.Kind == "pktgen",
	}, h.Streams.Get("traffic/pktgen"))
	h.Source = g
	h.OfferedPPS = g.OfferedPPS()
	return nil
}

func (h *Host) buildXDP() error {
	x := h.Spec.XDP
	var rule xdp.Rule
	switch x.Program {
	case "none":
		return nil
	case "drop":
		rule = xdp.All{V: xdp.Drop}
	case "pass":
		rule = xdp.All{V: xdp.Pass}
	case "tx":
		rule = xdp.All{V: xdp.TX}
	case "redirect-cpu", "redirect-map":
		rule = xdp.All{V: xdp.Redirect}
	case "rule":
		r, err := h.rule()
		if err != nil {
			return err
		}
		rule = r
	}
	cost := h.Cost("bpf_prog_run_xdp").Pkt
	if x.CostNS > 0 {
		cost = x.CostNS
	}
	h.Prog = xdp.NewProgram(x.Program, rule, cost, h.Funcs)
	if x.Program == "redirect-map" {
		// bpf_redirect_map(&tx_port, 0, 0): the one devmap entry
		h.Prog.CPUs, h.Prog.Select = []int{0}, xdp.NoTouch{}
	}
	if len(x.RedirectCPUs) > 0 {
		h.Prog.CPUs = x.RedirectCPUs
		switch x.ProgramMode {
		case "round-robin":
			h.Prog.Select = &xdp.RoundRobin{N: len(x.RedirectCPUs)}
		case "l4-hash":
			h.Prog.Select = xdp.L4Hash{N: len(x.RedirectCPUs)}
		default:
			h.Prog.Select = xdp.NoTouch{}
		}
	}
	return nil
}

func (h *Host) rule() (xdp.Rule, error) {
	x := h.Spec.XDP
	parse := func(ss []string) ([]xdp.Verdict, error) {
		var vs []xdp.Verdict
		for _, s := range ss {
			v, err := xdp.ParseVerdict(s)
			if err != nil {
				return nil, err
			}
			vs = append(vs, v)
		}
		return vs, nil
	}
	switch x.Rule {
	case "flow":
		vs, err := parse(x.FlowActions)
		if err != nil || len(vs) == 0 {
			return nil, fmt.Errorf("host: xdp.flow_actions: need at least one verdict")
		}
		return xdp.ByFlow{Vs: vs}, nil
	case "fraction":
		vs, err := parse(x.FractionActions)
		if err != nil {
			return nil, err
		}
		return xdp.ByFraction{Fractions: x.Fractions, Vs: vs, Rng: h.Streams.Get("xdp/verdict")}, nil
	}
	v, err := xdp.ParseVerdict(x.Action)
	if err != nil {
		return nil, err
	}
	return xdp.All{V: v}, nil
}

func (h *Host) buildNIC() {
	s := h.Spec
	p := h.Profile.NIC
	var feed nic.Feed = h.Source
	if s.NIC.MaxPPS > 0 {
		feed = nic.NewCapFeed(feed, s.NIC.MaxPPS, &h.Ledger) // NIC-wide, in front of RSS
	}
	h.Demux = nic.NewDemux(feed, s.NIC.Queues)
	costs := nic.Costs{
		IRQ: h.Cost("irq_handler").Call, RxCall: h.Cost("driver_rx").Call, RxPkt: h.Cost("driver_rx").Pkt,
		RefillCall: h.Cost("driver_refill").Call, RefillPk: h.Cost("driver_refill").Pkt,
		PageAlloc: h.costPkt("page_alloc"),
	}
	xc := xdp.Costs{
		ReturnFrame: h.Cost("xdp_return_frame").Pkt, TxPkt: h.Cost("xdp_tx").Pkt, TxCall: h.Cost("xdp_tx").Call,
		Redirect: h.Cost("xdp_do_redirect").Pkt, Flush: h.Cost("xdp_do_flush").Call,
	}
	refill := int(p.RefillBatch.V)
	if refill == 0 {
		refill = s.NIC.RingSize / 2
	}
	// XDP_TX leaves by the device's own wire, from one XDP TX ring per queue
	wire := xdp.NewWire(p.LineRateGbps.V * 1e9 / 8 / float64(max(s.Traffic.PktSize, 1)+int(p.WireOverhead.V)))
	for i := 0; i < s.NIC.Queues; i++ {
		cpu := s.NIC.IRQAffinity[i%len(s.NIC.IRQAffinity)]
		pollCPU := cpu // where the driver poll and XDP run: the IRQ CPU, or the NAPI thread's
		if s.NAPI.Threaded && len(s.NAPI.ThreadCPUs) > 0 {
			pollCPU = s.NAPI.ThreadCPUs[i%len(s.NAPI.ThreadCPUs)]
		}
		ring := nic.NewRxRing(s.NIC.RingSize, h.Demux.Feed(i), &h.Ledger, 0)
		hook := xdp.NewHook(h.Prog, pollCPU, xc, &h.Ledger, h.Funcs)
		if h.Prog != nil {
			hook.Tx, hook.Release = xdp.NewTxRing(s.NIC.RingSize, wire), h.release
			hook.Tx.SetClean(h.Eng, h.release)
		}
		itr := nic.NewITR(p.Driver, s.NIC.AdaptiveITR, s.NIC.ITRUsecs, p.LineRateGbps.V)
		qc := nic.QueueConfig{Index: i, Driver: p.Driver, RefillBatch: refill, ITR: itr, IRQJitter: s.Noise.IRQJitter}
		if s.Noise.IRQJitter > 0 {
			qc.IRQRand = h.Streams.Get(fmt.Sprintf("irq-jitter/q%d", i))
		}
		q := nic.NewQueue(qc, ring, hook, h.CPUs[cpu], costs, h.Funcs)
		q.NAPI = napi.New(napi.Config{
			Name: fmt.Sprintf("%s-rx-%d", p.Driver, i), Weight: s.NAPI.Weight,
			GROFlushTimeout: sim.Time(s.NAPI.GROFlushTimeout.Nanoseconds()), DeferHardIRQs: s.NAPI.DeferHardIRQs,
			TimerJitter: h.timerJitter(),
		}, q, h.Softnet[cpu])
		if s.NAPI.Threaded {
			q.NAPI.SetThreaded(h.CPUs[pollCPU])
		}
		h.Queues = append(h.Queues, q)
	}
}

func (h *Host) costPkt(fn string) float64 {
	if c, err := h.Profile.CostOf(fn); err == nil {
		return c.Pkt
	}
	return 0
}

// queued returns the wire packets held anywhere in the host.
func (h *Host) queued() int {
	n := 0 // packets buffered in the RSS demux are not offered yet (the ring counts them)
	for _, q := range h.Queues {
		n += q.Ring.Queued()
	}
	for _, e := range h.Ext {
		n += e.Queued()
	}
	return n
}

// Run simulates the warm-up and the measured interval and returns the result.
func (h *Host) Run() *Result {
	warm := sim.Time(h.Spec.Warmup.Nanoseconds())
	end := warm + sim.Time(h.Spec.Duration.Nanoseconds())
	for _, q := range h.Queues {
		q.Start()
	}
	h.Eng.Run(warm)
	h.takeSnapshot()
	for _, e := range h.Ext {
		e.Snapshot()
	}
	h.Eng.Run(end)
	// Pull the arrivals up to the end into the rings, so that offered counts
	// what reached the NIC during the run.
	for _, q := range h.Queues {
		q.Ring.Advance(end)
	}
	// a step suspended at the end (sim.Work.Yield) delivers what it holds
	for _, c := range h.CPUs {
		c.Finish()
		c.Close()
	}
	return h.result(end - warm)
}

// Names returns the sorted keys of m.
func Names[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
