package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func draw(r *rand.Rand, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func TestStreams(t *testing.T) {
	s := NewStreams(42)
	a1, a2 := draw(s.Get("pktgen/thread-0"), 50), draw(NewStreams(42).Get("pktgen/thread-0"), 50)
	if !slices.Equal(a1, a2) {
		t.Error("same seed and name give different sequences")
	}
	if b := draw(s.Get("pktgen/thread-1"), 50); slices.Equal(a1, b) {
		t.Error("different names give the same sequence")
	}
	if c := draw(NewStreams(43).Get("pktgen/thread-0"), 50); slices.Equal(a1, c) {
		t.Error("different seeds give the same sequence")
	}
	if s.Seed() != 42 {
		t.Errorf("Seed() = %d", s.Seed())
	}
	// Source yields the same numbers as Get, for gonum's Src fields.
	if d := draw(rand.New(s.Source("pktgen/thread-0")), 50); !slices.Equal(a1, d) {
		t.Error("Source and Get differ for the same name")
	}
}

// TestStreamsIndependent: creating and drawing from other streams, before or
// between draws, never shifts a stream's numbers.
func TestStreamsIndependent(t *testing.T) {
	alone := draw(NewStreams(7).Get("irq-jitter/cpu0"), 100)

	s := NewStreams(7)
	extra := s.Get("new-component")
	draw(extra, 1000)
	r := s.Get("irq-jitter/cpu0")
	mixed := draw(r, 50)
	draw(s.Get("another"), 10)
	draw(extra, 10)
	mixed = append(mixed, draw(r, 50)...)
	if !slices.Equal(alone, mixed) {
		t.Error("adding streams shifted another stream's numbers")
	}
	// Names differing in one byte, or by prefix, are different streams.
	names := []string{"", "a", "b", "ab", "ba", "cpu1", "cpu10", "cpu01"}
	seen := map[uint64]string{}
	for _, n := range names {
		v := s.Get(n).Uint64()
		if m, dup := seen[v]; dup {
			t.Errorf("streams %q and %q start with the same number", n, m)
		}
		seen[v] = n
	}
}

func TestFuncs(t *testing.T) {
	f := NewFuncs()
	a, b := f.ID("napi_poll"), f.ID("ixgbe_poll")
	if a != 0 || b != 1 || f.ID("napi_poll") != 0 || f.Len() != 2 || f.Name(b) != "ixgbe_poll" {
		t.Errorf("Funcs: ids %d %d, Len %d", a, b, f.Len())
	}
}

func TestWork(t *testing.T) {
	var w Work
	w.reset(100)
	w.Add(3, 10)
	w.Add(40, 5) // grows the cost table
	w.Add(3, 1)
	w.Add(5, 0)  // ignored
	w.Add(5, -4) // ignored
	if w.Total() != 16 || w.Start() != 100 || w.Now() != 116 || len(w.touched) != 2 {
		t.Errorf("Total %v Start %v Now %v touched %v", w.Total(), w.Start(), w.Now(), w.touched)
	}
	n := NewCostNoise(0, DistNormal)
	n.Set(40, 0.5, DistGamma)
	w.Add(40, 4995)
	w.scaleEach(n, rand.New(rand.NewPCG(1, 2)))
	if w.costs[3] != 11 || w.costs[40] == 5000 || w.Total() != 11+w.costs[40] {
		t.Errorf("scaleEach: Total %v costs %v %v (want 11 exact, 40 scaled)", w.Total(), w.costs[3], w.costs[40])
	}
	w.reset(200)
	if w.Total() != 0 || w.costs[3] != 0 || w.costs[40] != 0 || len(w.touched) != 0 || w.Now() != 200 {
		t.Errorf("reset left costs behind")
	}
}
