package nic_test

import (
	"fmt"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

const us = sim.Microsecond

// Small driver costs: a poll of k packets takes 50 + 20k ns (plus 5 ns
// per packet for the XDP program), the interrupt 100 ns.
var smallCosts = nic.Costs{IRQ: 100, RxCall: 50, RxPkt: 20}

// irqTimes steps the engine until until and returns the times at which
// q's interrupt fired.
func irqTimes(h *modeltest.Harness, q *nic.Queue, until sim.Time) []sim.Time {
	var ts []sim.Time
	last := q.IRQs
	for h.Eng.Step() && h.Eng.Now() <= until {
		if q.IRQs != last {
			ts = append(ts, h.Eng.Now())
			last = q.IRQs
		}
	}
	return ts
}

// TestIRQSpacingFixedITR: with ITR 50 us an interrupt fires when a packet
// is pending and 50 us have passed since the previous one, i.e. at
// max(first pending arrival, last + 50 us). Each poll (< 1 us) cleans what
// has arrived, so for arrivals every gap from 10 us:
//   - gap 20: 10, 60, 110, ... (the ITR paces);
//   - gap 80: at every arrival (10, 90, 170, ...);
//   - gap 35 (arrivals 10, 45, 80, 115, 150, 185, 220, 255, 290): 10,
//     max(45, 60) = 60, max(80, 110) = 110, max(115, 160) = 160 (cleans
//     115, 150), max(185, 210) = 210, max(220, 260) = 260 (220, 255),
//     max(290, 310) = 310.
func TestIRQSpacingFixedITR(t *testing.T) {
	cases := []struct {
		gap  sim.Time
		want []sim.Time // first IRQs, us
	}{
		{20 * us, []sim.Time{10, 60, 110, 160, 210, 260}},
		{80 * us, []sim.Time{10, 90, 170, 250, 330}},
		{35 * us, []sim.Time{10, 60, 110, 160, 210, 260, 310}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("gap%dus", c.gap/us), func(t *testing.T) {
			h := modeltest.New(modeltest.Config{})
			q := h.AddQueue(modeltest.QueueConfig{
				Pkts: modeltest.Constant(200, 10*us, c.gap, 60, 1), ITRUsecs: 50, Costs: smallCosts,
				Prog: h.Drop(5),
			})
			h.Start()
			ts := irqTimes(h, q, 20*sim.Millisecond)
			for i, w := range c.want {
				if i >= len(ts) || ts[i] != w*us {
					t.Fatalf("IRQs at %v, want %v us first", ts[:min(len(ts), len(c.want))], c.want)
				}
			}
			// Every IRQ: at least 50 us after the previous one, and at
			// max(first pending arrival, previous + 50 us).
			next := 0 // index of the first packet not cleaned before the IRQ
			for i, at := range ts {
				for next < 200 && 10*us+sim.Time(next)*c.gap < ts[max(i-1, 0)]+us && i > 0 {
					next++
				}
				want := 10*us + sim.Time(next)*c.gap
				if i > 0 {
					want = max(want, ts[i-1]+50*us)
				}
				if at != want {
					t.Fatalf("IRQ %d at %d, want %d", i, at, want)
				}
			}
			if q.IRQs == 0 || h.Led.Dropped[pkt.XDPDrop] != 200 {
				t.Errorf("irqs %d xdp_drop %d, want all 200 dropped by XDP", q.IRQs, h.Led.Dropped[pkt.XDPDrop])
			}
			h.Check(t)
		})
	}
}

// TestAdaptiveITRSettles: ixgbe's adaptive ITR at 64 B line rate (one
// 60 B frame every 67 ns, 14.9 Mpps), from the default start (EITR 50 us).
//
// With the cost profile's magnitudes (26 ns per packet, ~700 ns per
// interrupt and poll round) a completion that counts >= 256 packets of avg
// 60 B is bulk: 5120 -> ceil(5120/512)*2 = 20 us. Draining that backlog
// (while more arrives) keeps NAPI busy past the next 20 us mark, so the
// interrupt after the completion fires at the next arrival and the
// completion after it counts < 48 packets: cur + 2 = 22 us; the next one is
// bulk again. The interval alternates 20/22 us; every bulk completion sets
// 20 us.
//
// With an almost free poll (1 ns per packet) every completion counts the
// ~149 packets of a 10 us interval: 96..255 halves towards the 10 us
// minimum, the algorithm's other fixed point at this rate (the kernel's
// rule, §2.5 step 4): interrupts every 10 us exactly.
func TestAdaptiveITRSettles(t *testing.T) {
	cases := []struct {
		name      string
		costs     nic.Costs
		napi      modeltest.NAPICosts
		prog, ret float64
		want      []int64 // intervals seen after the warm-up, ns
	}{
		{"profile-costs", nic.Costs{IRQ: 500, RxCall: 60, RxPkt: 16, RefillCall: 80, RefillPk: 3},
			modeltest.NAPICosts{RxAction: 80, Poll: 40, Complete: 60}, 5, 2, []int64{20000, 22000}},
		{"free-poll", nic.Costs{IRQ: 1, RxCall: 1, RxPkt: 1}, modeltest.NAPICosts{}, 0, 0, []int64{10000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := modeltest.New(modeltest.Config{NAPI: c.napi})
			const n = 45000 // 3 ms
			q := h.AddQueue(modeltest.QueueConfig{
				Pkts: modeltest.Constant(n, 67, 67, 60, 1), ITRUsecs: 50, Adaptive: true, Gbps: 10,
				Costs: c.costs, Prog: h.Drop(c.prog), XDPCosts: xdp.Costs{ReturnFrame: c.ret},
			})
			itr := h.ITRs[0]
			h.Start()
			h.Run(sim.Millisecond) // warm-up: the ring overflows while EITR is 50 us
			missed := h.Led.Dropped[pkt.RxMissed]
			seen := map[int64]int{}
			var ts []sim.Time
			last := q.IRQs
			for h.Eng.Step() && h.Eng.Now() <= 3*sim.Millisecond {
				seen[itr.IntervalNS()]++
				if q.IRQs != last {
					ts = append(ts, h.Eng.Now())
					last = q.IRQs
				}
			}
			for v := range seen {
				ok := false
				for _, w := range c.want {
					ok = ok || v == w
				}
				if !ok {
					t.Errorf("interval %d ns seen after the warm-up, want only %v", v, c.want)
				}
			}
			for _, w := range c.want {
				if seen[w] == 0 {
					t.Errorf("interval %d ns never seen after the warm-up", w)
				}
			}
			for i := 1; i < len(ts); i++ {
				if d := ts[i] - ts[i-1]; d < sim.Time(c.want[0]) {
					t.Fatalf("IRQs %d ns apart at %d, below the %d ns ITR", d, ts[i], c.want[0])
				}
			}
			if len(c.want) == 1 {
				for i := 1; i < len(ts); i++ {
					if d := ts[i] - ts[i-1]; d != sim.Time(c.want[0]) {
						t.Fatalf("IRQ spacing %d ns at %d, want exactly %d", d, ts[i], c.want[0])
					}
				}
			}
			if d := h.Led.Dropped[pkt.RxMissed] - missed; d != 0 {
				t.Errorf("%d rx_missed after the warm-up, want 0", d)
			}
			h.Check(t)
		})
	}
}

// TestCompleteDoneReenablesIRQ: the driver calls napi_complete_done and
// re-enables its vector only when a poll did less than the weight. n
// packets arrive at 1 us: 63 -> one poll; 64 -> a full poll (IRQ stays
// masked, NAPI repolled) then an empty one that completes; 130 -> 64, 64, 2.
// Every packet is XDP-dropped (nothing missed in a 1024 ring).
func TestCompleteDoneReenablesIRQ(t *testing.T) {
	cases := []struct {
		n, polls  int
		fullPolls uint64
	}{{1, 1, 0}, {63, 1, 0}, {64, 2, 1}, {65, 2, 1}, {128, 3, 2}, {130, 3, 2},
		// 1000 pending in a 1024 ring: 15 polls of exactly 64, one of 40.
		{1000, 16, 15}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			h := modeltest.New(modeltest.Config{})
			q := h.AddQueue(modeltest.QueueConfig{Pkts: modeltest.Constant(c.n, us, 0, 60, 1), ITRUsecs: 0,
				RingSize: 1024, Costs: smallCosts, Prog: h.Drop(5)})
			h.Start()
			masked := 0 // polls that ended with the vector still masked
			for h.Eng.Step() {
				if q.NAPI.Scheduled() && !q.IRQEnabled() {
					masked++
				}
			}
			if int(q.Polls) != c.polls || q.NAPI.FullPolls != c.fullPolls || q.NAPI.Completes != 1 || q.IRQs != 1 {
				t.Errorf("polls %d full %d completes %d irqs %d; want %d %d 1 1", q.Polls, q.NAPI.FullPolls, q.NAPI.Completes, q.IRQs, c.polls, c.fullPolls)
			}
			if !q.IRQEnabled() || q.NAPI.Scheduled() {
				t.Errorf("after the last poll: irq enabled %v, scheduled %v", q.IRQEnabled(), q.NAPI.Scheduled())
			}
			if masked == 0 {
				t.Errorf("the vector was never seen masked while NAPI ran")
			}
			if q.NAPI.Work != uint64(c.n) || h.Led.Dropped[pkt.XDPDrop] != uint64(c.n) {
				t.Errorf("work %d xdp_drop %d, want %d", q.NAPI.Work, h.Led.Dropped[pkt.XDPDrop], c.n)
			}
			h.Check(t)
		})
	}
}

// TestRefillBatches: the refill runs inside the poll loop when 16
// descriptors have been cleaned (IXGBE_RX_BUFFER_WRITE), one tail write
// per batch, never after the loop. 40 packets in one poll: refills before
// descriptors 17 and 33 (2 batches of 16), 8 left cleaned; driver_refill
// costs 2 x 100 + 32 x 1 = 232 ns.
func TestRefillBatches(t *testing.T) {
	h := modeltest.New(modeltest.Config{})
	costs := smallCosts
	costs.RefillCall, costs.RefillPk = 100, 1
	q := h.AddQueue(modeltest.QueueConfig{Pkts: modeltest.Constant(40, us, 0, 60, 1), RingSize: 64,
		Costs: costs, Prog: h.Drop(5)})
	h.Start()
	h.Run(sim.Millisecond)
	if q.Polls != 1 || q.Ring.Cleaned() != 8 || q.Ring.PostedForTest() != 63-8 {
		t.Errorf("polls %d cleaned %d posted %d; want 1 8 55", q.Polls, q.Ring.Cleaned(), q.Ring.PostedForTest())
	}
	if got := funcTime(h, 0, "driver_refill"); got != 232 {
		t.Errorf("driver_refill %d ns, want 232", got)
	}
	h.Check(t)
}

// TestDeferHardIRQs: napi_defer_hard_irqs = N with gro_flush_timeout = T
// keeps the vector masked after a non-empty poll and polls every T from
// the napi_watchdog hrtimer, giving up (re-enabling the IRQ) after N
// consecutive empty polls. 10 packets at 1 us and 5 at 15 us, T = 20 us:
// poll 1 (IRQ, 10 packets), poll 2 (timer, 5 packets: count reset to N),
// then N empty timer polls; one IRQ in all. Without deferral the second
// burst needs its own IRQ; with T = 0 deferral does nothing (§5.4: the
// driver may re-enable only when there is no timeout).
func TestDeferHardIRQs(t *testing.T) {
	cases := []struct {
		name          string
		defers        int
		timeout       sim.Time
		polls, timers uint64
		irqs          uint64
	}{
		{"defer2", 2, 20 * us, 4, 3, 1},
		{"defer3", 3, 20 * us, 5, 4, 1},
		{"defer1", 1, 20 * us, 3, 2, 1},
		{"no-defer", 0, 20 * us, 2, 0, 2},
		{"defer-no-timeout", 2, 0, 2, 0, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := modeltest.New(modeltest.Config{})
			pk := append(modeltest.Constant(10, us, 0, 60, 1), modeltest.Constant(5, 15*us, 0, 60, 1)...)
			q := h.AddQueue(modeltest.QueueConfig{Pkts: pk, ITRUsecs: 0, Costs: smallCosts, Prog: h.Drop(5),
				NAPI: napi.Config{DeferHardIRQs: c.defers, GROFlushTimeout: c.timeout}})
			h.Start()
			h.Run(sim.Millisecond)
			n := q.NAPI
			if n.Polls != c.polls || n.TimerFires != c.timers || q.IRQs != c.irqs {
				t.Errorf("polls %d timer polls %d irqs %d; want %d %d %d", n.Polls, n.TimerFires, q.IRQs, c.polls, c.timers, c.irqs)
			}
			if !q.IRQEnabled() {
				t.Errorf("IRQ still masked at the end")
			}
			if h.Led.Dropped[pkt.XDPDrop] != 15 {
				t.Errorf("xdp_drop %d, want 15", h.Led.Dropped[pkt.XDPDrop])
			}
			h.Check(t)
		})
	}
}

// TestThreadedNAPIQueue: with threaded NAPI the hard IRQ (on CPU 0) wakes
// the NAPI kthread (on CPU 1) instead of raising NET_RX: no softirq time
// anywhere, the poll's cost under "napi" on CPU 1, the interrupt's under
// "hardirq" on CPU 0. 100 packets 1 us apart with ITR 0: one IRQ per
// packet (each poll completes before the next arrival), poll cost 50 + 20
// + 5 (program) = 75 ns each.
func TestThreadedNAPIQueue(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 2})
	q := h.AddQueue(modeltest.QueueConfig{Pkts: modeltest.Constant(100, us, us, 60, 1), ITRUsecs: 0,
		Costs: smallCosts, Prog: h.Drop(5), Threaded: true, ThreadCPU: 1})
	h.Start()
	h.Run(sim.Millisecond)
	if q.IRQs != 100 || q.Polls != 100 {
		t.Errorf("irqs %d polls %d, want 100 and 100", q.IRQs, q.Polls)
	}
	if s0, s1 := h.Busy(0, "softirq"), h.Busy(1, "softirq"); s0 != 0 || s1 != 0 {
		t.Errorf("softirq time %d/%d ns, want none", s0, s1)
	}
	if got := h.Busy(1, "napi"); got != 100*75 {
		t.Errorf("napi thread %d ns, want %d", got, 100*75)
	}
	if got := h.Busy(0, "hardirq"); got != 100*100 {
		t.Errorf("hardirq on CPU 0 %d ns, want %d", got, 100*100)
	}
	if h.Led.Dropped[pkt.XDPDrop] != 100 {
		t.Errorf("xdp_drop %d, want 100", h.Led.Dropped[pkt.XDPDrop])
	}
	h.Check(t)
}

// holdStack is an XDP_PASS receiver that keeps every packet (a socket
// nobody reads) or frees it at once, releasing the buffer to the queue.
type holdStack struct {
	q       *nic.Queue
	held    int
	release bool
	led     *pkt.Ledger
}

func (s *holdStack) Receive(w *sim.Work, p pkt.Packet) {
	if s.release {
		s.led.Deliver(pkt.ToSocket, 1)
		s.q.Release(1)
		return
	}
	s.held++
}

func (s *holdStack) Queued() int { return s.held }

// TestPageReuse (§2.4 model rule): a refill needs new pages for the
// buffers whose page is still in flight beyond a ring's worth. Ring 64,
// refill batch 16, one packet per poll (1 us apart, ITR 0): refills run
// at the start of polls 17, 33, ..., 193 with 16, 32, ..., 192 buffers in
// flight; those with 80..192 in flight (8 refills) exceed 64 by >= 16 and
// allocate 16 pages each: 128 page_alloc at 45 ns. If the stack frees each
// buffer at once, pages are always reused.
func TestPageReuse(t *testing.T) {
	for _, c := range []struct {
		release bool
		allocs  uint64
	}{{false, 128}, {true, 0}} {
		t.Run(fmt.Sprintf("release=%v", c.release), func(t *testing.T) {
			h := modeltest.New(modeltest.Config{})
			costs := smallCosts
			costs.PageAlloc = 45
			pass := xdp.NewProgram("pass", xdp.All{V: xdp.Pass}, 5, h.Funcs)
			q := h.AddQueue(modeltest.QueueConfig{Pkts: modeltest.Constant(200, us, us, 60, 1), RingSize: 64,
				ITRUsecs: 0, Costs: costs, Prog: pass})
			st := &holdStack{q: q, release: c.release, led: &h.Led}
			q.Hook.Stack = st
			h.Start()
			h.Run(sim.Millisecond)
			if q.Polls != 200 || q.PageAllocs != c.allocs {
				t.Errorf("polls %d page allocs %d, want 200 and %d", q.Polls, q.PageAllocs, c.allocs)
			}
			if got := funcTime(h, 0, "page_alloc"); got != sim.Time(45*c.allocs) {
				t.Errorf("page_alloc %d ns, want %d", got, 45*c.allocs)
			}
			if want := 200 * btoi(!c.release); q.Inflight != want {
				t.Errorf("inflight %d, want %d", q.Inflight, want)
			}
			h.Check(t, st)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// funcTime returns the CPU time charged to fn on cpu.
func funcTime(h *modeltest.Harness, cpu int, fn string) sim.Time {
	id := int(h.Funcs.ID(fn))
	if f := h.Acct.ByFunc[cpu]; id < len(f) {
		return f[id]
	}
	return 0
}
