package calibrate

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/optimize"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/validate"
)

// Target is one measured configuration: a validation configuration run
// with one generator.
type Target struct {
	// Name is "config/generator" for rx_pps, e.g. "veth-xdp-drop/afpacket",
	// and "config/generator:metric" for the other metrics.
	Name   string
	Config string
	Gen    string
	// Metric is rx_pps (XDP receive), kthread_pps (cpumap kthread) or
	// delivered_pps (read by the listener).
	Metric string
	// Measured is the median of the metric over the measurement results.
	Measured float64
	// Spread is the relative range of the per-repetition medians (0 if
	// unknown); RepMin and RepMax are the smallest and largest of them.
	Spread, RepMin, RepMax float64
	// Background is, per CPU, the user-time share of other processes
	// measured in the run (see Targets); it becomes noise.background.
	Background []float64
	// N is the number of results merged.
	N int
	// Kernel is the measured kernel's build configuration (nil: not
	// recorded); Run warns where the scenario's [kernel] differs.
	Kernel *validate.KernelConfig
}

// Targets returns the targets of the measurement sets, sorted by name;
// several results of one configuration and generator are merged by their
// median.
func Targets(sets []*validate.MeasurementSet) []Target {
	by := map[string][]*validate.Result{}
	for _, s := range sets {
		for _, r := range s.Results {
			if r == nil || r.RxPPS <= 0 {
				continue
			}
			// Scenario is the configuration, or "config/generator".
			cfg, gen, _ := strings.Cut(r.Scenario, "/")
			if r.Settings.Gen.Kind != "" {
				gen = string(r.Settings.Gen.Kind)
			}
			k := cfg + "/" + gen
			by[k] = append(by[k], r)
		}
	}
	var out []Target
	for _, k := range host.Names(by) {
		rs := by[k]
		cfg, gen, _ := strings.Cut(k, "/")
		for _, m := range Metrics {
			var vs, sp, lo, hi []float64
			for _, r := range rs {
				if v := metricOf(r, m); v > 0 {
					vs = append(vs, v)
				}
				if s, ok := r.Spread[m]; ok {
					sp = append(sp, s.RelRange)
					lo = append(lo, s.RepMin)
					hi = append(hi, s.RepMax)
				}
			}
			if len(vs) == 0 {
				continue
			}
			name := k
			if m != "rx_pps" {
				name += ":" + m
			}
			out = append(out, Target{Name: name, Config: cfg, Gen: gen, Metric: m, Measured: median(vs), Spread: median(sp),
				RepMin: median(lo), RepMax: median(hi), N: len(vs), Background: background(rs), Kernel: kernelOf(rs)})
		}
	}
	return out
}

// kernelOf is the kernel configuration recorded with the results (the
// first one that has it).
func kernelOf(rs []*validate.Result) *validate.KernelConfig {
	for _, r := range rs {
		if r.Machine.KernelConfig != nil {
			return r.Machine.KernelConfig
		}
	}
	return nil
}

// kernelMismatch names the [kernel] settings of scenario sp that differ
// from the measured kernel's configuration kc.
func kernelMismatch(sp *scenarios.Spec, kc *validate.KernelConfig) []string {
	if kc == nil {
		return nil
	}
	var out []string
	if sp.Kernel.HZ != kc.HZ {
		out = append(out, fmt.Sprintf("kernel.hz = %d, the measured kernel has CONFIG_HZ=%d", sp.Kernel.HZ, kc.HZ))
	}
	if sp.Kernel.IRQTimeAccounting != kc.IRQTimeAccounting {
		out = append(out, fmt.Sprintf("kernel.irq_time_accounting = %v, the measured kernel has %s",
			sp.Kernel.IRQTimeAccounting, map[bool]string{true: "CONFIG_IRQ_TIME_ACCOUNTING=y", false: "CONFIG_IRQ_TIME_ACCOUNTING not set"}[kc.IRQTimeAccounting]))
	}
	return out
}

// background is the measured load of other processes per CPU: the user
// share (/proc/stat) of each CPU other than the generator's, in runs
// without a listener (the model has no user-space work there; a
// listener's own user time cannot be told apart, so such runs get none).
func background(rs []*validate.Result) []float64 {
	var out []float64
	for _, r := range rs {
		if r.Settings.Listener {
			return nil
		}
	}
	for cpu := 0; ; cpu++ {
		var vs []float64
		for _, r := range rs {
			if v, ok := r.Median[fmt.Sprintf("cpu%d.user", cpu)]; ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			break
		}
		v := median(vs)
		if cpu == rs[0].Settings.Gen.CPU {
			v = 0
		}
		out = append(out, min(max(v, 0), 0.95))
	}
	return out
}

// Metrics are the fitted metrics, in table order.
var Metrics = []string{"rx_pps", "kthread_pps", "delivered_pps"}

func metricOf(r *validate.Result, m string) float64 {
	switch m {
	case "rx_pps":
		return r.RxPPS
	case "kthread_pps":
		if r.CPUMap != nil {
			return r.CPUMap.KthreadPPS
		}
	case "delivered_pps":
		if r.Settings.Listener {
			return r.DeliveredPPS
		}
	}
	return 0
}

func simMetric(r *host.Result, m string) float64 {
	switch m {
	case "kthread_pps":
		if r.Cpumap != nil {
			return r.Cpumap.KthreadPPS
		}
		return 0
	case "delivered_pps":
		return r.DeliveredPPS
	}
	return r.RxPPS
}

// Run returns the target's run name (config/generator).
func (t Target) Run() string { return t.Config + "/" + t.Gen }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Stage is a group of costs scaled by one fitted factor.
type Stage struct {
	Name  string
	Costs []string
	Doc   string
	// Free stages carry no ridge (the machine factor).
	Free bool
	// Delay stages hold latencies, not CPU costs: the machine factor
	// leaves them out.
	Delay bool
}

// machineStage scales every cost of the identified stages by one factor:
// how much faster or slower the machine ran than the prior assumed (a VM
// shares its host; validate-notes "slow mode"). The stage factors are then
// relative to it, and the ridge pulls them, not the machine factor, to 1.
func machineStage(active []Stage) Stage {
	seen := map[string]bool{}
	var cs []string
	for _, s := range active {
		if s.Delay {
			continue
		}
		for _, c := range s.Costs {
			if !seen[c] {
				seen[c] = true
				cs = append(cs, c)
			}
		}
	}
	return Stage{Name: "machine", Costs: cs, Doc: "all costs of the identified stages", Free: true}
}

// Stages returns the stages of the veth path, in fit order.
func Stages() []Stage {
	return []Stage{
		{Name: "gen_live", Costs: []string{"bpf_test_run_xdp_live", "veth_xdp_xmit"}, Doc: "live-frames generator: test-run batch, redirect program, ndo_xdp_xmit into the veth ring"},
		{Name: "gen_afpacket", Costs: []string{"packet_sendmmsg"}, Doc: "AF_PACKET sendmmsg: syscall and packet_snd per message"},
		{Name: "gen_udp", Costs: []string{"udp_sendmmsg"}, Doc: "UDP sendmmsg: syscall and udp_sendmsg/ip_output per message"},
		{Name: "veth_xmit", Costs: []string{"veth_xmit"}, Doc: "veth_xmit per socket skb (ptr_ring produce, __veth_xdp_flush)"},
		{Name: "napi", Costs: []string{"net_rx_action", "napi_poll", "napi_complete_done"}, Doc: "per-poll softirq and NAPI overhead"},
		{Name: "veth_rx", Costs: []string{"veth_poll", "bpf_prog_run_xdp", "xdp_return_frame"}, Doc: "veth_poll per entry: consume, XDP program, drop recycle"},
		{Name: "skb_to_xdp", Costs: []string{"veth_convert_skb_to_xdp_buff", "kfree_skb"}, Doc: "copy of a socket skb into an xdp_buff and its free"},
		{Name: "remote_consume", Costs: []string{"veth_poll_remote"}, Doc: "consuming entries produced on the other CPU (threaded NAPI)"},
		{Name: "remote_produce", Costs: []string{"veth_xmit_remote"}, Doc: "producing for a consumer on the other CPU: the ring's and the freed skbs' lines bounce"},
		{Name: "wake_remote", Costs: []string{"wake_up_process", "sock_def_readable", "net_rps_send_ipi"}, Doc: "waking a thread on the other vCPU (an IPI, a VM exit): kthreads and the reader"},
		{Name: "idle_exit", Costs: []string{"idle_wake_cost"}, Doc: "CPU time a thread woken on an idle vCPU pays before it runs"},
		{Name: "wake_latency", Costs: []string{"idle_wake_latency"}, Doc: "delay from a wake-up on an idle vCPU to the thread running", Delay: true},
		{Name: "xdp_pass_skb", Costs: []string{"veth_xdp_rcv_bulk_skb"}, Doc: "XDP_PASS frames built into skbs in bulks of 16"},
		{Name: "stack", Costs: []string{"netif_receive_skb", "ip_rcv", "udp_rcv", "udp_noport", "dev_gro_receive"}, Doc: "IP/UDP receive per skb (models/stack)"},
		{Name: "socket", Costs: []string{"udp_queue_rcv_skb"}, Doc: "socket enqueue"},
		{Name: "app", Costs: []string{"recvmsg"}, Doc: "the reading application's recvfrom"},
		{Name: "cpumap_enqueue", Costs: []string{"xdp_do_redirect", "bq_flush_to_queue", "xdp_do_flush"}, Doc: "redirect into the cpumap on the RX CPU"},
		{Name: "cpumap_kthread", Costs: []string{"cpu_map_kthread_run", "kmem_cache_alloc_bulk", "__xdp_build_skb_from_frame"}, Doc: "cpumap kthread: dequeue, skb allocation and build"},
	}
}

// Options configure a fit.
type Options struct {
	Targets []Target
	// Holdout names targets left out of the fit.
	Holdout map[string]bool
	// Stages restricts the stages considered (nil: all of Stages()).
	Stages []string
	// MaxEvals bounds the objective evaluations (0: 400).
	MaxEvals int
	// Ridge is the weight of the prior on the log scales (0: 1e-3).
	Ridge float64
	// MinSim and MaxSim bound each target's simulated interval; PktsPerSim
	// sets it from the measured rate (0: 1 ms, 10 ms, 20000).
	MinSim, MaxSim time.Duration
	PktsPerSim     float64
	// Metrics restricts the fitted metrics (nil: all); targets of other
	// metrics are reported as held out.
	Metrics []string
	// Background runs each target with the measured load of other
	// processes (noise.background; off by default: on the committed
	// measurement set it made the fit worse, see the README).
	Background bool
	// NoMachine leaves out the machine factor (see machineStage).
	NoMachine bool
	// Seed of every simulation (0: 1).
	Seed uint64
	// Log receives progress lines (nil: none).
	Log func(format string, a ...any)
}

func (o *Options) defaults() {
	if o.MaxEvals <= 0 {
		o.MaxEvals = 400
	}
	if o.Ridge <= 0 {
		o.Ridge = 1e-3
	}
	if o.MinSim <= 0 {
		o.MinSim = time.Millisecond
	}
	if o.MaxSim <= 0 {
		o.MaxSim = 10 * time.Millisecond
	}
	if o.PktsPerSim <= 0 {
		o.PktsPerSim = 20000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// Scale bounds of a stage (the fit stays within a factor 10 of the prior).
const (
	minScale = 0.1
	maxScale = 10
)

// Row is one line of the calibration table.
type Row struct {
	Name     string
	Measured float64
	// Spread, RepMin, RepMax describe the repetitions (see Target).
	Spread, RepMin, RepMax float64
	Before                 float64
	After                  float64
	InFit                  bool
}

// ErrPct is the error after the fit in percent of the measured rate.
func (r Row) ErrPct() float64 { return (r.After - r.Measured) / r.Measured * 100 }

// InRange reports whether the simulated rate after the fit lies within
// the range of the measured per-repetition medians.
func (r Row) InRange() bool { return r.RepMax > 0 && r.After >= r.RepMin && r.After <= r.RepMax }

// ErrBeforePct is the error before the fit.
func (r Row) ErrBeforePct() float64 { return (r.Before - r.Measured) / r.Measured * 100 }

// Fitted is one fitted stage.
type Fitted struct {
	Stage Stage
	Scale float64
}

// Report is the outcome of a fit.
type Report struct {
	Profile *hw.CostProfile // the base cost profile
	Rows    []Row
	Fitted  []Fitted
	// Fixed are the stages present on the path that no fitted target
	// identifies.
	Fixed   []string
	Skipped []string // targets without a built-in scenario, with the reason
	// Warnings are scenario settings that differ from the measured
	// machine (one line per configuration and setting).
	Warnings []string
	Evals    int
	Status   string
}

type prepared struct {
	t   Target
	run int // index into the runs
}

// runs are the distinct scenario runs of the targets (a run gives several
// metrics).
type runs []*scenarios.Spec

// Run fits the stages to the targets and reports the table.
func Run(o Options) (*Report, error) {
	o.defaults()
	rep := &Report{}
	var ps []prepared
	var rs runs
	idx := map[string]int{}
	for _, t := range o.Targets {
		i, ok := idx[t.Run()]
		if !ok {
			sp, err := o.spec(t)
			if err != nil {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", t.Name, err))
				continue
			}
			i = len(rs)
			idx[t.Run()] = i
			rs = append(rs, sp)
			for _, m := range kernelMismatch(sp, t.Kernel) {
				if w := fmt.Sprintf("%s: scenario %s", t.Config, m); !slices.Contains(rep.Warnings, w) {
					rep.Warnings = append(rep.Warnings, w)
				}
			}
		}
		ps = append(ps, prepared{t, i})
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("calibrate: no target has a scenario (%s)", strings.Join(rep.Skipped, "; "))
	}
	base, err := hw.Load(rs[0].HW, rs[0].Costs)
	if err != nil {
		return nil, err
	}
	for _, sp := range rs[1:] {
		if sp.HW != rs[0].HW || sp.Costs != rs[0].Costs {
			return nil, fmt.Errorf("calibrate: targets use different hw profiles (%s and %s)", rs[0].Name, sp.Name)
		}
	}
	cp, err := hw.LoadCosts(base.CostName)
	if err != nil {
		return nil, err
	}
	rep.Profile = cp
	stages := o.stages(base)
	fitMetric := map[string]bool{}
	for _, m := range o.Metrics {
		fitMetric[m] = true
	}
	held := func(t Target) bool {
		return o.Holdout[t.Name] || o.Holdout[t.Run()] || len(fitMetric) > 0 && !fitMetric[t.Metric]
	}
	before, err := simulateAll(ps, rs, base, nil, nil, o.Seed)
	if err != nil {
		return nil, err
	}
	var fitIdx []int
	for i, p := range ps {
		if !held(p.t) {
			fitIdx = append(fitIdx, i)
		}
	}
	active, fixed, err := identify(ps, rs, fitIdx, base, stages, before, o.Seed)
	if err != nil {
		return nil, err
	}
	rep.Fixed = fixed
	if len(active) > 1 && !o.NoMachine {
		active = append([]Stage{machineStage(active)}, active...)
	}
	scales := make([]float64, len(active))
	for i := range scales {
		scales[i] = 1
	}
	if len(active) > 0 && len(fitIdx) > 0 {
		scales, rep.Evals, rep.Status, err = fit(ps, rs, fitIdx, base, active, o)
		if err != nil {
			return nil, err
		}
	}
	after, err := simulateAll(ps, rs, base, active, scales, o.Seed)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		rep.Rows = append(rep.Rows, Row{Name: p.t.Name, Measured: p.t.Measured, Spread: p.t.Spread, RepMin: p.t.RepMin, RepMax: p.t.RepMax, Before: before[i], After: after[i], InFit: !held(p.t)})
	}
	for i, s := range active {
		rep.Fitted = append(rep.Fitted, Fitted{Stage: s, Scale: scales[i]})
	}
	return rep, nil
}

// spec loads the target's scenario with a simulated interval sized to
// its measured rate.
func (o *Options) spec(t Target) (*scenarios.Spec, error) {
	d := time.Duration(o.PktsPerSim / t.Measured * 1e9)
	d = min(max(d, o.MinSim), o.MaxSim)
	w := max(d/10, 500*time.Microsecond)
	sets := []string{"traffic.generator=" + t.Gen, fmt.Sprintf("duration=%q", d.String()), fmt.Sprintf("warmup=%q", w.String())}
	if o.Background && len(t.Background) > 0 {
		var b []string
		for _, v := range t.Background {
			b = append(b, fmt.Sprintf("%.3f", v))
		}
		sets = append(sets, "noise.background=["+strings.Join(b, ",")+"]")
	}
	return scenarios.Load(t.Config, sets...)
}

// stages returns the stages with at least one cost in the profile.
func (o *Options) stages(p *hw.Profile) []Stage {
	want := map[string]bool{}
	for _, s := range o.Stages {
		want[s] = true
	}
	var out []Stage
	for _, s := range Stages() {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		var have []string
		for _, c := range s.Costs {
			if _, ok := p.Costs[c]; ok {
				have = append(have, c)
			}
		}
		if len(have) > 0 {
			s.Costs = have
			out = append(out, s)
		}
	}
	return out
}

// scaled returns a copy of p with each stage's costs scaled.
func scaled(p *hw.Profile, stages []Stage, scales []float64) *hw.Profile {
	q := *p
	q.Costs = make(map[string]hw.Cost, len(p.Costs))
	for k, v := range p.Costs {
		q.Costs[k] = v
	}
	for i, s := range stages {
		for _, n := range s.Costs {
			c := q.Costs[n]
			c.Call *= scales[i]
			c.Pkt *= scales[i]
			c.Byte *= scales[i]
			q.Costs[n] = c
		}
	}
	return &q
}

func simulate(sp *scenarios.Spec, p *hw.Profile, seed uint64) (*host.Result, error) {
	h, err := host.BuildWith(sp, p, seed, host.Layers()...)
	if err != nil {
		return nil, err
	}
	r := h.Run()
	if r.Ledger.Imbalance != 0 {
		return nil, fmt.Errorf("calibrate: %s: conservation imbalance %d", sp.Name, r.Ledger.Imbalance)
	}
	return r, nil
}

// values simulates the runs the targets idx need (all when idx is nil)
// and returns every target's simulated metric (0 for targets not run).
func values(ps []prepared, rs runs, idx []int, p *hw.Profile, seed uint64) ([]float64, error) {
	if idx == nil {
		idx = make([]int, len(ps))
		for i := range idx {
			idx[i] = i
		}
	}
	res := make([]*host.Result, len(rs))
	out := make([]float64, len(ps))
	for _, i := range idx {
		run := ps[i].run
		if res[run] == nil {
			r, err := simulate(rs[run], p, seed)
			if err != nil {
				return nil, fmt.Errorf("calibrate: %s: %w", ps[i].t.Name, err)
			}
			res[run] = r
		}
		out[i] = simMetric(res[run], ps[i].t.Metric)
	}
	return out, nil
}

func simulateAll(ps []prepared, rs runs, base *hw.Profile, stages []Stage, scales []float64, seed uint64) ([]float64, error) {
	return values(ps, rs, nil, scaled(base, stages, scales), seed)
}

// identify returns the stages whose scaling by 1.25 moves a simulated
// metric of a fitted target by at least 0.5 %, and the names of the others.
func identify(ps []prepared, rs runs, fitIdx []int, base *hw.Profile, stages []Stage, before []float64, seed uint64) ([]Stage, []string, error) {
	var active []Stage
	var fixed []string
	for _, s := range stages {
		v, err := values(ps, rs, fitIdx, scaled(base, []Stage{s}, []float64{1.25}), seed)
		if err != nil {
			return nil, nil, err
		}
		moved := false
		for _, i := range fitIdx {
			if math.Abs(v[i]-before[i]) >= 0.005*before[i] {
				moved = true
				break
			}
		}
		if moved {
			active = append(active, s)
		} else {
			fixed = append(fixed, s.Name)
		}
	}
	return active, fixed, nil
}

// weight is a target's weight in the objective: the inverse square of its
// relative uncertainty, taken as a floor of 5 % plus half the relative range
// of its per-repetition medians, normalised to 1 for a 5 % target.
func weight(t Target) float64 {
	u := 0.05 + t.Spread/2
	return 0.05 * 0.05 / (u * u)
}

// fit runs Nelder-Mead over the log scales of the active stages.
func fit(ps []prepared, rs runs, fitIdx []int, base *hw.Profile, active []Stage, o Options) ([]float64, int, string, error) {
	lo, hi := math.Log(minScale), math.Log(maxScale)
	clamp := func(x []float64) []float64 {
		s := make([]float64, len(x))
		for i, v := range x {
			s[i] = math.Exp(min(max(v, lo), hi))
		}
		return s
	}
	var simErr error
	evals := 0
	f := func(x []float64) float64 {
		evals++
		s := clamp(x)
		vals, err := values(ps, rs, fitIdx, scaled(base, active, s), o.Seed)
		if err != nil {
			simErr = err
			return math.Inf(1)
		}
		sum := 0.0
		for _, i := range fitIdx {
			v := vals[i]
			if v <= 0 {
				sum += 100
				continue
			}
			e := math.Log(v / ps[i].t.Measured)
			sum += weight(ps[i].t) * e * e
		}
		for j, v := range x {
			if !active[j].Free {
				sum += o.Ridge * v * v
			}
			// outside the bounds: a penalty that leads back inside
			if c := min(max(v, lo), hi); c != v {
				sum += (v - c) * (v - c)
			}
		}
		if evals%25 == 0 {
			o.Log("calibrate: %d evaluations, objective %.6f", evals, sum)
		}
		return sum
	}
	// Two rounds: from the prior with a wide simplex (0.3 in log space, a
	// factor 1.35), then a restart from the best point with a narrow one,
	// which un-sticks a simplex collapsed on the step-like objective (costs
	// are whole nanoseconds).
	x := make([]float64, len(active))
	var status []string
	for round, size := range []float64{0.3, 0.1} {
		budget := o.MaxEvals*2/3 - evals
		if round == 1 {
			budget = o.MaxEvals - evals
		}
		if budget <= len(x)+1 {
			break
		}
		res, err := optimize.Minimize(optimize.Problem{Func: f}, x,
			&optimize.Settings{FuncEvaluations: budget, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 60}},
			&optimize.NelderMead{SimplexSize: size})
		if simErr != nil {
			return nil, evals, "", simErr
		}
		if res == nil {
			return nil, evals, "", fmt.Errorf("calibrate: optimize: %w", err)
		}
		x = res.X
		status = append(status, res.Status.String())
	}
	return clamp(x), evals, strings.Join(status, ", then "), nil
}
