package sim

import (
	"fmt"
	"gonum.org/v1/gonum/stat"
	"math"
	"math/rand/v2"
	"testing"
)

// step is a Task whose steps each cost a fixed time, charged to one
// function, and which records when its steps start and end.
type step struct {
	name  string
	fn    FuncID
	cost  Time
	steps int // steps left; the task sleeps (or is no longer pending) at 0
	// onRun is called from Run after the cost is charged (to raise work
	// from inside a handler, as napi_schedule does in a hard IRQ).
	onRun  func(now Time)
	onDone func(now Time)
	starts []Time
	ends   []Time
	log    *[]string
}

func (s *step) Run(now Time, w *Work) {
	s.starts = append(s.starts, now)
	w.Add(s.fn, s.cost)
	if s.log != nil {
		*s.log = append(*s.log, fmt.Sprintf("%v %s start", now, s.name))
	}
	if s.onRun != nil {
		s.onRun(now)
	}
}

func (s *step) Done(now Time) bool {
	s.ends = append(s.ends, now)
	if s.log != nil {
		*s.log = append(*s.log, fmt.Sprintf("%v %s end", now, s.name))
	}
	s.steps--
	if s.onDone != nil {
		s.onDone(now)
	}
	return s.steps > 0
}

func us(n float64) Time { return Time(n * float64(Microsecond)) }

// at runs f at simulated time t.
func at(e *Engine, t Time, f func()) { e.Schedule(t, HandlerFunc(func(Time, int64) { f() }), 0) }

type rig struct {
	eng   *Engine
	acct  *Account
	cpu   *CPU
	funcs *Funcs
	log   []string
}

func newRig(sched Sched) *rig {
	r := &rig{eng: NewEngine(64), acct: NewAccount(1), funcs: NewFuncs()}
	r.cpu = NewCPU(0, r.eng, r.acct, sched)
	return r
}

func (r *rig) task(name string, cost Time, steps int) *step {
	return &step{name: name, fn: r.funcs.ID(name), cost: cost, steps: steps, log: &r.log}
}

func eqTimes(t *testing.T, what string, got []Time, want ...Time) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// TestSoftirqDelaysThread: a 10 us thread step from t=0 with a softirq of
// 2 us raised at 3 us ends at exactly 12 us; the softirq runs 3..5 us.
func TestSoftirqDelaysThread(t *testing.T) {
	r := newRig(DefaultSched())
	th := r.task("app", us(10), 1)
	soft := r.task("net_rx_action", us(2), 1)
	r.cpu.SetSoftirq(soft)
	thr := r.cpu.NewThread("app/0", "app", th)
	at(r.eng, 0, func() { r.cpu.Wake(thr) })
	at(r.eng, us(3), r.cpu.RaiseSoftirq)
	r.eng.Run(Never)
	eqTimes(t, "thread step start", th.starts, 0)
	eqTimes(t, "thread step end", th.ends, us(12))
	eqTimes(t, "softirq start", soft.starts, us(3))
	eqTimes(t, "softirq end", soft.ends, us(5))
	if r.cpu.SoftirqPending() || thr.Runnable() {
		t.Errorf("after the run: softirq pending %v, thread runnable %v; want both false", r.cpu.SoftirqPending(), thr.Runnable())
	}
}

// TestHardIRQDelaysBoth: a 1 us hard IRQ at 4 us, during that softirq,
// delays both: the softirq (3..5 us, 1 us left at 4 us) ends at 6 us, the
// thread (7 us left at 3 us) at 13 us.
func TestHardIRQDelaysBoth(t *testing.T) {
	r := newRig(DefaultSched())
	th := r.task("app", us(10), 1)
	soft := r.task("net_rx_action", us(2), 1)
	irq := r.task("ixgbe_msix_clean_rings", us(1), 1)
	r.cpu.SetSoftirq(soft)
	thr := r.cpu.NewThread("app/0", "app", th)
	at(r.eng, 0, func() { r.cpu.Wake(thr) })
	at(r.eng, us(3), r.cpu.RaiseSoftirq)
	at(r.eng, us(4), func() { r.cpu.RaiseIRQ(irq) })
	r.eng.Run(Never)
	eqTimes(t, "irq start", irq.starts, us(4))
	eqTimes(t, "irq end", irq.ends, us(5))
	eqTimes(t, "softirq end", soft.ends, us(6))
	eqTimes(t, "thread end", th.ends, us(13))
	want := []string{"0ns app start", "3us net_rx_action start", "4us ixgbe_msix_clean_rings start",
		"5us ixgbe_msix_clean_rings end", "6us net_rx_action end", "13us app end"}
	if fmt.Sprint(r.log) != fmt.Sprint(want) {
		t.Errorf("timeline\n got %q\nwant %q", r.log, want)
	}
}

// TestHardIRQNotPreempted: hard IRQs run one after the other in the order
// raised; a softirq raised meanwhile waits for both.
func TestHardIRQNotPreempted(t *testing.T) {
	r := newRig(DefaultSched())
	a := r.task("irq_a", us(5), 1)
	b := r.task("irq_b", us(1), 1)
	soft := r.task("net_rx_action", us(2), 1)
	r.cpu.SetSoftirq(soft)
	at(r.eng, 0, func() { r.cpu.RaiseIRQ(a) })
	at(r.eng, us(1), func() { r.cpu.RaiseIRQ(b) })
	at(r.eng, us(2), r.cpu.RaiseSoftirq)
	at(r.eng, us(2), func() {
		if cl, busy := r.cpu.Running(); !busy || cl != HardIRQ {
			t.Errorf("at 2us Running() = %v, %v; want hardirq, true", cl, busy)
		}
	})
	r.eng.Run(Never)
	eqTimes(t, "irq a", append(a.starts, a.ends...), 0, us(5))
	eqTimes(t, "irq b", append(b.starts, b.ends...), us(5), us(6))
	eqTimes(t, "softirq", append(soft.starts, soft.ends...), us(6), us(8))
	if _, busy := r.cpu.Running(); busy {
		t.Errorf("CPU busy after the run")
	}
}

// TestIRQRaisesSoftirq: a hard-IRQ handler that raises the softirq from its
// Run (napi_schedule in ixgbe_msix_clean_rings) does not start the softirq
// inside itself: the softirq runs at IRQ exit, and the IRQ keeps its cost.
func TestIRQRaisesSoftirq(t *testing.T) {
	r := newRig(DefaultSched())
	soft := r.task("net_rx_action", us(2), 1)
	irq := r.task("irq", us(1), 1)
	irq.onRun = func(Time) { r.cpu.RaiseSoftirq() }
	r.cpu.SetSoftirq(soft)
	at(r.eng, us(10), func() { r.cpu.RaiseIRQ(irq) })
	r.eng.Run(Never)
	eqTimes(t, "irq", append(irq.starts, irq.ends...), us(10), us(11))
	eqTimes(t, "softirq", append(soft.starts, soft.ends...), us(11), us(13))
	if got := r.acct.BusyOf(0, "hardirq"); got != us(1) {
		t.Errorf("hardirq busy = %v, want 1us", got)
	}
	if got := r.acct.BusyOf(0, "softirq"); got != us(2) {
		t.Errorf("softirq busy = %v, want 2us", got)
	}
}

// TestThreadWakesThread: a thread that wakes another from its Run or its
// Done keeps running its own step; the woken one runs after it.
func TestThreadWakesThread(t *testing.T) {
	for _, where := range []string{"Run", "Done"} {
		t.Run(where, func(t *testing.T) {
			r := newRig(DefaultSched())
			a := r.task("a", us(10), 1)
			b := r.task("b", us(5), 1)
			tb := r.cpu.NewThread("b", "b", b)
			ta := r.cpu.NewThread("a", "a", a)
			wake := func(Time) { r.cpu.Wake(tb) }
			if where == "Run" {
				a.onRun = wake
			} else {
				a.onDone = wake
			}
			at(r.eng, 0, func() { r.cpu.Wake(ta) })
			r.eng.Run(Never)
			eqTimes(t, "a", append(a.starts, a.ends...), 0, us(10))
			eqTimes(t, "b", append(b.starts, b.ends...), us(10), us(15))
			if ta.Runnable() || tb.Runnable() {
				t.Errorf("runnable after the run: a %v b %v", ta.Runnable(), tb.Runnable())
			}
		})
	}
}

// TestSoftirqRaisedWhileRunning: a softirq raised while the softirq step
// runs (or is frozen under a hard IRQ) is not lost: it is pending after the
// step and runs again.
func TestSoftirqRaisedWhileRunning(t *testing.T) {
	r := newRig(DefaultSched())
	soft := r.task("net_rx_action", us(2), 1) // Done says "no more work"
	irq := r.task("irq", us(1), 1)
	irq.onRun = func(Time) { r.cpu.RaiseSoftirq() }
	r.cpu.SetSoftirq(soft)
	at(r.eng, 0, r.cpu.RaiseSoftirq)
	at(r.eng, us(1), func() {
		r.cpu.RaiseSoftirq() // while the step runs
		if !r.cpu.SoftirqPending() || !r.cpu.InSoftirq() {
			t.Errorf("at 1us: pending %v, in softirq %v; want true, true", r.cpu.SoftirqPending(), r.cpu.InSoftirq())
		}
	})
	var pendingAfterFirst bool
	soft.onDone = func(now Time) {
		if now == us(2) {
			at(r.eng, now, func() { pendingAfterFirst = r.cpu.SoftirqPending() || r.cpu.InSoftirq() })
		}
	}
	// Second round: a hard IRQ at 3us, during the re-run (2..4us), raises it again.
	at(r.eng, us(3), func() { r.cpu.RaiseIRQ(irq) })
	r.eng.Run(Never)
	if !pendingAfterFirst {
		t.Errorf("softirq raised during its step was lost")
	}
	// 0..2 first, 2..5 second (1us IRQ inside), 5..7 third.
	eqTimes(t, "softirq starts", soft.starts, 0, us(2), us(5))
	eqTimes(t, "softirq ends", soft.ends, us(2), us(5), us(7))
	if r.cpu.SoftirqPending() {
		t.Errorf("softirq still pending at the end")
	}
}

// TestFairness: two always-runnable threads with fixed step sizes alternate
// every BaseSlice (rounded up to whole steps); by the step ends up to the
// horizon, each gets its hand-computed share.
func TestFairness(t *testing.T) {
	tests := []struct {
		name         string
		slice, step  Time
		until        Time
		wantA, wantB Time
		switchEvery  int // steps per turn
	}{
		// 1 ms slices of 100 us steps: 10 turns in 10 ms, 5 each.
		{"slice=1ms", Millisecond, us(100), 10 * Millisecond, 5 * Millisecond, 5 * Millisecond, 10},
		// Default 750 us slice, 250 us steps: turns [750k, 750(k+1)); A has
		// k = 0,2,...,12 (7 x 750), B k = 1,...,11 (6 x 750) plus the step
		// 9750..10000 us of turn 13.
		{"slice=750us", 750 * Microsecond, us(250), 10 * Millisecond, us(5250), us(4750), 3},
		// 750 us slice, 100 us steps: a turn is 8 steps (800 us >= 750).
		{"slice=750us/step=100us", 750 * Microsecond, us(100), 8 * us(800), us(3200), us(3200), 8},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			r := newRig(Sched{BaseSlice: test.slice, WakeupCredit: 3 * Millisecond})
			a := r.task("a", test.step, 1<<30)
			b := r.task("b", test.step, 1<<30)
			ta := r.cpu.NewThread("a", "a", a)
			tb := r.cpu.NewThread("b", "b", b)
			at(r.eng, 0, func() { r.cpu.Wake(ta); r.cpu.Wake(tb) })
			r.eng.Run(test.until)
			gotA := Time(len(a.ends)) * test.step
			gotB := Time(len(b.ends)) * test.step
			if gotA != test.wantA || gotB != test.wantB {
				t.Errorf("completed work by %v: a %v, b %v; want %v, %v", test.until, gotA, gotB, test.wantA, test.wantB)
			}
			// Turns: a's k-th step starts at the hand-computed time.
			turn := Time(test.switchEvery) * test.step
			for i, s := range a.starts {
				k := Time(i / test.switchEvery)
				want := 2*k*turn + Time(i%test.switchEvery)*test.step
				if s != want {
					t.Fatalf("a step %d starts at %v, want %v", i, s, want)
				}
			}
			if ta.Scheds == 0 || tb.Scheds == 0 {
				t.Errorf("no context switches: a %d b %d", ta.Scheds, tb.Scheds)
			}
		})
	}
}

// TestWakeupPlacement: a thread that slept while another ran is placed at
// most WakeupCredit behind min_vruntime; if that puts it more than a
// BaseSlice behind the running thread, it preempts at the next step boundary
// and then runs until its vruntime passes the other's.
func TestWakeupPlacement(t *testing.T) {
	r := newRig(DefaultSched()) // 750 us slice, 3 ms credit
	a := r.task("a", us(100), 1<<30)
	b := r.task("b", us(100), 1<<30)
	ta := r.cpu.NewThread("a", "a", a)
	tb := r.cpu.NewThread("b", "b", b)
	at(r.eng, 0, func() { r.cpu.Wake(ta) })
	var vAtWake Time
	at(r.eng, us(10050), func() {
		r.cpu.Wake(tb)
		vAtWake = tb.vruntime
	})
	r.eng.Run(us(14000))
	// At 10.05 ms, a's running step 10.0..10.1 ms is charged: a.v = 10.1 ms.
	// b.v = 0 is placed at 10.1 - 3 = 7.1 ms; 7.1 + 0.75 < 10.1 preempts.
	if vAtWake != us(7100) {
		t.Errorf("woken vruntime = %v, want 7.1ms", vAtWake)
	}
	if len(b.starts) == 0 || b.starts[0] != us(10100) {
		t.Fatalf("b first runs at %v, want 10.1ms (the next step boundary of a)", b.starts)
	}
	// b runs turns of 8 steps (800 us) while its vruntime stays below a's
	// 10.1 ms: 7.1 + 4 x 0.8 = 10.3 ms > 10.1, so 4 turns, to 13.3 ms.
	if got := b.ends[len(b.ends)-1]; got != us(13300) {
		t.Errorf("b's last step ends at %v, want 13.3ms", got)
	}
	var aAfter Time = -1
	for _, s := range a.starts {
		if s > us(10100) {
			aAfter = s
			break
		}
	}
	if aAfter != us(13300) {
		t.Errorf("a runs again at %v, want 13.3ms", aAfter)
	}
	if tb.Wakeups != 1 || r.cpu.LastWake() != us(10050) {
		t.Errorf("Wakeups = %d, LastWake = %v; want 1, 10.05ms", tb.Wakeups, r.cpu.LastWake())
	}
}

// atomicStep is a step task that reports Atomic while its step count is
// above free.
type atomicStep struct {
	*step
	free int
}

func (a *atomicStep) Atomic() bool { return a.steps > a.free }

// TestAtomicDefersSwitch: the wake-up of TestWakeupPlacement, with a in a
// bottom-half-disabled section for its steps up to 10.3 ms: b preempts at
// the first step boundary after it, not at 10.1 ms.
func TestAtomicDefersSwitch(t *testing.T) {
	r := newRig(DefaultSched())
	a := &atomicStep{step: r.task("a", us(100), 1<<30)}
	a.free = a.steps - 103 // atomic until its 103rd step ends at 10.3 ms
	b := r.task("b", us(100), 1)
	ta := r.cpu.NewThread("a", "a", a)
	tb := r.cpu.NewThread("b", "b", b)
	at(r.eng, 0, func() { r.cpu.Wake(ta) })
	at(r.eng, us(10050), func() { r.cpu.Wake(tb) })
	r.eng.Run(us(11000))
	eqTimes(t, "b", append(b.starts, b.ends...), us(10300), us(10400))
}

// TestWakeupPreempt: a woken thread b with vruntime 0.4 ms while a runs
// 100 us steps from 0 (its vruntime is 0.5 ms from its step at 0.4 ms).
// CFS: b is within the wake-up granularity (1 ms) of a, so it waits
// for the end of a's turn, 8 steps, at 0.8 ms. EEVDF: the average of the
// two is 0.45 ms; b is eligible (at or below it) and a is not, so b
// preempts a at its step end, 0.5 ms.
func TestWakeupPreempt(t *testing.T) {
	for _, c := range []struct {
		eevdf bool
		start Time
	}{{false, us(800)}, {true, us(500)}} {
		t.Run(fmt.Sprintf("eevdf=%v", c.eevdf), func(t *testing.T) {
			sc := DefaultSched()
			sc.EEVDF = c.eevdf
			r := newRig(sc)
			a := r.task("a", us(100), 1<<30)
			b := r.task("b", us(100), 1)
			ta := r.cpu.NewThread("a", "a", a)
			tb := r.cpu.NewThread("b", "b", b)
			tb.vruntime = us(400)
			at(r.eng, 0, func() { r.cpu.Wake(ta) })
			at(r.eng, us(450), func() { r.cpu.Wake(tb) })
			r.eng.Run(2 * Millisecond)
			eqTimes(t, "b", append(b.starts, b.ends...), c.start, c.start+us(100))
			if tb.Runnable() {
				t.Errorf("b runnable after its only step")
			}
		})
	}
}

// TestAccount: busy time per label and per function is the sum of the
// charged costs, by CPU; work starting before From is not counted.
func TestAccount(t *testing.T) {
	eng := NewEngine(16)
	acct := NewAccount(2)
	funcs := NewFuncs()
	cpus := []*CPU{NewCPU(0, eng, acct, DefaultSched()), NewCPU(1, eng, acct, DefaultSched())}
	fIRQ, fRx, fPoll, fApp := funcs.ID("irq"), funcs.ID("net_rx_action"), funcs.ID("ixgbe_poll"), funcs.ID("app")
	irq := &step{fn: fIRQ, cost: us(1), steps: 1}
	// The softirq step charges two functions.
	soft := &multi{costs: map[FuncID]Time{fRx: us(2), fPoll: us(3)}, steps: 3}
	app := &step{fn: fApp, cost: us(10), steps: 4}
	cpus[0].SetSoftirq(soft)
	th := cpus[1].NewThread("app", "app", app)
	acct.From = us(20)
	// CPU 0: IRQs at 0 (before From) and 30 us; softirq steps 1..6, 6..11,
	// 11..16 (raised at 1) and 31..36, 36..41, 41..46 (raised at 31).
	at(eng, 0, func() { cpus[0].RaiseIRQ(irq) })
	at(eng, us(1), cpus[0].RaiseSoftirq)
	at(eng, us(30), func() { irq.steps = 1; cpus[0].RaiseIRQ(irq) })
	at(eng, us(31), func() { soft.steps = 3; cpus[0].RaiseSoftirq() })
	// CPU 1: app steps at 0, 10, 20, 30: the last two count.
	at(eng, 0, func() { cpus[1].Wake(th) })
	eng.Run(Never)
	checks := []struct {
		cpu   int
		label string
		want  Time
	}{
		{0, "hardirq", us(1)},
		{0, "softirq", 3 * us(5)},
		{0, "app", 0},
		{1, "app", 2 * us(10)},
		{1, "hardirq", 0},
		{1, "nosuch", 0},
	}
	for _, c := range checks {
		if got := acct.BusyOf(c.cpu, c.label); got != c.want {
			t.Errorf("BusyOf(%d, %q) = %v, want %v", c.cpu, c.label, got, c.want)
		}
	}
	byFunc := func(cpu int, fn FuncID) Time {
		if int(fn) < len(acct.ByFunc[cpu]) {
			return acct.ByFunc[cpu][fn]
		}
		return 0
	}
	fchecks := []struct {
		cpu  int
		fn   FuncID
		want Time
	}{
		{0, fIRQ, us(1)}, {0, fRx, 3 * us(2)}, {0, fPoll, 3 * us(3)}, {0, fApp, 0},
		{1, fApp, 2 * us(10)}, {1, fRx, 0},
	}
	for _, c := range fchecks {
		if got := byFunc(c.cpu, c.fn); got != c.want {
			t.Errorf("ByFunc[%d][%s] = %v, want %v", c.cpu, funcs.Name(c.fn), got, c.want)
		}
	}
	// Per CPU, the labels sum to the functions.
	for cpu := range 2 {
		var labels, fns Time
		for _, b := range acct.Busy[cpu] {
			labels += b
		}
		for _, b := range acct.ByFunc[cpu] {
			fns += b
		}
		if labels != fns {
			t.Errorf("cpu %d: labels sum to %v, functions to %v", cpu, labels, fns)
		}
	}
	if got := fmt.Sprint(acct.Labels()); got != "[hardirq softirq app]" {
		t.Errorf("Labels() = %s", got)
	}
}

// multi charges several functions per step.
type multi struct {
	costs map[FuncID]Time
	steps int
}

func (m *multi) Run(now Time, w *Work) {
	for id := FuncID(0); int(id) < 16; id++ { // fixed order, not map order
		if c, ok := m.costs[id]; ok {
			w.Add(id, c)
		}
	}
}

func (m *multi) Done(now Time) bool { m.steps--; return m.steps > 0 }

// TestNoise: cv = 0 is exact; cv > 0 with a fixed seed is reproducible,
// and each distribution has mean 1 and the requested CV (the normal one is
// bounded by its ±3σ clip, the skewed ones have a right tail).
func TestNoise(t *testing.T) {
	run := func(cv float64, d Dist, seed uint64, n int) []Time {
		r := newRig(DefaultSched())
		s := r.task("app", us(10), n)
		if cv >= 0 {
			r.cpu.SetNoise(NewCostNoise(cv, d), rand.New(rand.NewPCG(seed, 1)))
		}
		r.cpu.NewThread("app", "app", s)
		r.cpu.Wake(r.cpu.Threads()[0])
		r.eng.Run(Never)
		out := make([]Time, len(s.ends))
		prev := Time(0)
		for i, e := range s.ends {
			out[i], prev = e-prev, e
		}
		return out
	}
	for _, d := range run(0, DistLogNormal, 1, 100) {
		if d != us(10) {
			t.Fatalf("cv=0: step took %v, want exactly 10us", d)
		}
	}
	for _, d := range run(-1, DistNormal, 1, 100) { // SetNoise never called
		if d != us(10) {
			t.Fatalf("no noise: step took %v, want exactly 10us", d)
		}
	}
	const n = 20000
	for _, c := range []struct {
		dist         Dist
		lo, hi       float64 // bounds of the factor
		skewPositive bool
	}{
		{DistNormal, 0.7 - 1e-3, 1.3 + 1e-3, false},
		{DistLogNormal, 0, math.Inf(1), true},
		{DistGamma, 0, math.Inf(1), true},
	} {
		t.Run(c.dist.String(), func(t *testing.T) {
			a, b := run(0.1, c.dist, 42, n), run(0.1, c.dist, 42, n)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatal("two runs with seed 42 differ")
			}
			if o := run(0.1, c.dist, 43, 100); fmt.Sprint(o) == fmt.Sprint(a[:100]) {
				t.Error("seeds 42 and 43 give the same durations")
			}
			f := make([]float64, n)
			for i, d := range a {
				f[i] = float64(d) / float64(us(10))
				if f[i] < c.lo || f[i] > c.hi {
					t.Fatalf("factor %g outside [%g, %g]", f[i], c.lo, c.hi)
				}
			}
			mean, sd := stat.MeanStdDev(f, nil)
			// The standard error of the mean is 0.1/sqrt(20000) = 0.0007; allow 10x.
			if math.Abs(mean-1) > 0.007 {
				t.Errorf("mean factor %g, want 1 ± 0.007", mean)
			}
			if math.Abs(sd-0.1) > 0.01 {
				t.Errorf("sd of factor %g, want ~0.1", sd)
			}
			// Skewness: 0 for the clipped normal; 3cv+cv³ ≈ 0.30 for the
			// log-normal, 2cv = 0.20 for the gamma.
			if sk := stat.Skew(f, nil); c.skewPositive != (sk > 0.1) || math.Abs(sk) > 0.45 {
				t.Errorf("skewness %g (want > 0.1: %v)", sk, c.skewPositive)
			}
		})
	}
}

// TestNoisePerFunction: only the function with a cv varies; its factor
// does not leak into another function charged in the same step.
func TestNoisePerFunction(t *testing.T) {
	r := newRig(DefaultSched())
	exact, noisy := r.funcs.ID("exact"), r.funcs.ID("noisy")
	n := NewCostNoise(0, DistNormal)
	n.Set(noisy, 0.2, DistGamma)
	r.cpu.SetNoise(n, rand.New(rand.NewPCG(7, 1)))
	task := &twoFuncs{a: exact, b: noisy, steps: 200}
	r.cpu.NewThread("app", "app", task)
	r.cpu.Wake(r.cpu.Threads()[0])
	r.eng.Run(Never)
	if got, want := r.acct.ByFunc[0][exact], Time(200)*us(5); got != want {
		t.Errorf("exact function charged %v, want exactly %v", got, want)
	}
	if got := r.acct.ByFunc[0][noisy]; got == Time(200)*us(5) {
		t.Errorf("noisy function charged exactly %v: no noise applied", got)
	}
	if cv, d := n.Of(noisy); cv != 0.2 || d != DistGamma {
		t.Errorf("Of(noisy) = %v, %v", cv, d)
	}
	if cv, _ := n.Of(exact); cv != 0 {
		t.Errorf("Of(exact) cv = %v, want the default 0", cv)
	}
}

// twoFuncs charges 5 us to each of two functions per step.
type twoFuncs struct {
	a, b  FuncID
	steps int
}

func (x *twoFuncs) Run(now Time, w *Work) { w.Add(x.a, us(5)); w.Add(x.b, us(5)) }
func (x *twoFuncs) Done(now Time) bool    { x.steps--; return x.steps > 0 }

func TestParseDist(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Dist
		err  bool
	}{{"", DistLogNormal, false}, {"normal", DistNormal, false}, {"lognormal", DistLogNormal, false},
		{"gamma", DistGamma, false}, {"weibull", 0, true}} {
		d, err := ParseDist(c.in)
		if (err != nil) != c.err || (!c.err && d != c.want) {
			t.Errorf("ParseDist(%q) = %v, %v", c.in, d, err)
		}
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[Class]string{HardIRQ: "hardirq", SoftIRQ: "softirq", ThreadClass: "thread"} {
		if c.String() != want {
			t.Errorf("Class(%d).String() = %q, want %q", c, c.String(), want)
		}
	}
}

// TestThreadRaisesSoftirq: a softirq raised from a thread step's Run
// (local_bh_enable after napi_schedule) preempts that step at once; the
// step's end moves by the softirq's cost.
func TestThreadRaisesSoftirq(t *testing.T) {
	r := newRig(DefaultSched())
	soft := r.task("net_rx_action", us(2), 1)
	app := r.task("app", us(10), 1)
	app.onRun = func(Time) { r.cpu.RaiseSoftirq() }
	r.cpu.SetSoftirq(soft)
	th := r.cpu.NewThread("app", "app", app)
	at(r.eng, us(1), func() { r.cpu.Wake(th) })
	r.eng.Run(Never)
	eqTimes(t, "softirq", append(soft.starts, soft.ends...), us(1), us(3))
	eqTimes(t, "app", append(app.starts, app.ends...), us(1), us(13))
}

// TestJitter: nil or mean 0 is exact; otherwise delays are exponential
// with the given mean and reproducible per seed.
func TestJitter(t *testing.T) {
	var nilJ *Jitter
	if nilJ.Delay() != 0 || NewJitter(0, rand.New(rand.NewPCG(1, 1))).Delay() != 0 {
		t.Fatal("nil or zero-mean jitter delays")
	}
	draw := func(seed uint64) []float64 {
		j := NewJitter(us(2), rand.New(rand.NewPCG(seed, 1)))
		out := make([]float64, 20000)
		for i := range out {
			out[i] = float64(j.Delay())
		}
		return out
	}
	a := draw(5)
	if fmt.Sprint(a[:50]) != fmt.Sprint(draw(5)[:50]) {
		t.Fatal("same seed, different delays")
	}
	mean, sd := stat.MeanStdDev(a, nil)
	// Exponential: sd = mean; standard error of the mean 2us/sqrt(20000) = 14 ns.
	if math.Abs(mean-2000) > 100 || math.Abs(sd-2000) > 150 {
		t.Errorf("mean %.0f sd %.0f ns, want ~2000 each", mean, sd)
	}
	if slicesMin(a) < 0 {
		t.Error("negative delay")
	}
}

func slicesMin(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

// TestOwe: work owed to a class is charged at the start of that class's
// next step on the CPU, once, and to the named function.
func TestOwe(t *testing.T) {
	r := newRig(DefaultSched())
	s := r.task("app", us(10), 2)
	owed := r.funcs.ID("owed")
	r.cpu.Owe(ThreadClass, owed, us(3))
	r.cpu.Owe(SoftIRQ, owed, us(100)) // no softirq step runs: never charged
	r.cpu.NewThread("app", "app", s)
	r.cpu.Wake(r.cpu.Threads()[0])
	r.eng.Run(Never)
	eqTimes(t, "step ends", s.ends, us(13), us(23))
	if got := r.acct.ByFunc[0][owed]; got != us(3) {
		t.Errorf("owed function charged %v, want 3us", got)
	}
}

// TestSwitchCost: two threads alternating on one CPU pay the switch cost on
// every change of thread, not when one thread runs alone.
func TestSwitchCost(t *testing.T) {
	r := newRig(DefaultSched())
	sw := r.funcs.ID("context_switch")
	r.cpu.SetSwitchCost(us(1), sw)
	a, b := r.task("a", us(10), 3), r.task("b", us(10), 3)
	r.cpu.NewThread("a", "app", a)
	r.cpu.NewThread("b", "app", b)
	r.cpu.Wake(r.cpu.Threads()[0])
	r.cpu.Wake(r.cpu.Threads()[1])
	r.eng.Run(Never)
	n := r.cpu.Switches
	if n == 0 || r.acct.ByFunc[0][sw] != Time(n)*us(1) {
		t.Fatalf("%d switches, %v charged", n, r.acct.ByFunc[0][sw])
	}
	if end := max(a.ends[len(a.ends)-1], b.ends[len(b.ends)-1]); end != us(60)+Time(n)*us(1) {
		t.Errorf("both threads done by %v, want 60us + %d switches", end, n)
	}
	// One thread alone never switches.
	r2 := newRig(DefaultSched())
	r2.cpu.SetSwitchCost(us(1), r2.funcs.ID("context_switch"))
	s := r2.task("a", us(10), 5)
	r2.cpu.NewThread("a", "app", s)
	r2.cpu.Wake(r2.cpu.Threads()[0])
	r2.eng.Run(Never)
	if r2.cpu.Switches != 0 {
		t.Errorf("a lone thread switched %d times", r2.cpu.Switches)
	}
}

// TestAccountInterval: a step that straddles From or To is counted only for
// its part inside the interval, per label and per function.
func TestAccountInterval(t *testing.T) {
	a := NewAccount(1)
	a.From, a.To = 100, 200
	f := NewFuncs()
	fa, fb := f.ID("a"), f.ID("b")
	step := func(now Time, da, db Time) {
		var w Work
		w.reset(now)
		w.Add(fa, da)
		w.Add(fb, db)
		a.charge(0, labelSoftIRQ, &w, now)
	}
	step(50, 40, 40)  // 50..130: 30 of 80 inside
	step(150, 10, 10) // inside
	step(190, 20, 0)  // 190..210: 10 of 20 inside
	step(200, 5, 5)   // after To
	step(10, 20, 20)  // before From
	if got := a.Busy[0][labelSoftIRQ]; got != 30+20+10 {
		t.Errorf("busy %d, want 60", got)
	}
	if got, want := a.ByFunc[0][fa], Time(15+10+10); got != want {
		t.Errorf("func a %d, want %d", got, want)
	}
	if got, want := a.ByFunc[0][fb], Time(15+10); got != want {
		t.Errorf("func b %d, want %d", got, want)
	}
}

// TestIRQTimeAccounting: threads a and b are always runnable in 100 us
// steps with a 1 ms slice; a 300 us softirq runs on top of a's first step
// (raised at 50 us). Without CONFIG_IRQ_TIME_ACCOUNTING the softirq counts
// as a's runtime: a's slice (100 + 300 + 6 x 100 = 1000 us) ends with its
// 7th step, at 1000 us of wall time, and b starts then. With it, a runs
// its full 10 steps (1000 us of its own) and b starts at 1300 us. The
// softirq's own time is the same either way.
func TestIRQTimeAccounting(t *testing.T) {
	for _, c := range []struct {
		irqTime bool
		aSteps  int
		bStart  Time
	}{{false, 7, us(1000)}, {true, 10, us(1300)}} {
		t.Run(fmt.Sprintf("irq_time=%v", c.irqTime), func(t *testing.T) {
			r := newRig(Sched{BaseSlice: Millisecond, WakeupCredit: 3 * Millisecond, IRQTime: c.irqTime})
			a := r.task("a", us(100), 1<<30)
			b := r.task("b", us(100), 1<<30)
			soft := r.task("net_rx_action", us(300), 1)
			r.cpu.SetSoftirq(soft)
			ta := r.cpu.NewThread("a", "a", a)
			tb := r.cpu.NewThread("b", "b", b)
			at(r.eng, 0, func() { r.cpu.Wake(ta); r.cpu.Wake(tb) })
			at(r.eng, us(50), r.cpu.RaiseSoftirq)
			r.eng.Run(us(1500))
			if len(b.starts) == 0 || b.starts[0] != c.bStart {
				t.Fatalf("b starts at %v, want %v", b.starts, c.bStart)
			}
			n := 0
			for _, s := range a.starts {
				if s < c.bStart {
					n++
				}
			}
			if n != c.aSteps {
				t.Errorf("a ran %d steps before b, want %d", n, c.aSteps)
			}
			eqTimes(t, "softirq", append(soft.starts, soft.ends...), us(50), us(350))
		})
	}
}

// TestScaledSched: the tunables grow with 1 + ilog2(min(ncpus, 8)), as
// update_sysctl scales them at boot (SCHED_TUNABLESCALING_LOG).
func TestScaledSched(t *testing.T) {
	for _, c := range []struct {
		ncpus int
		slice Time
	}{{1, us(750)}, {2, us(1500)}, {6, us(2250)}, {8, us(3000)}, {64, us(3000)}} {
		s := ScaledSched(c.ncpus)
		f := c.slice / us(750)
		if s.BaseSlice != c.slice || s.WakeupGran != f*Millisecond || s.WakeupCredit != f*3*Millisecond {
			t.Errorf("%d CPUs: %+v, want slice %v and the others x%d", c.ncpus, s, c.slice, f)
		}
	}
}

// TestNeedResched: a runs 100 us steps from 0, atomic at the ends of its
// first three (a section with preemption disabled, so a switch that falls
// due then waits), and records NeedResched (with its own step's cost) in
// each. Alone it never needs a switch. With b woken at 250 us under CFS
// (inside the wake-up granularity) it does from the step whose end uses up
// the 750 us base slice, the one at 700 us; under EEVDF b (eligible, a not)
// is due to preempt at once, and the switch waits for a's section: the
// step at 300 us sees it.
func TestNeedResched(t *testing.T) {
	for _, c := range []struct {
		name  string
		wakeB bool
		eevdf bool
		first Time // start of the first step that sees NeedResched (-1: none)
	}{
		{"alone", false, false, -1},
		{"cfs slice end", true, false, us(700)},
		{"eevdf wake-up", true, true, us(300)},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := DefaultSched()
			sc.EEVDF = c.eevdf
			r := newRig(sc)
			a := &atomicStep{step: r.task("a", us(100), 40), free: 36}
			b := r.task("b", us(100), 1)
			ta := r.cpu.NewThread("a", "a", a)
			tb := r.cpu.NewThread("b", "b", b)
			first := Time(-1)
			a.onRun = func(now Time) {
				if first < 0 && r.cpu.NeedResched(us(100)) {
					first = now
				}
			}
			at(r.eng, 0, func() { r.cpu.Wake(ta) })
			if c.wakeB {
				at(r.eng, us(250), func() { r.cpu.Wake(tb) })
			}
			r.eng.Run(5 * Millisecond)
			if first != c.first {
				t.Errorf("first step seeing NeedResched at %v, want %v", first, c.first)
			}
		})
	}
}
