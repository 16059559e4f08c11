package xdp_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// TestRules: All and ByFlow give exact verdicts per packet.
func TestRules(t *testing.T) {
	vs := []xdp.Verdict{xdp.Drop, xdp.Pass, xdp.TX}
	cases := []struct {
		name string
		rule xdp.Rule
		want func(flow uint32) xdp.Verdict
	}{
		{"all-drop", xdp.All{V: xdp.Drop}, func(uint32) xdp.Verdict { return xdp.Drop }},
		{"all-redirect", xdp.All{V: xdp.Redirect}, func(uint32) xdp.Verdict { return xdp.Redirect }},
		{"by-flow", xdp.ByFlow{Vs: vs}, func(f uint32) xdp.Verdict { return vs[f%3] }},
		{"by-flow-one", xdp.ByFlow{Vs: []xdp.Verdict{xdp.Pass}}, func(uint32) xdp.Verdict { return xdp.Pass }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for f := uint32(0); f < 100; f++ {
				if got := c.rule.Verdict(modeltest.Packet(0, f, 60)); got != c.want(f) {
					t.Fatalf("flow %d: %v, want %v", f, got, c.want(f))
				}
			}
		})
	}
}

// TestByFraction: shares drawn from a seeded stream land within 4.5
// binomial standard deviations of the requested fractions (for 100000
// packets and p = 0.25 that is +-0.62 %), and the same seed gives the
// same counts.
func TestByFraction(t *testing.T) {
	cases := []struct {
		fr []float64
		vs []xdp.Verdict
	}{
		{[]float64{0.25, 0.75}, []xdp.Verdict{xdp.Drop, xdp.Pass}},
		{[]float64{0.1, 0.2, 0.7}, []xdp.Verdict{xdp.Drop, xdp.TX, xdp.Redirect}},
		// Fewer fractions than verdicts: the last verdict takes the rest.
		{[]float64{0.5}, []xdp.Verdict{xdp.Drop, xdp.Pass}},
	}
	const n = 100000
	for _, c := range cases {
		run := func(seed uint64) ([8]int, []xdp.Verdict) {
			r := xdp.ByFraction{Fractions: c.fr, Vs: c.vs, Rng: sim.NewStreams(seed).Get("xdp/verdict")}
			var k [8]int
			seq := make([]xdp.Verdict, n)
			for i := range seq {
				seq[i] = r.Verdict(modeltest.Packet(0, 0, 60))
				k[seq[i]]++
			}
			return k, seq
		}
		k, s1 := run(1)
		k1b, s1b := run(1)
		_, s2 := run(2)
		same, same2 := k == k1b, 0
		for i := range s1 {
			same = same && s1[i] == s1b[i]
			if s1[i] == s2[i] {
				same2++
			}
		}
		if !same {
			t.Errorf("%v: same seed, different verdicts", c.fr)
		}
		if same2 == n {
			t.Errorf("%v: seeds 1 and 2 give identical verdict sequences", c.fr)
		}
		want := map[xdp.Verdict]float64{}
		rest := 1.0
		for i, f := range c.fr {
			want[c.vs[i]] += f
			rest -= f
		}
		if len(c.vs) > len(c.fr) {
			want[c.vs[len(c.vs)-1]] += rest
		}
		for v, p := range want {
			sd := math.Sqrt(n * p * (1 - p))
			if d := math.Abs(float64(k[v]) - n*p); d > 4.5*sd {
				t.Errorf("%v: %v got %d of %d, want %.0f +- %.0f", c.fr, v, k[v], n, n*p, 4.5*sd)
			}
		}
	}
}

// TestSelectors: redirect-cpu's CPU choice.
func TestSelectors(t *testing.T) {
	rr := &xdp.RoundRobin{N: 3}
	for i := 0; i < 10; i++ {
		if got := rr.Select(modeltest.Packet(0, 7, 60)); got != i%3 {
			t.Fatalf("round-robin packet %d: %d, want %d", i, got, i%3)
		}
	}
	if got := (xdp.NoTouch{}).Select(modeltest.Packet(0, 9, 60)); got != 0 {
		t.Errorf("no-touch: %d, want 0", got)
	}
	h := xdp.L4Hash{N: 4}
	used := [4]int{}
	for f := uint32(0); f < 1000; f++ {
		a := h.Select(modeltest.Packet(0, f, 60))
		if b := h.Select(modeltest.Packet(5, f, 1500)); a != b || a < 0 || a >= 4 {
			t.Fatalf("l4-hash flow %d: %d then %d", f, a, b)
		}
		used[a]++
	}
	for i, u := range used {
		if u < 150 { // 1000 flows over 4 CPUs: each should get ~250
			t.Errorf("l4-hash: CPU index %d got %d of 1000 flows", i, u)
		}
	}
	// Program.Run maps the index into the CPU list.
	funcs := sim.NewFuncs()
	p := xdp.NewProgram("redirect-cpu", xdp.All{V: xdp.Redirect}, 10, funcs)
	p.CPUs = []int{2, 5, 7}
	p.Select = &xdp.RoundRobin{N: 3}
	var w sim.Work
	for i, want := range []int{2, 5, 7, 2} {
		v, cpu := p.Run(&w, modeltest.Packet(0, 0, 60))
		if v != xdp.Redirect || cpu != want {
			t.Errorf("packet %d: %v to %d, want redirect to %d", i, v, cpu, want)
		}
	}
	if w.Total() != 40 || p.Counts[xdp.Redirect] != 4 {
		t.Errorf("program cost %d ns counts %v, want 40 ns and 4 redirects", w.Total(), p.Counts)
	}
}

// fakeRedir is a cpumap stand-in that holds what it is given.
type fakeRedir struct {
	enq     []int // targets
	flushes int
}

var _ xdp.Redirector = (*fakeRedir)(nil)

func (r *fakeRedir) Enqueue(w *sim.Work, rxCPU, target int, p pkt.Packet) {
	r.enq = append(r.enq, target)
}
func (r *fakeRedir) Flush(w *sim.Work, rxCPU int) { r.flushes++ }
func (r *fakeRedir) Queued() int                  { return len(r.enq) }

// fakeStack holds passed packets.
type fakeStack struct{ n int }

var _ xdp.Stack = (*fakeStack)(nil)

func (s *fakeStack) Receive(w *sim.Work, p pkt.Packet) { s.n++ }
func (s *fakeStack) Queued() int                       { return s.n }

var hookCosts = xdp.Costs{ReturnFrame: 2, TxPkt: 7, TxCall: 100, Redirect: 11, Flush: 50}

// TestHook runs "polls" (a list of per-packet verdicts by flow, then
// Finalize) through a Hook and checks the ledger, the bulked end-of-poll
// work and the charged cost, computed by hand from hookCosts and a 3 ns
// program: DROP 3+2, TX 3+7 (+100 once per poll with TX), REDIRECT 3+11
// (+50 xdp_do_flush once per poll with redirects), PASS 3.
func TestHook(t *testing.T) {
	vs := []xdp.Verdict{xdp.Drop, xdp.TX, xdp.Redirect, xdp.Pass, xdp.Aborted}
	cases := []struct {
		name      string
		polls     [][]uint32 // flows per poll; verdict = vs[flow % 5]
		redir     bool
		stack     bool
		doorbells uint64
		flushes   int
		cost      sim.Time
		held      int
	}{
		{"drop-only", [][]uint32{{0, 0, 0}}, true, true, 0, 0, 3 * 5, 0},
		{"tx-twice-one-poll", [][]uint32{{1, 1}}, true, true, 1, 0, 2*10 + 100, 0},
		{"tx-two-polls", [][]uint32{{1}, {1}, {0}}, true, true, 2, 0, 2*110 + 5, 0},
		{"redirect", [][]uint32{{2, 2, 2}, {0}}, true, true, 0, 1, 3*14 + 50 + 5, 3},
		// Redirect to a target outside the model: the driver still calls
		// xdp_do_flush at the end of the poll (ixgbe_clean_rx_irq step 7).
		{"redirect-no-map", [][]uint32{{2}}, false, true, 0, 0, 14 + 50, 0},
		{"pass-stack", [][]uint32{{3, 3}}, true, true, 0, 0, 6, 2},
		{"pass-no-stack", [][]uint32{{3}}, true, false, 0, 0, 3, 0},
		{"aborted", [][]uint32{{4}}, true, true, 0, 0, 5, 0},
		{"mixed", [][]uint32{{0, 1, 2, 3, 4, 1, 2}}, true, true, 1, 1, 5 + 10 + 14 + 3 + 5 + 10 + 14 + 100 + 50, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			funcs := sim.NewFuncs()
			var led pkt.Ledger
			prog := xdp.NewProgram("rule", xdp.ByFlow{Vs: vs}, 3, funcs)
			prog.CPUs, prog.Select = []int{1}, xdp.NoTouch{}
			h := xdp.NewHook(prog, 0, hookCosts, &led, funcs)
			r, s := &fakeRedir{}, &fakeStack{}
			if c.redir {
				h.Redir = r
			}
			if c.stack {
				h.Stack = s
			}
			var w sim.Work
			held := 0
			for _, poll := range c.polls {
				for _, f := range poll {
					led.Offer(1)
					if h.Rx(&w, modeltest.Packet(0, f, 60)) {
						held++
					}
				}
				h.Finalize(&w)
			}
			if h.TxDoorbells != c.doorbells || r.flushes != c.flushes || w.Total() != c.cost || held != c.held {
				t.Errorf("doorbells %d flushes %d cost %d held %d; want %d %d %d %d",
					h.TxDoorbells, r.flushes, w.Total(), held, c.doorbells, c.flushes, c.cost, c.held)
			}
			for _, tgt := range r.enq {
				if tgt != 1 {
					t.Errorf("enqueued to CPU %d, want 1", tgt)
				}
			}
			if int(led.Dropped[pkt.XDPDrop]) != int(prog.Counts[xdp.Drop]) || int(led.Dropped[pkt.XDPAborted]) != int(prog.Counts[xdp.Aborted]) {
				t.Errorf("ledger drops %v vs program counts %v", led.Dropped, prog.Counts)
			}
			modeltest.Conservation(t, &led, r, s)
		})
	}
}

// TestHookNoProgram: without an XDP program every packet goes to the
// stack, uncharged by XDP.
func TestHookNoProgram(t *testing.T) {
	funcs := sim.NewFuncs()
	var led pkt.Ledger
	h := xdp.NewHook(nil, 0, hookCosts, &led, funcs)
	var w sim.Work
	for i := 0; i < 10; i++ {
		led.Offer(1)
		h.Rx(&w, modeltest.Packet(0, 0, 60))
	}
	h.Finalize(&w)
	if w.Total() != 0 || h.Passed != 10 || led.Delivered[pkt.ToStack] != 10 {
		t.Errorf("cost %d passed %d stack %d; want 0 10 10", w.Total(), h.Passed, led.Delivered[pkt.ToStack])
	}
	modeltest.Conservation(t, &led)
}

// TestHookTxRing: with an XDP TX ring of 4 on a wire of one frame per
// 100 ns, XDP_TX frames hold their RX buffers until the TX clean at the end
// of a poll that runs after they left; a frame that finds the ring full is
// recycled and counted as xdp_tx_err. Poll 1 (6 frames from 0 ns): 4 are
// posted (they leave at about 100..400 ns), 2 dropped; its clean at 50 ns
// frees none. Poll 2, 1 us later (2 frames): the ring is still full until
// this poll's clean, so both are dropped; the clean frees the 4. Poll 3
// (1 frame): posted, and still on the wire at its clean.
func TestHookTxRing(t *testing.T) {
	funcs := sim.NewFuncs()
	var led pkt.Ledger
	prog := xdp.NewProgram("tx", xdp.All{V: xdp.TX}, 3, funcs)
	h := xdp.NewHook(prog, 0, hookCosts, &led, funcs)
	released := 0
	h.Tx, h.Release = xdp.NewTxRing(4, xdp.NewWire(1e7)), func(_ uint16, n int) { released += n }
	var w sim.Work
	var held, rel []int
	for i, n := range []int{6, 2, 1} {
		if i == 1 {
			w.Add(funcs.ID("gap"), sim.Microsecond)
		}
		hh := 0
		for range n {
			led.Offer(1)
			if h.Rx(&w, modeltest.Packet(0, 0, 60)) {
				hh++
			}
		}
		h.Finalize(&w)
		held, rel = append(held, hh), append(rel, released)
	}
	if fmt.Sprint(held, rel) != "[4 0 1] [0 4 4]" || h.TxErrors != 4 || led.Dropped[pkt.XDPTxErr] != 4 || h.Tx.InFlight() != 1 {
		t.Errorf("held %v released %v (cumulative), tx errors %d, ledger %d, in flight %d; want [4 0 1] [0 4 4], 4, 4, 1",
			held, rel, h.TxErrors, led.Dropped[pkt.XDPTxErr], h.Tx.InFlight())
	}
	modeltest.Conservation(t, &led)
}
