package napi_test

import (
	"fmt"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Costs used by every test here: net_rx_action 100 ns per invocation,
// __napi_poll and napi_complete_done free, no scheduler tick, so poll
// times can be computed by hand.
var costs = modeltest.NAPICosts{RxAction: 100}

func harness(sc napi.SoftnetConfig) *modeltest.Harness {
	return modeltest.New(modeltest.Config{CPUs: 1, Softnet: sc, NAPI: costs})
}

// devs makes one fake device (and its NAPI on CPU 0) per pending count.
func devs(h *modeltest.Harness, led *pkt.Ledger, log *[]pollRec, perPkt sim.Time, cfg napi.Config, pending ...int) ([]*fakeDev, []*napi.NAPI) {
	var ds []*fakeDev
	var ns []*napi.NAPI
	for i, p := range pending {
		d := newDev(fmt.Sprintf("d%d", i+1), p, perPkt, h.Funcs, led, h.Softnet[0], log)
		c := cfg
		c.Name = d.name
		ds = append(ds, d)
		ns = append(ns, napi.New(c, d, h.Softnet[0]))
	}
	return ds, ns
}

func queuers(ds []*fakeDev) []pkt.Queuer {
	var qs []pkt.Queuer
	for _, d := range ds {
		qs = append(qs, d)
	}
	return qs
}

// TestWeightAndRestartLimit: one NAPI with 1000 packets pending. Each poll
// takes exactly the weight (64); since a repolled NAPI waits on the repoll
// list, net_rx_action polls it once per invocation (§5.2: "if list empty
// ... break") and re-raises NET_RX; __do_softirq restarts 9 times (10
// invocations), then wakes ksoftirqd, which does the remaining 6 polls
// (15 x 64 + 40 = 1000). Budget 300 is never reached by one poll of 64,
// so time_squeeze stays 0. Timeline: an invocation is 100 ns + 64 x 100 ns
// = 6500 ns; poll k (k <= 10) enters at 6500(k-1) + 100; ksoftirqd is
// woken at 65000 and polls k = 11..16 at 65000 + 6500(k-11) + 100. The
// same with KsoftirqdDefer: no other thread competes.
func TestWeightAndRestartLimit(t *testing.T) {
	for _, deferMode := range []bool{false, true} {
		t.Run(fmt.Sprintf("ksoftirqd_defer=%v", deferMode), func(t *testing.T) {
			h := harness(napi.SoftnetConfig{KsoftirqdDefer: deferMode})
			var led pkt.Ledger
			var log []pollRec
			ds, ns := devs(h, &led, &log, 100, napi.Config{}, 1000)
			at(h.Eng, 0, ns[0].Schedule)
			h.Run(sim.Millisecond)
			if len(log) != 16 {
				t.Fatalf("%d polls, want 16", len(log))
			}
			for i, r := range log {
				k := i + 1
				wantWork, wantAt := 64, sim.Time(6500*(k-1)+100)
				if k == 16 {
					wantWork = 40
				}
				if k > 10 {
					wantAt = 65000 + sim.Time(6500*(k-11)+100)
				}
				if r.work != wantWork || r.at != wantAt || r.rxActions != uint64(k) {
					t.Errorf("poll %d: work %d at %d in invocation %d; want %d at %d in %d", k, r.work, r.at, r.rxActions, wantWork, wantAt, k)
				}
			}
			sn := h.Softnet[0]
			if sn.TimeSqueeze != 0 || sn.KsoftWakes != 1 || sn.RxActions != 16 {
				t.Errorf("time_squeeze %d ksoftirqd wakes %d invocations %d; want 0 1 16", sn.TimeSqueeze, sn.KsoftWakes, sn.RxActions)
			}
			if s, k := h.Busy(0, "softirq"), h.Busy(0, "ksoftirqd"); s != 65000 || k != 5*6500+100+4000 {
				t.Errorf("softirq %d ns ksoftirqd %d ns, want 65000 and 36600", s, k)
			}
			if ns[0].Scheduled() || ns[0].FullPolls != 15 || ns[0].Completes != 1 {
				t.Errorf("NAPI: scheduled %v full polls %d completes %d", ns[0].Scheduled(), ns[0].FullPolls, ns[0].Completes)
			}
			modeltest.Conservation(t, &led, queuers(ds)...)
		})
	}
}

// TestBudget: several NAPIs of 1000 packets on one CPU. Every invocation
// polls each once in list order; it stops when the budget is used up
// (budget -= work; budget <= 0 => time_squeeze++).
func TestBudget(t *testing.T) {
	cases := []struct {
		name        string
		napis       int
		budget      int
		perInvoc    int // polls in each of the first invocations
		wantSqueeze uint64
		wantActions uint64
	}{
		// 5 x 64 = 320 >= 300 after the 5th poll: squeeze; 15 rounds of
		// 64 squeeze, the 16th (5 x 40 = 200) ends with an empty list.
		{"5napis-300", 5, 300, 5, 15, 16},
		// 2 x 64 = 128 < 300: the list empties first, no squeeze; the two
		// alternate (repoll goes to the tail).
		{"2napis-300", 2, 300, 2, 0, 16},
		// 64 then 128 >= 100: every full round squeezes.
		{"2napis-100", 2, 100, 2, 15, 16},
		// 64 + 64 = 128 >= 128: squeeze at exactly zero budget.
		{"3napis-128", 3, 128, 2, 23, 24},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := harness(napi.SoftnetConfig{Budget: c.budget})
			var led pkt.Ledger
			var log []pollRec
			pend := make([]int, c.napis)
			for i := range pend {
				pend[i] = 1000
			}
			ds, ns := devs(h, &led, &log, 100, napi.Config{}, pend...)
			irq(h.Eng, h.CPUs[0], 0, func() {
				for _, n := range ns {
					n.Schedule()
				}
			})
			h.Run(100 * sim.Millisecond)
			if len(log) != 16*c.napis {
				t.Fatalf("%d polls, want %d", len(log), 16*c.napis)
			}
			// The first invocations poll perInvoc NAPIs, in round-robin order.
			for i := 0; i < 4*c.perInvoc; i++ {
				r := log[i]
				wantDev := fmt.Sprintf("d%d", i%c.napis+1)
				if r.dev != wantDev || r.rxActions != uint64(i/c.perInvoc+1) || r.work != 64 {
					t.Errorf("poll %d: %s in invocation %d work %d; want %s in %d work 64",
						i+1, r.dev, r.rxActions, r.work, wantDev, i/c.perInvoc+1)
				}
			}
			sn := h.Softnet[0]
			if sn.TimeSqueeze != c.wantSqueeze || sn.RxActions != c.wantActions {
				t.Errorf("time_squeeze %d invocations %d, want %d and %d", sn.TimeSqueeze, sn.RxActions, c.wantSqueeze, c.wantActions)
			}
			modeltest.Conservation(t, &led, queuers(ds)...)
		})
	}
}

// TestTimeLimit: 10 us per packet makes a 64-packet poll last 640 us, so
// the 2-jiffy limit (HZ 1000, netdev_budget_usecs default) ends an
// invocation before the budget. Invocation 1 starts at jiffy 0 (limit 2):
// polls end at 640.1, 1280.1, 1920.1, 2560.1 us; the 4th ends in jiffy 2
// => squeeze after 4 polls (256 < 300). 2.56 ms > MAX_SOFTIRQ_TIME, so
// ksoftirqd takes over; its invocation starts in jiffy 2 (limit 4) with the
// list d5 (rest of the local list) then d1..d4 (repolled, at the tail):
// d5, d1 end in jiffy 3, d2 ends at 4480.2 us in jiffy 4 => squeeze.
// With netdev_budget_usecs = 1000 (1 jiffy) invocation 1 stops after d2
// (1280.1 us, jiffy 1); 1.28 ms < 2 ms, so __do_softirq restarts inline:
// invocation 2 starts in jiffy 1 (limit 2) and stops after d3, d4.
func TestTimeLimit(t *testing.T) {
	cases := []struct {
		name      string
		usecs     int
		wantDevs  []string // first polls
		wantInv   []uint64
		wantLabel []string
	}{
		{"2jiffies", 0,
			[]string{"d1", "d2", "d3", "d4", "d5", "d1", "d2"},
			[]uint64{1, 1, 1, 1, 2, 2, 2},
			[]string{"softirq", "softirq", "softirq", "softirq", "ksoftirqd", "ksoftirqd", "ksoftirqd"}},
		{"1000us", 1000,
			[]string{"d1", "d2", "d3", "d4", "d5"},
			[]uint64{1, 1, 2, 2, 3},
			[]string{"softirq", "softirq", "softirq", "softirq", "ksoftirqd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := harness(napi.SoftnetConfig{BudgetUsecs: c.usecs, HZ: 1000})
			var led pkt.Ledger
			var log []pollRec
			ds, ns := devs(h, &led, &log, 10*sim.Microsecond, napi.Config{}, 1000, 1000, 1000, 1000, 1000)
			var labels []string
			for _, d := range ds {
				d.onPoll = func(int, *napi.NAPI) {
					l := "softirq"
					if h.Softnet[0].Ksoftirqd().Runnable() && !h.CPUs[0].InSoftirq() {
						l = "ksoftirqd"
					}
					labels = append(labels, l)
				}
			}
			irq(h.Eng, h.CPUs[0], 0, func() {
				for _, n := range ns {
					n.Schedule()
				}
			})
			h.Run(5 * sim.Millisecond)
			for i, want := range c.wantDevs {
				if log[i].dev != want || log[i].rxActions != c.wantInv[i] || labels[i] != c.wantLabel[i] {
					t.Errorf("poll %d: %s in invocation %d (%s); want %s in %d (%s)",
						i+1, log[i].dev, log[i].rxActions, labels[i], want, c.wantInv[i], c.wantLabel[i])
				}
			}
			sn := h.Softnet[0]
			if sn.TimeSqueeze < 2 || sn.KsoftWakes != 1 {
				t.Errorf("time_squeeze %d ksoftirqd wakes %d; want >= 2 and 1", sn.TimeSqueeze, sn.KsoftWakes)
			}
			modeltest.Conservation(t, &led, queuers(ds)...)
		})
	}
}

// TestRepollBehindNewArrivals: d1 (1000 packets) is polled at 100 ns and
// repolled; d2 is scheduled at 1 us, during that poll. The kernel rebuilds
// the poll list as rest-of-list + newly scheduled + repoll, so the next
// invocation (6500 ns) polls d2 (entry 6600, 5 x 100 ns) before d1 (7100).
func TestRepollBehindNewArrivals(t *testing.T) {
	h := harness(napi.SoftnetConfig{})
	var led pkt.Ledger
	var log []pollRec
	ds, ns := devs(h, &led, &log, 100, napi.Config{}, 1000, 5)
	at(h.Eng, 0, ns[0].Schedule)
	at(h.Eng, 1000, ns[1].Schedule)
	h.Run(sim.Millisecond)
	want := []pollRec{
		{dev: "d1", at: 100, work: 64, rxActions: 1},
		{dev: "d2", at: 6600, work: 5, rxActions: 2, complete: true},
		{dev: "d1", at: 7100, work: 64, rxActions: 2},
	}
	for i, w := range want {
		if log[i] != w {
			t.Errorf("poll %d: %+v, want %+v", i+1, log[i], w)
		}
	}
	modeltest.Conservation(t, &led, queuers(ds)...)
}

// TestMissed: napi_schedule while the NAPI is being polled sets MISSED;
// napi_complete_done then reschedules it and returns false (the driver
// must not re-enable its IRQ), and the NAPI is polled once more, in the
// same net_rx_action invocation.
func TestMissed(t *testing.T) {
	h := harness(napi.SoftnetConfig{})
	var led pkt.Ledger
	var log []pollRec
	ds, ns := devs(h, &led, &log, 100, napi.Config{}, 10)
	ds[0].onPoll = func(k int, n *napi.NAPI) {
		if k == 1 {
			n.Schedule()
		}
	}
	at(h.Eng, 0, ns[0].Schedule)
	h.Run(sim.Millisecond)
	want := []pollRec{
		{dev: "d1", at: 100, work: 10, rxActions: 1, complete: false},
		// Rescheduled onto sd->poll_list with no repoll pending: the same
		// invocation takes it ("goto start"), without a new net_rx_action.
		{dev: "d1", at: 1100, work: 0, rxActions: 1, complete: true},
	}
	if len(log) != len(want) {
		t.Fatalf("polls %+v, want %+v", log, want)
	}
	for i, w := range want {
		if log[i] != w {
			t.Errorf("poll %d: %+v, want %+v", i+1, log[i], w)
		}
	}
	if n := ns[0]; n.Schedules != 2 || n.Completes != 2 || n.Scheduled() {
		t.Errorf("schedules %d completes %d scheduled %v; want 2 2 false", n.Schedules, n.Completes, n.Scheduled())
	}
	modeltest.Conservation(t, &led, queuers(ds)...)
}

// appTask is a thread that always has work: steps of 50 us.
type appTask struct{ fn sim.FuncID }

func (a appTask) Run(now sim.Time, w *sim.Work) { w.Add(a.fn, 50*sim.Microsecond) }
func (a appTask) Done(sim.Time) bool            { return true }

// TestKsoftirqdDefer: an application thread runs in 50 us steps; d1 has
// 100000 packets. At t=0 the softirq preempts the app, runs 10 invocations
// (65 us) and wakes ksoftirqd; the app resumes at 65 us. Without
// CONFIG_IRQ_TIME_ACCOUNTING (the default) the 65 us of softirq on top of
// the app count as its runtime. d2 is scheduled at 200 us.
//   - CFS (up to v6.5): ksoftirqd is within a wake-up granularity of the
//     app, so it waits for the app's 750 us slice, used up after 14 steps at
//     765 us. No defer (v6.5): the softirq runs at once, polls d1 (entry
//     200.1 us) then d2 at 206.5 us. Defer (v4.9-v6.4): ksoftirqd is
//     runnable, so the softirq is left to it; d2 is polled in ksoftirqd's
//     first invocation at 765 us + 100 ns + 6400 ns = 771.5 us.
//   - EEVDF (v6.6+): the woken ksoftirqd is eligible and the app is not, so
//     it preempts the app at the end of its first step (115 us) and runs
//     invocations of 6.5 us from there; d2 is polled in the one that starts
//     at 199.5 us, after d1, at 206.1 us.
func TestKsoftirqdDefer(t *testing.T) {
	cfs, eevdf := sim.DefaultSched(), sim.DefaultSched()
	cfs.EEVDF = false
	for _, c := range []struct {
		deferMode bool
		sched     sim.Sched
		want      sim.Time
	}{{false, cfs, 206500}, {true, cfs, 771500}, {false, eevdf, 206100}} {
		t.Run(fmt.Sprintf("ksoftirqd_defer=%v/eevdf=%v", c.deferMode, c.sched.EEVDF), func(t *testing.T) {
			h := modeltest.New(modeltest.Config{CPUs: 1, Softnet: napi.SoftnetConfig{KsoftirqdDefer: c.deferMode}, NAPI: costs, Sched: &c.sched})
			var led pkt.Ledger
			var log []pollRec
			ds, ns := devs(h, &led, &log, 100, napi.Config{}, 100000, 5)
			app := h.CPUs[0].NewThread("app", "app", appTask{h.Funcs.ID("app")})
			at(h.Eng, 0, func() {
				h.CPUs[0].Wake(app)
				ns[0].Schedule()
			})
			at(h.Eng, 200*sim.Microsecond, ns[1].Schedule)
			h.Run(2 * sim.Millisecond)
			got := sim.Never
			for _, r := range log {
				if r.dev == "d2" {
					got = r.at
					break
				}
			}
			if got != c.want {
				t.Errorf("d2 first polled at %d ns, want %d", got, c.want)
			}
			modeltest.Conservation(t, &led, queuers(ds)...)
		})
	}
}

// TestThreaded: a threaded NAPI is polled in its kthread "napi/<name>"
// (CPU time under label napi), one __napi_poll per iteration, never in
// softirq: 16 polls of 1000 packets = 1000 x 100 ns + 16 x 10 ns (the
// __napi_poll cost here) = 100160 ns, no net_rx_action.
func TestThreaded(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: modeltest.NAPICosts{RxAction: 100, Poll: 10}})
	var led pkt.Ledger
	var log []pollRec
	ds, ns := devs(h, &led, &log, 100, napi.Config{}, 1000)
	ns[0].SetThreaded(h.CPUs[1])
	at(h.Eng, 0, ns[0].Schedule)
	h.Run(sim.Millisecond)
	if len(log) != 16 {
		t.Fatalf("%d polls, want 16", len(log))
	}
	if got := h.Busy(1, "napi"); got != 100160 {
		t.Errorf("napi thread busy %d ns, want 100160", got)
	}
	for cpu := 0; cpu < 2; cpu++ {
		if s := h.Busy(cpu, "softirq"); s != 0 {
			t.Errorf("cpu %d softirq busy %d ns, want 0", cpu, s)
		}
	}
	if h.Softnet[0].RxActions != 0 || ns[0].Thread().Name != "napi/d1" {
		t.Errorf("net_rx_action ran %d times; thread %q", h.Softnet[0].RxActions, ns[0].Thread().Name)
	}
	modeltest.Conservation(t, &led, queuers(ds)...)
}

// TestMaxSoftirqTimeInJiffies: __do_softirq restarts while
// time_before(jiffies, start_jiffies + msecs_to_jiffies(2)), so the window
// depends on the jiffy phase. One NAPI, 64 x perPkt per invocation, first
// scheduled at 900 us (jiffy 0):
//   - HZ 1000, 5 us/pkt: invocations of 320.1 us end at 900 + 320.1k us;
//     the 4th ends at 2180.4 us in jiffy 2 = 0 + 2 => hand-off after 4
//     (a 2 ms wall-clock window would allow 7).
//   - HZ 250, 10 us/pkt: msecs_to_jiffies(2) = 1 jiffy = 4 ms; the 5th
//     invocation ends at 4100.5 us in jiffy 1 => hand-off after 5 (2 ms would give 4).
func TestMaxSoftirqTimeInJiffies(t *testing.T) {
	for _, c := range []struct {
		hz         int
		perPkt     sim.Time
		wantInline int
	}{{1000, 5 * sim.Microsecond, 4}, {250, 10 * sim.Microsecond, 5}} {
		t.Run(fmt.Sprintf("HZ%d", c.hz), func(t *testing.T) {
			h := harness(napi.SoftnetConfig{HZ: c.hz})
			var led pkt.Ledger
			var log []pollRec
			ds, ns := devs(h, &led, &log, c.perPkt, napi.Config{}, 100000)
			inline := 0
			ds[0].onPoll = func(int, *napi.NAPI) {
				if h.Softnet[0].KsoftWakes == 0 {
					inline++
				}
			}
			at(h.Eng, 900*sim.Microsecond, ns[0].Schedule)
			h.Run(20 * sim.Millisecond)
			if inline != c.wantInline || h.Softnet[0].KsoftWakes != 1 {
				t.Errorf("%d invocations before the ksoftirqd hand-off (wakes %d), want %d", inline, h.Softnet[0].KsoftWakes, c.wantInline)
			}
			modeltest.Conservation(t, &led, queuers(ds)...)
		})
	}
}
