package traffic

import "github.com/rxsim/rxsim/sim"

// Background is the CPU load of other processes on a CPU (a shared
// machine: on the validation VM other work runs on the CPU the receive
// path leaves idle, and it shows as user time in /proc/stat). It is a
// normal thread that wants Duty of every Period: it runs in steps of Step
// until it has had its share of the period, then sleeps until the next
// period starts. Under the fair scheduler it takes at most half of the CPU
// from a thread that is always runnable, and Duty of an otherwise idle CPU;
// softirqs preempt it as they preempt any thread.
type Background struct {
	Duty   float64
	Period sim.Time
	Step   sim.Time

	cpu    *sim.CPU
	th     *sim.Thread
	fn     sim.FuncID
	start  sim.Time // current period
	used   sim.Time
	step   sim.Time
	wakeAt sim.Time

	// Ran is the CPU time the load took.
	Ran sim.Time
}

var _ sim.Task = (*Background)(nil)

// Background defaults: a 4 ms period (of the order of CFS's 6 ms sched_latency)
// and steps shorter than the 0.75 ms base slice, so the scheduler can switch.
const (
	BackgroundPeriod = 4 * sim.Millisecond
	BackgroundStep   = 100 * sim.Microsecond
)

// NewBackground puts a load of duty (0..1) on cpu, labelled "other" in the
// CPU accounting, starting at once.
func NewBackground(cpu *sim.CPU, duty float64, funcs *sim.Funcs) *Background {
	b := &Background{Duty: duty, Period: BackgroundPeriod, Step: BackgroundStep, cpu: cpu, fn: funcs.ID("other_processes")}
	b.th = cpu.NewThread("other", "other", b)
	cpu.Wake(b.th)
	return b
}

func (b *Background) share() sim.Time { return sim.Time(b.Duty * float64(b.Period)) }

// Run implements sim.Task: one step of the load within the current period.
func (b *Background) Run(now sim.Time, w *sim.Work) {
	if now >= b.start+b.Period {
		b.start = now - (now-b.start)%b.Period
		b.used = 0
	}
	b.step = min(b.Step, b.share()-b.used)
	if b.step > 0 {
		w.Add(b.fn, b.step)
	}
}

// Done implements sim.Task: stay runnable until the period's share is
// used, then sleep until the next period.
func (b *Background) Done(now sim.Time) bool {
	if b.step > 0 {
		b.used += b.step
		b.Ran += b.step
	}
	if b.used < b.share() {
		return true
	}
	b.wakeAt = b.start + b.Period
	b.cpu.Engine().Schedule(b.wakeAt, (*backgroundWake)(b), 0)
	return false
}

type backgroundWake Background

// Fire implements sim.Handler: the next period starts.
func (t *backgroundWake) Fire(now sim.Time, _ int64) {
	b := (*Background)(t)
	b.cpu.Wake(b.th)
}
