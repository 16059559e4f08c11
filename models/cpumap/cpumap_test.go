package cpumap_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/backlog"
	"github.com/rxsim/rxsim/models/cpumap"
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// sink is the stack on the remote CPU: it records how skbs arrive and ends
// them as delivered to the stack.
type sink struct {
	t                          *testing.T
	led                        *pkt.Ledger
	q                          *nic.Queue
	single, lists, skbs, bytes int
	withHash, withCsum         int
}

func (s *sink) take(p pkt.Packet) {
	s.skbs++
	if p.Hash != 0 {
		s.withHash++
	}
	if p.CsumOK {
		s.withCsum++
	}
	s.led.Deliver(pkt.ToStack, p.WireSegs())
	s.q.Release(p.WireSegs()) // the skb is freed: its page goes back
}

func (s *sink) ReceiveCore(w *sim.Work, cpu int, p pkt.Packet) { s.single++; s.take(p) }

func (s *sink) ReceiveList(w *sim.Work, cpu int, skbs []pkt.Packet) {
	s.lists++
	for _, p := range skbs {
		s.take(p)
	}
}

func (s *sink) DeliverSkb(w *sim.Work, cpu int, p pkt.Packet) { s.single++; s.take(p) }

// Test costs (ns): chosen round so expectations are computed by hand.
var costs = cpumap.Costs{
	BqFlushCall: 30, BqFlushPkt: 5, WakeSleeping: 150, WakeRunning: 30, ReturnFrame: 2,
	KthreadCall: 40, KthreadPkt: 4, ProgPkt: 6, Redirect: 12, Flush: 10,
	AllocCall: 16, AllocPkt: 18, BuildPkt: 35, GRO: gro.Costs{Attempt: 26},
}

type rig struct {
	h   *modeltest.Harness
	q   *nic.Queue
	m   *cpumap.Map
	e   *cpumap.Entry
	s   *sink
	bl  *backlog.Set
	qrs []pkt.Queuer
}

// newRig builds CPU 0 (RX queue with a redirect-cpu program to CPU 1) and
// CPU 1 (the cpumap entry), fed with pkts.
func newRig(t *testing.T, pkts []pkt.Packet, cfg cpumap.Config) *rig {
	h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: modeltest.NAPICosts{RxAction: 80, Poll: 40, Complete: 60}})
	prog := xdp.NewProgram("redirect-cpu", xdp.All{V: xdp.Redirect}, 5, h.Funcs)
	prog.CPUs, prog.Select = []int{1}, xdp.NoTouch{}
	q := h.AddQueue(modeltest.QueueConfig{CPU: 0, Pkts: pkts, ITRUsecs: 10, Prog: prog,
		Costs: nic.Costs{IRQ: 500, RxCall: 60, RxPkt: 16}, XDPCosts: xdp.Costs{Redirect: 12, Flush: 10},
		NAPI: napi.Config{Name: "rx0", Weight: 64}})
	s := &sink{t: t, led: &h.Led, q: q}
	r := &rig{h: h, q: q, s: s}
	if cfg.Delivery == cpumap.Backlog {
		r.bl = backlog.New(backlog.Config{}, backlog.Costs{Enqueue: 30, PollCall: 20, PollPkt: 10}, h.Funcs, h.Softnet, s, &h.Led, backlog.Releaser(func(uint16, int) {}))
		r.qrs = append(r.qrs, r.bl)
	}
	if cfg.Jiffy == 0 {
		cfg.Jiffy = sim.Millisecond
	}
	r.m = cpumap.New(cfg, costs, h.Funcs, h.CPUs, h.Softnet, s, r.bl, &h.Led, cpumap.Releaser(func(_ uint16, n int) { q.Release(n) }))
	r.e = r.m.Add(1, h.Funcs)
	q.Hook.Redir = r.m
	r.qrs = append(r.qrs, r.m)
	h.Start()
	return r
}

func (r *rig) check(t *testing.T) {
	t.Helper()
	r.h.Check(t, r.qrs...)
}

// One poll of 64 frames to one entry: the bulk queue of 8 fills 8 times; the
// first 7 are flushed mid-poll by bq_enqueue (no wake-up), the 8th at
// xdp_do_flush, which wakes the kthread once. 8 xdp_cpumap_enqueue events of
// 8 frames: bulk-avg 8.00.
func TestBulkQueueFlushPattern64(t *testing.T) {
	r := newRig(t, modeltest.Constant(64, 0, 0, 60, 1), cpumap.Config{QSize: 2048, Delivery: cpumap.List})
	r.h.Run(sim.Millisecond)
	st := r.e.Stats
	want := cpumap.EntryStats{Enqueued: 64, EnqueueEvents: 8, Flushes: 8, MidPollFlushes: 7, Wakes: 1, WakesSleeping: 1,
		Processed: 64, Iterations: 8, Sched: 1}
	if st != want {
		t.Errorf("stats\n got %+v\nwant %+v", st, want)
	}
	if got := r.e.Thread.Wakeups; got != 1 {
		t.Errorf("kthread wake-ups = %d, want 1", got)
	}
	if r.s.lists != 8 || r.s.skbs != 64 || r.s.single != 0 {
		t.Errorf("list delivery: %d lists, %d skbs, %d single; want 8, 64, 0", r.s.lists, r.s.skbs, r.s.single)
	}
	if r.s.withHash != 0 || r.s.withCsum != 0 {
		t.Errorf("skbs built from xdp_frames carry no hash or csum: %d with hash, %d with csum", r.s.withHash, r.s.withCsum)
	}
	// Remote CPU: 8 iterations of (40 + 8*4) kthread + (16 + 8*18) alloc +
	// 8*35 build = 72 + 160 + 280 = 512 ns; the sink costs nothing.
	if got := r.h.Busy(1, "kthread"); got != 8*512 {
		t.Errorf("kthread CPU time = %d ns, want %d", got, 8*512)
	}
	if r.e.Thread.Runnable() {
		t.Errorf("kthread runnable after draining the ring, want asleep")
	}
	r.check(t)
}

// With no consumer running during the poll, the ring takes qsize frames and
// drops the rest at bq_flush_to_queue; flushes that enqueue nothing are not
// xdp_cpumap_enqueue events (processed == 0).
func TestEnqueueDropsQsize(t *testing.T) {
	for _, tc := range []struct {
		qsize, enq, drops, events int
	}{
		{qsize: 32, enq: 32, drops: 32, events: 4},
		{qsize: 16, enq: 16, drops: 48, events: 2},
		{qsize: 20, enq: 20, drops: 44, events: 3}, // third flush: 4 in, 4 dropped
		{qsize: 64, enq: 64, drops: 0, events: 8},
	} {
		r := newRig(t, modeltest.Constant(64, 0, 0, 60, 1), cpumap.Config{QSize: tc.qsize, Delivery: cpumap.Single})
		r.h.Run(sim.Millisecond)
		st := r.e.Stats
		if int(st.Enqueued) != tc.enq || int(st.EnqueueDrops) != tc.drops || int(st.EnqueueEvents) != tc.events {
			t.Errorf("qsize %d: enqueued %d drops %d events %d, want %d %d %d", tc.qsize, st.Enqueued, st.EnqueueDrops, st.EnqueueEvents, tc.enq, tc.drops, tc.events)
		}
		if got := int(r.h.Led.Dropped[pkt.CpumapEnqueue]); got != tc.drops {
			t.Errorf("qsize %d: ledger cpumap_enqueue %d, want %d", tc.qsize, got, tc.drops)
		}
		if r.s.single != tc.enq {
			t.Errorf("qsize %d: single delivery of %d skbs, want %d", tc.qsize, r.s.single, tc.enq)
		}
		if r.q.Inflight != 0 {
			t.Errorf("qsize %d: %d buffers still in flight after drops and delivery", tc.qsize, r.q.Inflight)
		}
		r.check(t)
	}
}

// Two bursts 1 ms apart: the kthread sleeps on the empty ring after each and
// is woken once per burst by xdp_do_flush; each wake-up gives one sched.
func TestKthreadSleepsAndWakes(t *testing.T) {
	pkts := append(modeltest.Constant(64, 0, 0, 60, 1), modeltest.Constant(64, sim.Millisecond, 0, 60, 1)...)
	r := newRig(t, pkts, cpumap.Config{QSize: 2048, Delivery: cpumap.Single})
	r.h.Run(sim.Millisecond / 2)
	if r.e.Thread.Runnable() || r.e.Stats.Processed != 64 {
		t.Fatalf("after the first burst: runnable %v, processed %d; want asleep, 64", r.e.Thread.Runnable(), r.e.Stats.Processed)
	}
	r.h.Run(3 * sim.Millisecond)
	st := r.e.Stats
	if st.Wakes != 2 || st.WakesSleeping != 2 || st.Sched != 2 || st.Iterations != 16 || st.Processed != 128 {
		t.Errorf("wakes %d (sleeping %d) sched %d iterations %d processed %d, want 2 2 2 16 128",
			st.Wakes, st.WakesSleeping, st.Sched, st.Iterations, st.Processed)
	}
	if w, s := r.e.Thread.Wakeups, r.e.Thread.Scheds; w != 2 || s != 2 {
		t.Errorf("thread wakeups %d scheds %d, want 2 2", w, s)
	}
	r.check(t)
}

// Every delivery mode and remote action conserves packets under overload
// (enqueue drops) and delivers through its own path.
func TestConservationEachMode(t *testing.T) {
	for _, tc := range []struct {
		d      cpumap.Delivery
		remote cpumap.RemoteAction
	}{
		{cpumap.Single, cpumap.RemoteDisabled}, {cpumap.List, cpumap.RemoteDisabled}, {cpumap.GRO, cpumap.RemoteDisabled},
		{cpumap.NAPI, cpumap.RemoteDisabled}, {cpumap.Backlog, cpumap.RemoteDisabled},
		{cpumap.List, cpumap.RemotePass}, {cpumap.List, cpumap.RemoteDrop}, {cpumap.List, cpumap.RemoteRedirect},
	} {
		t.Run(tc.d.String()+"/"+[]string{"disabled", "pass", "drop", "redirect"}[tc.remote], func(t *testing.T) {
			g := gro.DefaultConfig()
			r := newRig(t, modeltest.Constant(5000, 0, 20, 60, 4), cpumap.Config{QSize: 64, Delivery: tc.d, Remote: tc.remote, GRO: g})
			r.h.Run(20 * sim.Microsecond) // mid-run: frames in flight
			r.check(t)
			r.h.Run(10 * sim.Millisecond)
			r.check(t)
			if r.m.Queued() != 0 {
				t.Errorf("%d frames left in the map after draining", r.m.Queued())
			}
			led := &r.h.Led
			switch tc.remote {
			case cpumap.RemoteDrop:
				if led.Dropped[pkt.CpumapProgDrop] == 0 || r.s.skbs != 0 {
					t.Errorf("remote drop: prog drops %d, skbs %d", led.Dropped[pkt.CpumapProgDrop], r.s.skbs)
				}
			case cpumap.RemoteRedirect:
				if led.Delivered[pkt.Redirected] == 0 || r.s.skbs != 0 {
					t.Errorf("remote redirect: redirected %d, skbs %d", led.Delivered[pkt.Redirected], r.s.skbs)
				}
			default:
				if r.s.skbs == 0 {
					t.Errorf("no skb reached the stack")
				}
			}
			if tc.d != cpumap.Backlog && tc.remote <= cpumap.RemotePass && led.Dropped[pkt.CpumapEnqueue] == 0 {
				t.Errorf("expected enqueue drops at 50 Mpps offered")
			}
			if tc.d == cpumap.Single && r.s.lists != 0 || tc.d == cpumap.List && r.s.single != 0 {
				t.Errorf("%s: %d single, %d lists", tc.d, r.s.single, r.s.lists)
			}
		})
	}
}
