package napi_test

import (
	"fmt"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// pusher is a reader on another CPU: each step pushes n skbs of segs
// buffers (RX queue 3) to sn's defer list, as tcp_eat_recv_skb does.
type pusher struct {
	sn       *napi.Softnet
	n, segs  int
	deferred int
	local    int
}

func (p *pusher) Run(now sim.Time, w *sim.Work) {
	for range p.n {
		if p.sn.DeferFree(w, 3, p.segs) {
			p.deferred++
		} else {
			p.local++
		}
	}
}

func (p *pusher) Done(now sim.Time) bool { return false }

var deferCosts = napi.DeferCosts{Push: 10, FreeSkb: 20, FreeSeg: 15, IPISend: 100, IPIHandler: 400} // 50 ns per skb of 2 segments

// TestDeferFree: skb_attempt_defer_free from CPU 1 towards CPU 0 with
// skb_defer_max 8. The list takes at most 8 skbs (the reader frees the
// rest); the push that finds it half full (4) kicks one IPI, whose NET_RX
// flushes the list on CPU 0 even though no NAPI is scheduled there; a NAPI
// poll of CPU 0 flushes it too; every freed skb returns its buffers to its
// RX queue. With skb_defer_max 0 nothing is deferred.
func TestDeferFree(t *testing.T) {
	cases := []struct {
		max, pushes     int
		napiAt          sim.Time // 0: no NAPI traffic on CPU 0
		deferred, local int
		kicks           uint64
	}{
		{max: 0, pushes: 5, local: 5},
		{max: 8, pushes: 3, deferred: 3}, // below half: nobody flushes
		{max: 8, pushes: 3, napiAt: 5000, deferred: 3},
		{max: 8, pushes: 5, deferred: 5, kicks: 1},
		{max: 8, pushes: 12, deferred: 8, local: 4, kicks: 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("max=%d/pushes=%d/napi=%v", c.max, c.pushes, c.napiAt), func(t *testing.T) {
			h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: costs})
			sn := h.Softnet[0]
			released := map[uint16]int{}
			sn.EnableDefer(c.max, deferCosts, h.Funcs, func(q uint16, n int) { released[q] += n })
			p := &pusher{sn: sn, n: c.pushes, segs: 2}
			th := h.CPUs[1].NewThread("reader", "app", p)
			at(h.Eng, 1000, func() { h.CPUs[1].Wake(th) })
			var led pkt.Ledger
			var log []pollRec
			if c.napiAt > 0 {
				_, ns := devs(h, &led, &log, 100, napi.Config{}, 1)
				at(h.Eng, c.napiAt, ns[0].Schedule)
			}
			h.Run(sim.Millisecond)
			if p.deferred != c.deferred || p.local != c.local || sn.Defer.Kicks != c.kicks {
				t.Fatalf("deferred %d, freed locally %d, kicks %d; want %d, %d, %d",
					p.deferred, p.local, sn.Defer.Kicks, c.deferred, c.local, c.kicks)
			}
			flushed := c.kicks > 0 || c.napiAt > 0
			wantFreed, wantLeft := c.deferred, 0
			if !flushed {
				wantFreed, wantLeft = 0, c.deferred
			}
			if int(sn.Defer.Freed) != wantFreed || sn.Deferred() != wantLeft || released[3] != 2*wantFreed {
				t.Errorf("freed %d, left %d, buffers released %d; want %d, %d, %d",
					sn.Defer.Freed, sn.Deferred(), released[3], wantFreed, wantLeft, 2*wantFreed)
			}
			// CPU time: the pushes on CPU 1; the frees, and the IPI with its
			// net_rx_action, on CPU 0.
			if got, want := fnTime(h, 1, "skb_attempt_defer_free"), sim.Time(10*c.deferred); got != want {
				t.Errorf("CPU 1 push time %v, want %v", got, want)
			}
			if got, want := fnTime(h, 0, "skb_release_data"), sim.Time(50*wantFreed); got != want {
				t.Errorf("CPU 0 free time %v, want %v", got, want)
			}
			if got, want := fnTime(h, 0, "ipi_handler"), sim.Time(400*c.kicks); got != want {
				t.Errorf("CPU 0 IPI time %v, want %v", got, want)
			}
		})
	}
}

// TestDeferFlushWaitsForPush: a flush frees only what was pushed by its
// own clock; a push from a step whose clock is ahead stays on the list
// for the next flush.
func TestDeferFlushWaitsForPush(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: costs})
	sn := h.Softnet[0]
	sn.EnableDefer(8, deferCosts, h.Funcs, nil)
	// the reader's step starts at 1000 and pushes after 5000 ns of work
	slow := &slowPusher{sn: sn, before: 5000, fn: h.Funcs.ID("tcp_recvmsg")}
	th := h.CPUs[1].NewThread("reader", "app", slow)
	at(h.Eng, 1000, func() { h.CPUs[1].Wake(th) })
	var led pkt.Ledger
	var log []pollRec
	_, ns := devs(h, &led, &log, 100, napi.Config{}, 1, 1)
	at(h.Eng, 2000, ns[0].Schedule) // net_rx_action at 2000: the push (6000) is ahead
	h.Run(4000)
	if sn.Defer.Freed != 0 || sn.Deferred() != 1 {
		t.Fatalf("after the early flush: freed %d, left %d; want 0, 1", sn.Defer.Freed, sn.Deferred())
	}
	at(h.Eng, 10000, ns[1].Schedule)
	h.Run(sim.Millisecond)
	if sn.Defer.Freed != 1 || sn.Deferred() != 0 {
		t.Errorf("after the later flush: freed %d, left %d; want 1, 0", sn.Defer.Freed, sn.Deferred())
	}
}

type slowPusher struct {
	sn     *napi.Softnet
	before sim.Time
	fn     sim.FuncID
}

func (p *slowPusher) Run(now sim.Time, w *sim.Work) {
	w.Add(p.fn, p.before)
	p.sn.DeferFree(w, 0, 1)
}

func (p *slowPusher) Done(now sim.Time) bool { return false }

// fnTime is the CPU time cpu spent in function name.
func fnTime(h *modeltest.Harness, cpu int, name string) sim.Time {
	id := h.Funcs.ID(name)
	if f := h.Acct.ByFunc[cpu]; int(id) < len(f) {
		return f[id]
	}
	return 0
}
