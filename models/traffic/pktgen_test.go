package traffic

import (
	"math"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// TestLinePPS: §1's table, pps = link_bps / ((frame + 20) * 8) with frame
// = pkt_size + 4 B FCS, i.e. pkt_size + 24 B on the wire.
func TestLinePPS(t *testing.T) {
	cases := []struct {
		pktSize int
		gbps    float64
		want    float64
	}{
		{60, 10, 14880952.38},  // 64 B frame: 14,880,952
		{124, 10, 8445945.95},  // 128 B: 8,445,946
		{1514, 10, 812743.82},  // 1518 B: 812,744
		{60, 40, 59523809.52},  // 59,523,810
		{1514, 40, 3250975.29}, // 3,250,975
	}
	for _, c := range cases {
		if got := LinePPS(c.pktSize, 24, c.gbps); math.Abs(got-c.want) > 0.01 {
			t.Errorf("LinePPS(%d, %v G) = %.2f, want %.2f", c.pktSize, c.gbps, got, c.want)
		}
	}
	if w := WireTime(60, 24, 10); math.Abs(w-67.2) > 1e-9 {
		t.Errorf("64 B at 10G: %v ns on the wire, want 67.2", w)
	}
	if !math.IsInf(LinePPS(60, 24, 0), 1) {
		t.Errorf("no wire: LinePPS should be +Inf")
	}
}

// TestPktgenOffered: offered = min(rate, threads x thread_max_pps, line
// rate), and the source really sends at it: the arrivals in the first
// 10 ms are floor(10 ms x rate) (+-1), fed through a 512-descriptor ring
// nobody cleans (511 filled, the rest rx_missed, conserved).
func TestPktgenOffered(t *testing.T) {
	cases := []struct {
		name    string
		cfg     PktgenConfig
		offered float64
	}{
		{"10G-line-t2", PktgenConfig{PktSize: 60, Threads: 2, ThreadMaxPPS: 12e6, LineGbps: 10, Overhead: 24}, 14880952.38},
		{"10G-line-t1", PktgenConfig{PktSize: 60, Threads: 1, ThreadMaxPPS: 12e6, LineGbps: 10, Overhead: 24}, 12e6},
		{"10G-rate-1M", PktgenConfig{PktSize: 60, Threads: 2, ThreadMaxPPS: 12e6, RatePPS: 1e6, LineGbps: 10, Overhead: 24}, 1e6},
		{"10G-rate-above-line", PktgenConfig{PktSize: 60, Threads: 4, ThreadMaxPPS: 12e6, RatePPS: 20e6, LineGbps: 10, Overhead: 24}, 14880952.38},
		{"40G-line-t8", PktgenConfig{PktSize: 60, Threads: 8, ThreadMaxPPS: 12e6, LineGbps: 40, Overhead: 24}, 59523809.52},
		{"40G-line-t2", PktgenConfig{PktSize: 60, Threads: 2, ThreadMaxPPS: 12e6, LineGbps: 40, Overhead: 24}, 24e6},
		{"10G-1514B", PktgenConfig{PktSize: 1514, Threads: 1, ThreadMaxPPS: 12e6, LineGbps: 10, Overhead: 24}, 812743.82},
		{"no-wire", PktgenConfig{PktSize: 60, Threads: 3, ThreadMaxPPS: 1e6}, 3e6},
		{"burst32-line", PktgenConfig{PktSize: 60, Threads: 2, Burst: 32, ThreadMaxPPS: 12e6, LineGbps: 10, Overhead: 24}, 14880952.38},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewPktgen(c.cfg, nil)
			if math.Abs(g.OfferedPPS()-c.offered) > 0.01 {
				t.Errorf("offered %.2f pps, want %.2f", g.OfferedPPS(), c.offered)
			}
			var led pkt.Ledger
			r := nic.NewRxRing(512, g, &led, 0)
			r.Advance(10 * sim.Millisecond)
			want := math.Floor(0.01 * c.offered)
			if d := float64(led.Offered) - want; d < -1 || d > 1 {
				t.Errorf("%d arrivals in 10 ms, want %.0f", led.Offered, want)
			}
			if r.Filled() != 511 {
				t.Errorf("ring filled %d, want 511", r.Filled())
			}
			modeltest.Conservation(t, &led, r)
		})
	}
}

// TestPktgenBurstSpacing: a burst is sent back to back at wire speed, and
// bursts start every burst/rate. 60 B at 10G is 67.2 ns on the wire; burst
// 4 at 1 Mpps: bursts start every 4000 ns, a packet arrives when its last
// bit is in: start + 67.2 (i+1), truncated to ns.
func TestPktgenBurstSpacing(t *testing.T) {
	g := NewPktgen(PktgenConfig{PktSize: 60, Threads: 1, Burst: 4, RatePPS: 1e6, ThreadMaxPPS: 12e6,
		LineGbps: 10, Overhead: 24, Flows: 3}, nil)
	want := []sim.Time{67, 134, 201, 268, 4067, 4134, 4201, 4268, 8067, 8134}
	for i, w := range want {
		if g.Peek() != w {
			t.Fatalf("packet %d: Peek %d, want %d", i, g.Peek(), w)
		}
		p := g.Pop()
		if p.Arrival != w || p.Flow != uint32(i%3) || p.Hash != FlowHash(uint32(i%3)) || p.Len != 60 || p.Segs != 1 {
			t.Fatalf("packet %d: %+v, want arrival %d flow %d", i, p, w, i%3)
		}
	}
	// At line rate with bursts the packets are back to back: the i-th at
	// 67.2 (i+1) ns within float rounding.
	g = NewPktgen(PktgenConfig{PktSize: 60, Threads: 2, Burst: 32, ThreadMaxPPS: 12e6, LineGbps: 10, Overhead: 24}, nil)
	for i := 0; i < 10000; i++ {
		p := g.Pop()
		if d := float64(p.Arrival) - 67.2*float64(i+1); d > 0 || d < -1.001 {
			t.Fatalf("line-rate packet %d at %d, want %.1f", i, p.Arrival, 67.2*float64(i+1))
		}
	}
}

// TestPktgenCount: Count packets are sent, then the source is empty.
func TestPktgenCount(t *testing.T) {
	for _, n := range []int64{1, 31, 32, 100} {
		g := NewPktgen(PktgenConfig{PktSize: 60, Threads: 2, Burst: 32, ThreadMaxPPS: 12e6, Count: n,
			LineGbps: 10, Overhead: 24}, nil)
		var k int64
		for g.Peek() != sim.Never {
			g.Pop()
			k++
		}
		if k != n {
			t.Errorf("count %d: sent %d", n, k)
		}
	}
}

// TestPktgenJitter: jitter 0 is exact and uses no randomness; jitter > 0
// is reproducible per seed, differs between seeds, keeps arrivals in order
// and never faster than the wire, and keeps the mean rate (gap factor
// max(0, 1 + cv Z) has mean ~1 for cv 0.3).
func TestPktgenJitter(t *testing.T) {
	cfg := PktgenConfig{PktSize: 60, Threads: 1, Burst: 8, RatePPS: 1e6, ThreadMaxPPS: 12e6, LineGbps: 10, Overhead: 24}
	arrivals := func(jitter float64, seed uint64) []sim.Time {
		c := cfg
		c.Jitter = jitter
		g := NewPktgen(c, sim.NewStreams(seed).Get("traffic/pktgen"))
		out := make([]sim.Time, 80000)
		for i := range out {
			out[i] = g.Pop().Arrival
		}
		return out
	}
	exact := arrivals(0, 1)
	if e2 := arrivals(0, 2); !equal(exact, e2) {
		t.Errorf("jitter 0 depends on the seed")
	}
	for i := 0; i < 16; i++ { // 8 per burst, bursts every 8 us
		want := sim.Time(float64(i/8)*8000 + 67.2*float64(i%8+1))
		if exact[i] != want {
			t.Fatalf("jitter 0: packet %d at %d, want %d", i, exact[i], want)
		}
	}
	a, b, c := arrivals(0.3, 1), arrivals(0.3, 1), arrivals(0.3, 2)
	if !equal(a, b) {
		t.Errorf("jitter 0.3: same seed, different arrivals")
	}
	if equal(a, c) {
		t.Errorf("jitter 0.3: seeds 1 and 2 give the same arrivals")
	}
	for i := 1; i < len(a); i++ {
		if a[i] < a[i-1]+67-1 { // float truncation: one wire time, -1 ns
			t.Fatalf("jitter: packet %d at %d after %d, closer than the wire", i, a[i], a[i-1])
		}
	}
	rate := float64(len(a)-1) / float64(a[len(a)-1]-a[0]) * 1e9
	if math.Abs(rate-1e6)/1e6 > 0.02 {
		t.Errorf("jitter 0.3: mean rate %.0f pps, want 1e6 +- 2%%", rate)
	}
}

func equal(a, b []sim.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFlowHash: never 0 (0 means "no hash"), stable, and spread over the
// 128-entry RSS table.
func TestFlowHash(t *testing.T) {
	var buckets [128]int
	for f := uint32(0); f < 12800; f++ {
		h := FlowHash(f)
		if h == 0 || h != FlowHash(f) {
			t.Fatalf("FlowHash(%d) = %#x", f, h)
		}
		buckets[h%128]++
	}
	for i, n := range buckets {
		if n < 50 || n > 160 { // mean 100
			t.Errorf("RSS bucket %d got %d of 12800 flows", i, n)
		}
	}
}
