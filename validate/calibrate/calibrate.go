package calibrate

import (
	"fmt"
	"math"
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
	// Name is "config/generator", e.g. "veth-xdp-drop/afpacket".
	Name   string
	Config string
	Gen    string
	// Measured is the median rx_pps over the measurement results.
	Measured float64
	// Spread is the relative range of the per-repetition medians (0 if unknown).
	Spread float64
	// N is the number of results merged.
	N int
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
			k := r.Scenario + "/" + string(r.Settings.Gen.Kind)
			by[k] = append(by[k], r)
		}
	}
	names := host.Names(by)
	out := make([]Target, 0, len(names))
	for _, k := range names {
		rs := by[k]
		var vs, sp []float64
		for _, r := range rs {
			vs = append(vs, r.RxPPS)
			if s, ok := r.Spread["rx_pps"]; ok {
				sp = append(sp, s.RelRange)
			}
		}
		cfg, gen, _ := strings.Cut(k, "/")
		out = append(out, Target{Name: k, Config: cfg, Gen: gen, Measured: median(vs), Spread: median(sp), N: len(rs)})
	}
	return out
}

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
}

// Stages returns the stages of the veth path, in fit order.
func Stages() []Stage {
	return []Stage{
		{"gen_live", []string{"bpf_test_run_xdp_live", "veth_xdp_xmit"}, "live-frames generator: test-run batch, redirect program, ndo_xdp_xmit into the veth ring"},
		{"gen_afpacket", []string{"packet_sendmmsg"}, "AF_PACKET sendmmsg: syscall and packet_snd per message"},
		{"gen_udp", []string{"udp_sendmmsg"}, "UDP sendmmsg: syscall and udp_sendmsg/ip_output per message"},
		{"veth_xmit", []string{"veth_xmit"}, "veth_xmit per socket skb (ptr_ring produce, __veth_xdp_flush)"},
		{"napi", []string{"net_rx_action", "napi_poll", "napi_complete_done"}, "per-poll softirq and NAPI overhead"},
		{"veth_rx", []string{"veth_poll", "bpf_prog_run_xdp", "xdp_return_frame"}, "veth_poll per entry: consume, XDP program, drop recycle"},
		{"skb_to_xdp", []string{"veth_convert_skb_to_xdp_buff", "kfree_skb"}, "copy of a socket skb into an xdp_buff and its free"},
		{"remote_consume", []string{"veth_poll_remote"}, "consuming entries produced on the other CPU (threaded NAPI)"},
		{"remote_produce", []string{"veth_xmit_remote", "wake_up_process"}, "producing for a consumer on the other CPU: ring line bouncing and kthread wake-ups"},
		{"xdp_pass_skb", []string{"veth_xdp_rcv_bulk_skb"}, "XDP_PASS frames built into skbs in bulks of 16"},
		{"stack", []string{"netif_receive_skb", "ip_rcv", "udp_rcv", "udp_noport", "udp_enqueue", "build_skb"}, "IP/UDP receive (stack model)"},
		{"cpumap", []string{"xdp_do_redirect", "bq_flush_to_queue", "cpu_map_kthread_run", "cpumap_build_skb"}, "cpumap enqueue and kthread (cpumap model)"},
		{"app", []string{"udp_recvmsg", "sock_def_readable"}, "the reading application"},
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
	// sets it from the measured rate (0: 1 ms, 20 ms, 30000).
	MinSim, MaxSim time.Duration
	PktsPerSim     float64
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
		o.MaxSim = 20 * time.Millisecond
	}
	if o.PktsPerSim <= 0 {
		o.PktsPerSim = 30000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// Scale bounds of a stage (the fit stays within a factor 5 of the prior).
const (
	minScale = 0.2
	maxScale = 5
)

// Row is one line of the calibration table.
type Row struct {
	Name     string
	Measured float64
	Before   float64
	After    float64
	InFit    bool
}

// ErrPct is the error after the fit in percent of the measured rate.
func (r Row) ErrPct() float64 { return (r.After - r.Measured) / r.Measured * 100 }

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
	Evals   int
	Status  string
}

type prepared struct {
	t    Target
	spec *scenarios.Spec
}

// Run fits the stages to the targets and reports the table.
func Run(o Options) (*Report, error) {
	o.defaults()
	rep := &Report{}
	var ps []prepared
	for _, t := range o.Targets {
		sp, err := o.spec(t)
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		ps = append(ps, prepared{t, sp})
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("calibrate: no target has a scenario (%s)", strings.Join(rep.Skipped, "; "))
	}
	base, err := hw.Load(ps[0].spec.HW, ps[0].spec.Costs)
	if err != nil {
		return nil, err
	}
	for _, p := range ps[1:] {
		if p.spec.HW != ps[0].spec.HW || p.spec.Costs != ps[0].spec.Costs {
			return nil, fmt.Errorf("calibrate: targets use different hw profiles (%s and %s)", ps[0].t.Name, p.t.Name)
		}
	}
	cp, err := hw.LoadCosts(base.CostName)
	if err != nil {
		return nil, err
	}
	rep.Profile = cp
	stages := o.stages(base)
	before, err := simulateAll(ps, base, nil, nil, o.Seed)
	if err != nil {
		return nil, err
	}
	var fitIdx []int
	for i, p := range ps {
		if !o.Holdout[p.t.Name] {
			fitIdx = append(fitIdx, i)
		}
	}
	active, fixed, err := identify(ps, fitIdx, base, stages, before, o.Seed)
	if err != nil {
		return nil, err
	}
	rep.Fixed = fixed
	scales := make([]float64, len(active))
	for i := range scales {
		scales[i] = 1
	}
	if len(active) > 0 && len(fitIdx) > 0 {
		scales, rep.Evals, rep.Status, err = fit(ps, fitIdx, base, active, o)
		if err != nil {
			return nil, err
		}
	}
	after, err := simulateAll(ps, base, active, scales, o.Seed)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		rep.Rows = append(rep.Rows, Row{Name: p.t.Name, Measured: p.t.Measured, Before: before[i], After: after[i], InFit: !o.Holdout[p.t.Name]})
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
	return scenarios.Load(t.Config, "traffic.generator="+t.Gen,
		fmt.Sprintf("duration=%q", d.String()), fmt.Sprintf("warmup=%q", w.String()))
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

func simulate(sp *scenarios.Spec, p *hw.Profile, seed uint64) (float64, error) {
	h, err := host.BuildWith(sp, p, seed, host.Layers()...)
	if err != nil {
		return 0, err
	}
	r := h.Run()
	if r.Ledger.Imbalance != 0 {
		return 0, fmt.Errorf("calibrate: %s: conservation imbalance %d", sp.Name, r.Ledger.Imbalance)
	}
	return r.RxPPS, nil
}

func simulateAll(ps []prepared, base *hw.Profile, stages []Stage, scales []float64, seed uint64) ([]float64, error) {
	p := scaled(base, stages, scales)
	out := make([]float64, len(ps))
	for i, x := range ps {
		v, err := simulate(x.spec, p, seed)
		if err != nil {
			return nil, fmt.Errorf("calibrate: %s: %w", x.t.Name, err)
		}
		out[i] = v
	}
	return out, nil
}

// identify returns the stages whose scaling by 1.25 moves the simulated
// rate of a fitted target by at least 0.5 %, and the names of the others.
func identify(ps []prepared, fitIdx []int, base *hw.Profile, stages []Stage, before []float64, seed uint64) ([]Stage, []string, error) {
	var active []Stage
	var fixed []string
	for _, s := range stages {
		p := scaled(base, []Stage{s}, []float64{1.25})
		moved := false
		for _, i := range fitIdx {
			v, err := simulate(ps[i].spec, p, seed)
			if err != nil {
				return nil, nil, err
			}
			if math.Abs(v-before[i]) >= 0.005*before[i] {
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

// fit runs Nelder-Mead over the log scales of the active stages.
func fit(ps []prepared, fitIdx []int, base *hw.Profile, active []Stage, o Options) ([]float64, int, string, error) {
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
		p := scaled(base, active, s)
		sum := 0.0
		for _, i := range fitIdx {
			v, err := simulate(ps[i].spec, p, o.Seed)
			if err != nil {
				simErr = err
				return math.Inf(1)
			}
			if v <= 0 {
				sum += 100
				continue
			}
			e := math.Log(v / ps[i].t.Measured)
			sum += e * e
		}
		for j, v := range x {
			sum += o.Ridge * v * v
			// outside the bounds: a penalty that leads back inside
			if c := min(max(v, lo), hi); c != v {
				sum += (v - c) * (v - c)
			}
			_ = j
		}
		if evals%25 == 0 {
			o.Log("calibrate: %d evaluations, objective %.6f", evals, sum)
		}
		return sum
	}
	x0 := make([]float64, len(active))
	res, err := optimize.Minimize(optimize.Problem{Func: f}, x0,
		&optimize.Settings{FuncEvaluations: o.MaxEvals, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 60}},
		&optimize.NelderMead{SimplexSize: 0.3})
	if simErr != nil {
		return nil, evals, "", simErr
	}
	if res == nil {
		return nil, evals, "", fmt.Errorf("calibrate: optimize: %w", err)
	}
	status := res.Status.String()
	return clamp(res.X), evals, status, nil
}
