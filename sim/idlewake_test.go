package sim

import "testing"

// oneStep is a thread body that does one step of d and sleeps.
type oneStep struct {
	d     Time
	start Time
}

func (o *oneStep) Run(now Time, w *Work) { o.start = now; w.Add(0, o.d) }
func (o *oneStep) Done(now Time) bool    { return false }

// TestIdleWakeLatency: a wake-up on an idle CPU starts the thread after the
// latency; on a busy CPU the woken thread is queued at once; a second
// wake-up during the latency changes nothing.
func TestIdleWakeLatency(t *testing.T) {
	cases := []struct {
		name     string
		latency  Time
		busy     Time // another thread's step running when the wake comes (0: idle)
		wantRun  Time
		wantWake uint64
	}{
		{"bare metal", 0, 0, 0, 1},
		{"idle vCPU", 15 * Microsecond, 0, 15 * Microsecond, 1},
		{"busy vCPU", 15 * Microsecond, 5 * Microsecond, 5 * Microsecond, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := NewEngine(8)
			cpu := NewCPU(0, eng, NewAccount(1), DefaultSched())
			if c.busy > 0 { // running before the latency is set: the CPU is busy at the wake-up
				cpu.Wake(cpu.NewThread("other", "app", &oneStep{d: c.busy}))
			}
			cpu.SetIdleWakeLatency(c.latency)
			body := &oneStep{d: Microsecond, start: -1}
			th := cpu.NewThread("woken", "kthread", body)
			cpu.Wake(th)
			cpu.Wake(th)
			if !th.Runnable() {
				t.Fatalf("not runnable right after the wake-up")
			}
			eng.Run(Never)
			if body.start != c.wantRun || th.Wakeups != c.wantWake {
				t.Errorf("ran at %d with %d wake-ups, want %d and %d", body.start, th.Wakeups, c.wantRun, c.wantWake)
			}
		})
	}
}

// TestIdleWakeCost: the first step after a wake-up on an idle CPU pays the
// idle exit; a wake-up on a busy CPU does not.
func TestIdleWakeCost(t *testing.T) {
	for _, c := range []struct {
		name string
		busy Time
		want Time // CPU time of the woken thread
	}{
		{"idle", 0, 3*Microsecond + Microsecond},
		{"busy", 5 * Microsecond, Microsecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			eng := NewEngine(8)
			acct := NewAccount(1)
			cpu := NewCPU(0, eng, acct, DefaultSched())
			if c.busy > 0 {
				cpu.Wake(cpu.NewThread("other", "app", &oneStep{d: c.busy}))
			}
			cpu.SetIdleWakeCost(3*Microsecond, 1)
			cpu.Wake(cpu.NewThread("woken", "kthread", &oneStep{d: Microsecond}))
			eng.Run(Never)
			if got := acct.BusyOf(0, "kthread"); got != c.want {
				t.Errorf("woken thread used %d ns, want %d", got, c.want)
			}
		})
	}
}
