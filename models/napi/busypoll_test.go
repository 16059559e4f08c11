package napi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// TestBusyLoop drives napi_busy_loop by hand on a NAPI of CPU 0 from a
// reader on CPU 1 (fake device, 10 ns per packet, free NAPI costs, a busy
// loop iteration of 25 ns): which polls run, with what budget and on which
// CPU, what napi_complete_done returns, and where the NAPI is scheduled
// after busy_poll_stop.
func TestBusyLoop(t *testing.T) {
	cases := []struct {
		name    string
		pending int
		// irqBefore: the IRQ scheduled the NAPI before the loop (its
		// softirq on CPU 0 owns it); irqDuring: an IRQ fires while the
		// loop owns it (napi_schedule_prep fails, MISSED is set).
		irqBefore, irqDuring bool
		// want: polls as (work, complete) in order; the CPUs OnPollCPU was
		// told; softirq invocations per CPU after running the engine.
		wantWork     []int
		wantComplete []bool
		wantCPUs     []int
		wantActions  [2]uint64
		wantMisses   uint64
	}{
		{name: "idle NAPI taken, stop completes it", pending: 5,
			wantWork: []int{5, 0}, wantComplete: []bool{false, true}, wantCPUs: []int{1, 0}},
		{name: "IRQ while owned only sets MISSED", pending: 3, irqDuring: true,
			wantWork: []int{3, 0}, wantComplete: []bool{false, true}, wantCPUs: []int{1, 0}},
		{name: "scheduled by its IRQ: the loop spins", pending: 4, irqBefore: true,
			wantWork: []int{4}, wantComplete: []bool{true}, wantActions: [2]uint64{1, 0}, wantMisses: 1},
		{name: "full final poll: rescheduled on the poller's CPU", pending: 20,
			wantWork: []int{8, 8, 4}, wantComplete: []bool{false, false, true}, wantCPUs: []int{1, 0}, wantActions: [2]uint64{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, led, log, d, n, b := busyRig(napi.Config{Name: "d1"}, c.pending)
			var cpus []int
			n.OnPollCPU = func(cpu int) { cpus = append(cpus, cpu) }
			if c.irqBefore {
				// a 1000 ns hard IRQ at 0 schedules the NAPI; its softirq
				// polls it at IRQ exit, after the loop's iteration at 500
				at(h.Eng, 0, func() { h.CPUs[0].RaiseIRQ(&slowIRQ{f: n.Schedule, d: 1000, fn: h.Funcs.ID("irq")}) })
			}
			at(h.Eng, 500, func() {
				var w sim.Work
				b.Iterate(&w, n)
				if c.irqDuring {
					n.Schedule()
					if !n.Scheduled() || n.Schedules != 0 {
						t.Errorf("IRQ during the loop: scheduled %v, schedules %d; want still owned, no schedule", n.Scheduled(), n.Schedules)
					}
				}
				if w.Total() != 25+sim.Time(min(c.pending, napi.BusyPollBudget))*10*btoi[sim.Time](b.Owns()) {
					t.Errorf("iteration cost %d", w.Total())
				}
				b.Stop(&w)
			})
			h.Run(sim.Millisecond)
			var work []int
			var complete []bool
			for _, r := range *log {
				work, complete = append(work, r.work), append(complete, r.complete)
			}
			if !slices.Equal(work, c.wantWork) || !slices.Equal(complete, c.wantComplete) {
				t.Errorf("polls (work %v, complete %v), want (%v, %v)", work, complete, c.wantWork, c.wantComplete)
			}
			if !slices.Equal(cpus, c.wantCPUs) {
				t.Errorf("poll CPUs %v, want %v", cpus, c.wantCPUs)
			}
			if got := [2]uint64{h.Softnet[0].RxActions, h.Softnet[1].RxActions}; got != c.wantActions {
				t.Errorf("net_rx_action per CPU %v, want %v", got, c.wantActions)
			}
			if b.Misses != c.wantMisses || n.Scheduled() || n.Softnet() != h.Softnet[0] {
				t.Errorf("misses %d (want %d), scheduled %v, softnet CPU %d; want idle on CPU 0",
					b.Misses, c.wantMisses, n.Scheduled(), n.Softnet().CPU().ID)
			}
			if busy := min(c.pending, 2*napi.BusyPollBudget) * btoi[int](c.wantMisses == 0); n.BusyPackets != uint64(busy) {
				t.Errorf("BusyPackets %d, want %d", n.BusyPackets, busy)
			}
			modeltest.Conservation(t, led, d)
		})
	}
}

// slowIRQ is a hard IRQ of d ns that runs f at its start.
type slowIRQ struct {
	f  func()
	d  sim.Time
	fn sim.FuncID
}

func (q *slowIRQ) Run(_ sim.Time, w *sim.Work) { q.f(); w.Add(q.fn, q.d) }
func (q *slowIRQ) Done(sim.Time) bool          { return false }

func btoi[T ~int | ~int64](b bool) T {
	if b {
		return 1
	}
	return 0
}

// TestBusyLoopPrefer: SO_PREFER_BUSY_POLL with napi_defer_hard_irqs 2 and
// gro_flush_timeout 100 us on a NAPI of CPU 0 (net_rx_action 100 ns), the
// loop in a thread on CPU 1 (25 ns per iteration, 10 ns per packet).
//   - "stop defers": the loop takes the idle NAPI at 500 ns and polls 3 at
//     525; busy_poll_stop arms the watchdog and polls 0 at 555:
//     napi_complete_done keeps the IRQ masked (defer count 2 -> 1) and
//     re-arms it for 100555. The watchdog is pinned to the CPU that armed
//     it, so CPU 1's softirq then polls 0 at 100655 (1 -> 0, still masked),
//     and 100 us later again, which completes with the IRQ re-enabled.
//   - "softirq yields": the IRQ scheduled the NAPI (100 pending); the
//     loop's miss at 500 ns marks it PREFER_BUSY_POLL, so the softirq's
//     full poll at IRQ exit (64 at 1100) completes it instead of
//     repolling; the loop takes it at 20 us and polls the rest in budgets
//     of 8; after its stop the watchdog polls twice more on CPU 1, as
//     above.
func TestBusyLoopPrefer(t *testing.T) {
	cfg := napi.Config{Name: "d1", DeferHardIRQs: 2, GROFlushTimeout: 100 * sim.Microsecond}
	t.Run("stop defers", func(t *testing.T) {
		h, led, log, d, n, b := busyRig(cfg, 3)
		b.Prefer = true
		onCPU(h, 1, 500, func(w *sim.Work) {
			b.Iterate(w, n)
			b.Stop(w)
		})
		h.Run(sim.Millisecond)
		want := []pollRec{
			{dev: "d1", work: 3, at: 525},
			{dev: "d1", work: 0, at: 555},
			{dev: "d1", work: 0, at: 100655},
			{dev: "d1", work: 0, at: 200755, complete: true},
		}
		if !slices.Equal(*log, want) || n.TimerFires != 2 {
			t.Errorf("polls %+v (timer fires %d), want %+v (2)", *log, n.TimerFires, want)
		}
		if got := [2]uint64{h.Softnet[0].RxActions, h.Softnet[1].RxActions}; got != [2]uint64{0, 2} || n.Softnet() != h.Softnet[0] {
			t.Errorf("net_rx_action per CPU %v, want [0 2] (the watchdog fires on CPU 1); softnet back on CPU %d", got, n.Softnet().CPU().ID)
		}
		modeltest.Conservation(t, led, d)
	})
	t.Run("softirq yields", func(t *testing.T) {
		h, led, log, d, n, b := busyRig(cfg, 100)
		b.Prefer = true
		at(h.Eng, 0, func() { h.CPUs[0].RaiseIRQ(&slowIRQ{f: n.Schedule, d: 1000, fn: h.Funcs.ID("irq")}) })
		onCPU(h, 1, 500, func(w *sim.Work) { b.Iterate(w, n) })
		var took []int
		onCPU(h, 1, 20000, func(w *sim.Work) {
			for d.pending > 0 {
				took = append(took, b.Iterate(w, n))
			}
			b.Stop(w)
		})
		h.Run(sim.Millisecond)
		if len(*log) == 0 || (*log)[0] != (pollRec{dev: "d1", work: 64, at: 1100, rxActions: 1}) {
			t.Fatalf("first poll %+v, want the softirq's 64 at 1100", *log)
		}
		if !slices.Equal(took, []int{8, 8, 8, 8, 4}) || b.Misses != 1 {
			t.Errorf("the loop took %v after %d misses, want [8 8 8 8 4] after 1", took, b.Misses)
		}
		if h.Softnet[0].RxActions != 1 || h.Softnet[1].RxActions != 2 || n.TimerFires != 2 || !(*log)[len(*log)-1].complete {
			t.Errorf("net_rx_action %d on CPU 0 and %d on CPU 1, %d watchdog fires, last poll %+v; want 1, 2, 2, completing",
				h.Softnet[0].RxActions, h.Softnet[1].RxActions, n.TimerFires, (*log)[len(*log)-1])
		}
		modeltest.Conservation(t, led, d)
	})
}

// busyRig is two CPUs, a fake device with pending packets (10 ns each) and
// its NAPI (cfg) on CPU 0, and a busy loop of CPU 1 (25 ns per iteration);
// the device logs its polls in *log.
func busyRig(cfg napi.Config, pending int) (*modeltest.Harness, *pkt.Ledger, *[]pollRec, *fakeDev, *napi.NAPI, *napi.BusyLoop) {
	h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: costs})
	led, log := &pkt.Ledger{}, &[]pollRec{}
	d := newDev(cfg.Name, pending, 10, h.Funcs, led, h.Softnet[0], log)
	n := napi.New(cfg, d, h.Softnet[0])
	return h, led, log, d, n, napi.NewBusyLoop(h.Softnet[1], h.Funcs, 25)
}

// onCPU runs f as the one step of a new thread on cpu, woken at t.
func onCPU(h *modeltest.Harness, cpu int, t sim.Time, f func(w *sim.Work)) {
	th := h.CPUs[cpu].NewThread(fmt.Sprintf("reader@%d", t), "app", stepTask(f))
	at(h.Eng, t, func() { h.CPUs[cpu].Wake(th) })
}

type stepTask func(w *sim.Work)

func (f stepTask) Run(_ sim.Time, w *sim.Work) { f(w) }
func (f stepTask) Done(sim.Time) bool          { return false }

// TestScheduleOnThisCPU: __napi_schedule acts on the CPU it runs on. A
// NAPI of CPU 0 scheduled from CPU 1 (a poll there that reschedules
// itself) is polled by CPU 1's softirq; when it completes it is back on
// CPU 0, where its next IRQ schedules it. The poll CPU follows
// (OnPollCPU).
func TestScheduleOnThisCPU(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: costs})
	var led pkt.Ledger
	var log []pollRec
	d := newDev("d1", 10, 10, h.Funcs, &led, h.Softnet[0], &log)
	n := napi.New(napi.Config{Name: "d1"}, d, h.Softnet[0])
	var cpus []int
	n.OnPollCPU = func(cpu int) { cpus = append(cpus, cpu) }
	at(h.Eng, 0, func() { n.ScheduleOn(h.Softnet[1]) })
	at(h.Eng, 10000, func() { d.pending = 3; led.Offer(3); n.Schedule() })
	h.Run(sim.Millisecond)
	if got := [2]uint64{h.Softnet[0].RxActions, h.Softnet[1].RxActions}; got != [2]uint64{1, 1} {
		t.Errorf("net_rx_action per CPU %v, want [1 1]", got)
	}
	if !slices.Equal(cpus, []int{1, 0}) || n.PollCPU() != 0 || n.Softnet() != h.Softnet[0] {
		t.Errorf("poll CPUs %v, now %d on softnet %d; want [1 0], back on 0", cpus, n.PollCPU(), n.Softnet().CPU().ID)
	}
	modeltest.Conservation(t, &led, d)
}
