package nic_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// TestRxRingFull: a ring of size N posts N-1 descriptors (ixgbe_desc_unused
// keeps one unused); arrivals with no poll fill them and the rest are
// rx_missed, counted exactly.
func TestRxRingFull(t *testing.T) {
	cases := []struct {
		name               string
		size, arrivals     int
		wantFill, wantMiss int
	}{
		{"ring64-100", 64, 100, 63, 37},
		{"ring64-63", 64, 63, 63, 0},
		{"ring64-64", 64, 64, 63, 1},
		{"ring512-1000", 512, 1000, 511, 489},
		{"ring512-10", 512, 10, 10, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var led pkt.Ledger
			f := modeltest.NewFeed(modeltest.Constant(c.arrivals, 100, 67, 60, 1))
			r := nic.NewRxRing(c.size, f, &led, 0)
			if got := r.PostedForTest(); got != c.size-1 {
				t.Fatalf("posted at start %d, want %d", got, c.size-1)
			}
			r.Advance(sim.Time(c.arrivals) * 1000)
			if r.Filled() != c.wantFill || int(r.Missed) != c.wantMiss {
				t.Errorf("filled %d missed %d, want %d and %d", r.Filled(), r.Missed, c.wantFill, c.wantMiss)
			}
			if got := led.Dropped[pkt.RxMissed]; got != uint64(c.wantMiss) {
				t.Errorf("ledger rx_missed %d, want %d", got, c.wantMiss)
			}
			if int(led.Offered) != c.arrivals {
				t.Errorf("offered %d, want %d", led.Offered, c.arrivals)
			}
			modeltest.Conservation(t, &led, r)
		})
	}
}

// TestRxRingAdvanceExactTimes: only packets whose arrival is <= t enter
// the ring; the rest stay in the feed (not yet offered).
func TestRxRingAdvanceExactTimes(t *testing.T) {
	var led pkt.Ledger
	f := modeltest.NewFeed(modeltest.At(60, 10, 20, 20, 30, 45))
	r := nic.NewRxRing(64, f, &led, 0)
	for _, step := range []struct {
		t      sim.Time
		filled int
	}{{9, 0}, {10, 1}, {19, 1}, {20, 3}, {44, 4}, {45, 5}, {1000, 5}} {
		r.Advance(step.t)
		if r.Filled() != step.filled {
			t.Errorf("Advance(%d): filled %d, want %d", step.t, r.Filled(), step.filled)
		}
		modeltest.Conservation(t, &led, r)
	}
	if r.NextArrival() != 10 {
		t.Errorf("NextArrival %d, want the first filled descriptor's arrival 10", r.NextArrival())
	}
}

// TestRxRingRefillInvariant drives random Advance/Clean/Refill operations
// from a seeded stream and checks posted + filled + cleaned = size - 1,
// refill batch semantics (Refill re-posts exactly the cleaned count) and
// conservation after every operation.
func TestRxRingRefillInvariant(t *testing.T) {
	for _, size := range []int{64, 512} {
		var led pkt.Ledger
		f := modeltest.NewFeed(modeltest.Constant(200000, 1, 3, 60, 4))
		r := nic.NewRxRing(size, f, &led, 0)
		rng := sim.NewStreams(7).Get("test/ring")
		now := sim.Time(0)
		for op := 0; op < 20000; op++ {
			switch rng.IntN(3) {
			case 0:
				now += sim.Time(rng.IntN(400))
				r.Advance(now)
			case 1:
				for k := rng.IntN(70); k > 0; k-- {
					if _, ok := r.Clean(); !ok {
						break
					}
					led.Deliver(pkt.ToStack, 1)
				}
			case 2:
				c := r.Cleaned()
				posted := r.PostedForTest()
				if n := r.Refill(); n != c || r.Cleaned() != 0 || r.PostedForTest() != posted+c {
					t.Fatalf("Refill returned %d with %d cleaned; posted %d -> %d", n, c, posted, r.PostedForTest())
				}
			}
			if s := r.PostedForTest() + r.Filled() + r.Cleaned(); s != size-1 {
				t.Fatalf("size %d op %d: posted %d + filled %d + cleaned %d = %d, want %d",
					size, op, r.PostedForTest(), r.Filled(), r.Cleaned(), s, size-1)
			}
			if led.Check(r.Queued()) != 0 {
				modeltest.Conservation(t, &led, r)
				t.FailNow()
			}
		}
		if r.Missed == 0 {
			t.Errorf("size %d: the random walk never filled the ring; the test exercises nothing", size)
		}
	}
}

// TestRxRingCapTokenBucket: the NIC's packet-rate capability (max_pps) is a
// token bucket of CapDepth frames. Cap 976,562.5 pps = one token per
// 1024 ns (exact in binary); arrivals every 256 ns (4x the cap) add 0.25
// token each. Hand computation: arrival 1 finds the full bucket (32) and
// passes; arrival k>=2 sees 31.25 - 0.75(k-2) tokens, so arrivals 1..42
// pass (arrival 42 sees 1.25); after that the bucket holds 0.25, 0.5, 0.75,
// 1.0 at arrivals 42+1..42+4, so every 4th arrival from 45 passes.
// For 1000 arrivals: 42 + |{45, 49, ..., 997}| = 42 + 239 = 281 pass,
// 719 are nic_cap drops.
func TestRxRingCapTokenBucket(t *testing.T) {
	cases := []struct {
		n            int
		pass, capped int
		rate, gapNS  float64
	}{
		{1000, 281, 719, 1e9 / 1024, 256},
		{42, 42, 0, 1e9 / 1024, 256},
		{44, 42, 2, 1e9 / 1024, 256},
		{45, 43, 2, 1e9 / 1024, 256},
		// Below the cap nothing is dropped: arrivals every 2048 ns add 2
		// tokens each (capped at 32), one is spent.
		{1000, 1000, 0, 1e9 / 1024, 2048},
	}
	for _, c := range cases {
		var led pkt.Ledger
		f := modeltest.NewFeed(modeltest.Constant(c.n, sim.Time(c.gapNS), sim.Time(c.gapNS), 60, 1))
		r := nic.NewRxRing(4096, f, &led, c.rate)
		r.Advance(sim.Time(c.n+1) * sim.Time(c.gapNS))
		if int(r.Received) != c.pass || int(r.Capped) != c.capped {
			t.Errorf("n=%d gap %v: received %d capped %d, want %d and %d", c.n, c.gapNS, r.Received, r.Capped, c.pass, c.capped)
		}
		if led.Dropped[pkt.NICCap] != uint64(c.capped) || r.Missed != 0 {
			t.Errorf("n=%d: ledger nic_cap %d missed %d", c.n, led.Dropped[pkt.NICCap], r.Missed)
		}
		modeltest.Conservation(t, &led, r)
	}
}
