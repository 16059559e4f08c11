package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/scenarios/sweep"
	"gonum.org/v1/gonum/stat/distuv"
)

// syntheticDoc builds a comparison from fixed samples: rx pinned at the
// offered load on both sides, a 10% CPU cost difference, an unchanged
// metric, a skewed latency, and a noisy metric n=8 cannot resolve.
func syntheticDoc() *compareDoc {
	rng := rand.New(rand.NewPCG(1, 2))
	d := &compareDoc{Kind: compareKind, Version: 1, Reps: 8, MinEffect: 0.02,
		A: compareSide{Scenario: "xdp-drop-ixgbe"}, B: compareSide{Scenario: "xdp-drop-ixgbe", Sets: []string{"nic.itr_usecs=10"}}}
	for i := 0; i < d.Reps; i++ {
		d.A.Seeds = append(d.A.Seeds, uint64(1+i))
		d.B.Seeds = append(d.B.Seeds, uint64(1+d.Reps+i))
		// rx_pps and pkts_per_poll take the same values on both sides.
		same := rand.New(rand.NewPCG(3, uint64(i)))
		rx, ppp := 14880952*(1-0.001*same.Float64()), 64*(1+0.005*same.NormFloat64())
		for s, side := range []*compareSide{&d.A, &d.B} {
			f := 1 + 0.1*float64(s) // B costs 10% more
			side.Runs = append(side.Runs, sweep.Metrics{
				"offered_pps":    14880952,
				"rx_pps":         rx,
				"cpu_busy_pct":   50 * f * (1 + 0.01*rng.NormFloat64()),
				"pkts_per_poll":  ppp,
				"irqs_per_sec":   20000 * (1 + 0.2*rng.NormFloat64()),
				"latency_us.p99": 30 * f * (1 + rng.ExpFloat64()),
			})
		}
	}
	d.compare([]string{"offered_pps", "rx_pps", "cpu_busy_pct", "pkts_per_poll", "irqs_per_sec", "latency_us.p99"})
	return d
}

func TestCompareGolden(t *testing.T) {
	var b bytes.Buffer
	if err := syntheticDoc().writeText(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare.golden", b.Bytes())
}

func TestCompareRows(t *testing.T) {
	d := syntheticDoc()
	want := map[string]struct {
		test  string
		sig   bool
		notes int
	}{
		"offered_pps":    {"welch", false, 0},
		"rx_pps":         {"welch", false, 1}, // pinned
		"cpu_busy_pct":   {"welch", true, 0},
		"pkts_per_poll":  {"welch", false, 0},
		"irqs_per_sec":   {"welch", false, 1}, // too few reps for 2%
		"latency_us.p99": {"mann-whitney", false, 1},
	}
	for _, r := range d.Rows {
		w, ok := want[r.Metric]
		if !ok {
			t.Errorf("unexpected row %s", r.Metric)
			continue
		}
		if r.Test != w.test || strings.HasPrefix(r.Delta, "~") == w.sig || len(r.Notes) != w.notes {
			t.Errorf("%s: test %s delta %q notes %v; want test %s significant %v, %d note(s)", r.Metric, r.Test, r.Delta, r.Notes, w.test, w.sig, w.notes)
		}
	}
	if len(d.Rows) != len(want) || !strings.Contains(d.Notes[0], "rx_pps is pinned") {
		t.Errorf("rows %d, notes %q", len(d.Rows), d.Notes)
	}
}

// cheapCompare is a compare configuration of 2 ms runs at 1 Mpps with
// cost, traffic and IRQ noise.
func cheapCompare(seed uint64, setsB ...string) compareConfig {
	return compareConfig{A: "xdp-drop-ixgbe", B: "xdp-drop-ixgbe", Reps: 20, Seed: seed, MinEffect: 0.02, Workers: 2,
		Both: []string{`traffic.rate="1Mpps"`, "noise.cost_cv=0.1", "traffic.jitter=0.1", "noise.irq_jitter=0.1",
			`duration="2ms"`, `warmup="1ms"`},
		SetsB:   setsB,
		Metrics: []string{"rx_pps", "cpu_busy_pct"}}
}

// countSame runs trials comparisons of identical configs, trial k on the
// seeds base+40k..base+40k+39 (disjoint per trial), and counts per metric
// the trials that report `~`.
func countSame(t *testing.T, base uint64, trials int) map[string]int {
	t.Helper()
	same := map[string]int{}
	for k := 0; k < trials; k++ {
		d, err := runCompare(cheapCompare(base + 40*uint64(k)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Rows {
			if strings.HasPrefix(r.Delta, "~") {
				same[r.Metric]++
			}
		}
	}
	return same
}

// TestCompareFalsePositives runs 100 comparisons of identical configs on
// the fixed seeds 1..4000 and requires `~` in at least 95 for each metric.
// The simulation is deterministic, so the count is a property of the code
// at this commit, not a flaky draw. A correct 5% test gives 95 on average
// and Binomial(100, 0.95) is below 95 for 38% of seed sets: if a model
// change brings a count below 95, run TestCompareFalsePositiveRate
// (RXSIM_LONG=1) to see whether the rate itself moved; never move the seeds
// to make this pass.
func TestCompareFalsePositives(t *testing.T) {
	if testing.Short() {
		t.Skip("4000 short simulations")
	}
	const trials, minSame = 100, 95
	same := countSame(t, 1, trials)
	for _, m := range []string{"rx_pps", "cpu_busy_pct"} {
		t.Logf("%s: ~ in %d of %d trials of identical configs", m, same[m], trials)
		if same[m] < minSame {
			t.Errorf("%s: ~ in %d of %d trials of identical configs, want >= %d", m, same[m], trials, minSame)
		}
	}
}

// TestCompareFalsePositiveRate estimates the false-positive rate of compare
// from 2000 identical-config trials (80,000 short simulations, about a
// minute on two cores; only with RXSIM_LONG=1) on seeds disjoint from
// TestCompareFalsePositives. It fails if the exact binomial 99% interval of
// the rate excludes 5%.
func TestCompareFalsePositiveRate(t *testing.T) {
	if os.Getenv("RXSIM_LONG") == "" {
		t.Skip("set RXSIM_LONG=1 (80,000 short simulations)")
	}
	const trials = 2000
	same := countSame(t, 1_000_001, trials)
	for _, m := range []string{"rx_pps", "cpu_busy_pct"} {
		fp := trials - same[m]
		lo, hi := binomialInterval(fp, trials, 0.99)
		t.Logf("%s: %d of %d significant: rate %.2f%% (99%% interval %.2f-%.2f%%)", m, fp, trials,
			100*float64(fp)/trials, 100*lo, 100*hi)
		if lo > 0.05 || hi < 0.05 {
			t.Errorf("%s: false-positive rate interval [%.4f, %.4f] excludes 0.05", m, lo, hi)
		}
	}
}

// binomialInterval is the Clopper-Pearson interval of k successes in n at
// the given level, from the beta quantiles.
func binomialInterval(k, n int, level float64) (lo, hi float64) {
	a := (1 - level) / 2
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return lo, hi
}

// TestCompareTenPercent checks that a known +10% offered load is reported
// as a significant +10% in rx_pps.
func TestCompareTenPercent(t *testing.T) {
	d, err := runCompare(cheapCompare(1, `traffic.rate="1.1Mpps"`))
	if err != nil {
		t.Fatal(err)
	}
	r := d.Rows[0]
	if r.Metric != "rx_pps" || r.P == nil || *r.P >= 0.05 || !strings.HasPrefix(r.Delta, "+") {
		t.Fatalf("rx_pps row %+v, want a significant increase", r)
	}
	delta := (r.B.Center - r.A.Center) / r.A.Center
	if delta < 0.09 || delta > 0.11 {
		t.Errorf("rx_pps delta %.4f, want 0.10 ± 0.01", delta)
	}
	// Conservation in every run.
	for _, side := range []compareSide{d.A, d.B} {
		for i, m := range side.Runs {
			if v, ok := m["ledger.imbalance"]; !ok || v != 0 {
				t.Errorf("%s run %d: ledger imbalance %v", side.Scenario, i, v)
			}
		}
	}
}

// TestComparePairedFlag checks that --paired (a boolean flag) between the
// scenarios does not swallow B, and that paired identical configs give
// identical samples.
func TestComparePairedFlag(t *testing.T) {
	out := rxsim(t, "compare", "xdp-drop-ixgbe", "--paired", "xdp-drop-ixgbe", "--reps", "3",
		"--both", "noise.cost_cv=0.1", "--duration", "1ms", "--metrics", "cpu_busy_pct")
	if !strings.Contains(out, "paired seeds (A 1..3, B 1..3)") || !strings.Contains(out, "~ (p=1.000 n=3)") {
		t.Errorf("output:\n%s", out)
	}
}
