package sim

import "testing"

// yielder charges a, yields, then records what it sees and charges b.
type yielder struct {
	fn     FuncID
	a, b   Time
	flag   *bool
	saw    []bool
	dones  int
	starts []Time
}

func (y *yielder) Run(now Time, w *Work) {
	y.starts = append(y.starts, now)
	w.Add(y.fn, y.a)
	w.Yield()
	y.saw = append(y.saw, *y.flag)
	w.Add(y.fn, y.b)
}

func (y *yielder) Done(now Time) bool { y.dones++; return false }

// yieldRig is a CPU (yields as on) whose softirq is a yielder charging
// 20 us, yielding, then 10 us; raised at 0, with the flag set at flagAt.
func yieldRig(on bool, flagAt Time) (*rig, *yielder) {
	r := newRig(DefaultSched())
	r.cpu.SetYield(on)
	flag := false
	y := &yielder{fn: r.funcs.ID("f"), a: us(20), b: us(10), flag: &flag}
	r.cpu.SetSoftirq(y)
	at(r.eng, 0, r.cpu.RaiseSoftirq)
	at(r.eng, flagAt, func() { flag = true })
	return r, y
}

// TestYield: a softirq step that yields at 20 us sees, after the yield, what
// an event at 15 us did, and is accounted and completed as one step of
// 30 us; without SetYield the same code runs in one piece and does not see
// it. A thread that yields keeps its CPU: a thread woken meanwhile waits.
func TestYield(t *testing.T) {
	for _, on := range []bool{false, true} {
		r, y := yieldRig(on, us(15))
		r.eng.Run(Never)
		if len(y.saw) != 1 || y.saw[0] != on || y.dones != 1 {
			t.Errorf("yield %v: saw %v, %d Done calls; want [%v] and 1", on, y.saw, y.dones, on)
		}
		if got := r.acct.BusyOf(0, "softirq"); got != us(30) {
			t.Errorf("yield %v: softirq busy %v, want 30us", on, got)
		}
		r.cpu.Close()
	}

	r := newRig(DefaultSched())
	r.cpu.SetYield(true)
	flag := false
	y := &yielder{fn: r.funcs.ID("f"), a: us(20), b: us(10), flag: &flag}
	other := r.task("other", us(1), 1)
	ty := r.cpu.NewThread("y", "kthread", y)
	to := r.cpu.NewThread("o", "app", other)
	at(r.eng, 0, func() { r.cpu.Wake(ty) })
	at(r.eng, us(5), func() { r.cpu.Wake(to) })
	r.eng.Run(Never)
	eqTimes(t, "other thread start", other.starts, us(30))
	if r.cpu.Switches != 1 {
		t.Errorf("%d context switches, want 1", r.cpu.Switches)
	}
	r.cpu.Close()
}

// TestYieldNothingDue: with no event due by the yield point the step does
// not yield (nothing could happen in between): one piece, same result.
func TestYieldNothingDue(t *testing.T) {
	r, y := yieldRig(true, us(25))
	r.eng.Run(us(1))
	if len(y.saw) != 1 || y.saw[0] {
		t.Errorf("saw %v, want [false] at once (the event at 25 us is after the yield point)", y.saw)
	}
	r.cpu.Close()
}

// TestCloseSuspended: closing a CPU whose step is suspended releases it.
func TestCloseSuspended(t *testing.T) {
	r, y := yieldRig(true, us(15)) // something due before the yield point
	r.eng.Run(us(10))
	if len(y.saw) != 0 {
		t.Fatalf("the step went on past its yield")
	}
	r.cpu.Close()
	r.cpu.Close()
}

// TestFinishSuspended: Finish runs the rest of a suspended step, uncharged.
func TestFinishSuspended(t *testing.T) {
	r, y := yieldRig(true, us(15))
	r.acct.To = us(10)
	r.eng.Run(us(10))
	r.cpu.Finish()
	if len(y.saw) != 1 {
		t.Errorf("after Finish the step ran its rest %d times, want 1", len(y.saw))
	}
	if got := r.acct.BusyOf(0, "softirq"); got != us(10) {
		t.Errorf("busy %v, want 10us (the part before the end)", got)
	}
	r.cpu.Close()
}
