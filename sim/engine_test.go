package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type fired struct {
	at  Time
	arg int64
}

// recorder records the events it receives.
type recorder struct{ got []fired }

func (r *recorder) Fire(now Time, arg int64) { r.got = append(r.got, fired{now, arg}) }

func TestEngineTiesInInsertionOrder(t *testing.T) {
	e := NewEngine(0)
	r := &recorder{}
	for i := range 100 {
		e.Schedule(5, r, int64(i))
	}
	e.Run(Never)
	for i, f := range r.got {
		if f.arg != int64(i) || f.at != 5 {
			t.Fatalf("event %d = %+v, want arg %d at 5ns (ties fire in insertion order)", i, f, i)
		}
	}
	if len(r.got) != 100 || e.Fired() != 100 || e.Pending() != 0 {
		t.Errorf("fired %d (Fired() = %d), pending %d; want 100, 100, 0", len(r.got), e.Fired(), e.Pending())
	}
}

// TestEngineOrderMatchesSortedReference schedules a seeded random set of
// events with many ties, and checks the firing order against a stable sort
// by time (stable: ties keep insertion order, i.e. sequence order).
func TestEngineOrderMatchesSortedReference(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		rng := rand.New(rand.NewPCG(seed, 0))
		e := NewEngine(16) // small: the heap grows
		r := &recorder{}
		var ref []fired
		for i := range 5000 {
			at := Time(rng.IntN(300)) // ~17 events per instant
			e.Schedule(at, r, int64(i))
			ref = append(ref, fired{at, int64(i)})
		}
		slices.SortStableFunc(ref, func(a, b fired) int { return int(a.at - b.at) })
		e.Run(Never)
		if !slices.Equal(r.got, ref) {
			t.Fatalf("seed %d: firing order differs from the (time, seq) reference", seed)
		}
	}
}

// TestEngineDynamicMatchesReference: handlers schedule new events (some at
// the current instant, some in the past) while the queue drains; a naive
// reference queue that scans for the least (time, seq) gives the same order.
func TestEngineDynamicMatchesReference(t *testing.T) {
	type ev struct {
		at  Time
		seq int
		arg int64
	}
	const n = 3000
	// The engine run.
	rng := rand.New(rand.NewPCG(7, 7))
	e := NewEngine(0)
	var got []fired
	next := int64(0)
	var h HandlerFunc
	h = func(now Time, arg int64) {
		got = append(got, fired{now, arg})
		for range rng.IntN(4) {
			if next < n {
				next++
				e.Schedule(now+Time(rng.IntN(20))-5, h, next) // -5: sometimes in the past
			}
		}
	}
	for range 10 {
		next++
		e.Schedule(Time(rng.IntN(20)), h, next)
	}
	e.Run(Never)

	// The reference run with the same random draws.
	rng = rand.New(rand.NewPCG(7, 7))
	var q []ev
	var want []fired
	seq, now := 0, Time(0)
	next = 0
	sched := func(at Time, arg int64) {
		seq++
		q = append(q, ev{max(at, now), seq, arg})
	}
	for range 10 {
		next++
		sched(Time(rng.IntN(20)), next)
	}
	for len(q) > 0 {
		best := 0
		for i, x := range q {
			if x.at < q[best].at || x.at == q[best].at && x.seq < q[best].seq {
				best = i
			}
		}
		x := q[best]
		q = slices.Delete(q, best, best+1)
		now = x.at
		want = append(want, fired{x.at, x.arg})
		for range rng.IntN(4) {
			if next < n {
				next++
				sched(now+Time(rng.IntN(20))-5, next)
			}
		}
	}
	if len(got) < 100 {
		t.Fatalf("only %d events fired; the test needs more", len(got))
	}
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("event %d: got %+v, reference %+v (of %d, %d)", i, got[i], want[i], len(got), len(want))
			}
		}
		t.Fatalf("got %d events, reference %d", len(got), len(want))
	}
}

func TestEngineRunUntil(t *testing.T) {
	e := NewEngine(4)
	r := &recorder{}
	for _, at := range []Time{10, 20, 30} {
		e.Schedule(at, r, int64(at))
	}
	steps := []struct {
		until   Time
		fired   int // total so far
		now     Time
		pending int
	}{
		{20, 2, 20, 1}, // events at until fire
		{25, 2, 25, 1}, // no event: the clock still advances to until
		{5, 2, 25, 1},  // until in the past: nothing happens, the clock never goes back
		{Never, 3, 30, 0},
		{Never, 3, 30, 0}, // empty queue: the clock stays at the last event
		{100, 3, 100, 0},
	}
	for _, s := range steps {
		e.Run(s.until)
		if len(r.got) != s.fired || e.Now() != s.now || e.Pending() != s.pending {
			t.Errorf("Run(%v): fired %d, Now %v, Pending %d; want %d, %v, %d",
				s.until, len(r.got), e.Now(), e.Pending(), s.fired, s.now, s.pending)
		}
	}
}

func TestEngineStop(t *testing.T) {
	e := NewEngine(4)
	r := &recorder{}
	e.Schedule(10, HandlerFunc(func(now Time, _ int64) { e.Stop(15) }), 0)
	e.Schedule(15, r, 15)
	e.Schedule(20, r, 20)
	e.Run(Never)
	if len(r.got) != 1 || r.got[0].at != 15 || e.Now() != 15 || e.Pending() != 1 {
		t.Errorf("after Stop(15): fired %v, Now %v, Pending %d; want [15], 15, 1", r.got, e.Now(), e.Pending())
	}
	e.Run(Never) // a new Run forgets the Stop
	if len(r.got) != 2 || e.Now() != 20 {
		t.Errorf("second Run: fired %v, Now %v", r.got, e.Now())
	}
}

func TestEnginePastFiresAtNow(t *testing.T) {
	e := NewEngine(4)
	r := &recorder{}
	e.Run(100)
	e.Schedule(100, r, 1)
	e.Schedule(3, r, 2) // in the past: at Now, after the event already due at Now
	e.After(-50, r, 3)
	e.After(0, r, 4)
	e.Run(Never)
	want := []fired{{100, 1}, {100, 2}, {100, 3}, {100, 4}}
	if !slices.Equal(r.got, want) {
		t.Errorf("fired %v, want %v", r.got, want)
	}
}

func TestEngineStep(t *testing.T) {
	e := NewEngine(0)
	if e.Step() {
		t.Fatal("Step on an empty queue returned true")
	}
	r := &recorder{}
	e.Schedule(7, r, 1)
	e.Schedule(3, r, 2)
	if !e.Step() || e.Now() != 3 || !e.Step() || e.Now() != 7 || e.Step() {
		t.Errorf("Step sequence wrong: fired %v, Now %v", r.got, e.Now())
	}
}

// TestEngineNoAllocs: once the heap has grown, scheduling and firing do not
// allocate.
func TestEngineNoAllocs(t *testing.T) {
	e := NewEngine(0)
	h := &chain{e: e, rng: rand.New(rand.NewPCG(1, 2))}
	for range 1000 {
		e.After(Time(h.rng.IntN(1000)), h, 0)
	}
	for range 10000 { // warm up: the heap reaches its size
		e.Step()
	}
	if a := testing.AllocsPerRun(10000, func() { e.Step() }); a != 0 {
		t.Errorf("%v allocations per event, want 0", a)
	}
	if e.Pending() != 1000 {
		t.Errorf("Pending = %d, want 1000", e.Pending())
	}
}

// chain schedules one new event at a random future offset per event fired.
type chain struct {
	e   *Engine
	rng *rand.Rand
}

func (c *chain) Fire(now Time, arg int64) { c.e.After(1+Time(c.rng.IntN(1000)), c, arg+1) }

func BenchmarkEngine(b *testing.B) {
	for _, pending := range []int{1000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			e := NewEngine(pending)
			h := &chain{e: e, rng: NewStreams(1).Get("bench/engine")}
			for range pending {
				e.After(Time(h.rng.IntN(1000)), h, 0)
			}
			b.ReportAllocs()
			start := e.Fired()
			for b.Loop() {
				e.Step()
			}
			n := e.Fired() - start
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func TestTimeString(t *testing.T) {
	tests := []struct {
		t    Time
		want string
	}{
		{0, "0ns"}, {999, "999ns"}, {Microsecond, "1us"}, {1500 * Microsecond, "1.5ms"},
		{2 * Second, "2s"}, {-3 * Microsecond, "-3us"}, {Never, "never"},
	}
	for _, test := range tests {
		if got := test.t.String(); got != test.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(test.t), got, test.want)
		}
	}
	if s := (1500 * Millisecond).Seconds(); s != 1.5 {
		t.Errorf("Seconds() = %g", s)
	}
	if u := (2500 * Nanosecond).Micros(); u != 2.5 {
		t.Errorf("Micros() = %g", u)
	}
}
