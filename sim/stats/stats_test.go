package stats

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/combin"
	"gonum.org/v1/gonum/stat/distuv"
)

// The "sleep" data set of R (Cushny and Peebles, 1905; Student, 1908):
// extra hours of sleep for ten patients under two drugs.
var (
	sleep1 = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	sleep2 = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
)

// Hollander and Wolfe (1973), p. 69: the example of R's ?wilcox.test.
var (
	hwX = []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	hwY = []float64{1.15, 0.88, 0.90, 0.74, 1.21}
)

func near(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol
}

func TestWelch(t *testing.T) {
	tests := []struct {
		name         string
		a, b         []float64
		level        float64
		t, df, p     float64
		ciLow, ciHi  float64
		tolT, tolP   float64
		meanA, meanB float64
	}{
		{
			// R: t.test(sleep$extra[11:20], sleep$extra[1:10])
			//   t = 1.8608, df = 17.776, p-value = 0.07939
			//   95 percent confidence interval: -0.2054832  3.3654832
			// (the classic t.test(extra ~ group, data = sleep) with the
			// groups swapped, so B − A = group 2 − group 1).
			name: "sleep", a: sleep1, b: sleep2, level: 0.95,
			t: 1.8608134675, df: 17.7764735162, p: 0.0793941402,
			ciLow: -0.2054832307, ciHi: 3.3654832307,
			tolT: 1e-9, tolP: 1e-7, meanA: 0.75, meanB: 2.33,
		},
		{
			// R: t.test(sleep$extra[1:10], sleep$extra[11:20]): the sign flips.
			name: "sleep/swapped", a: sleep2, b: sleep1, level: 0.95,
			t: -1.8608134675, df: 17.7764735162, p: 0.0793941402,
			ciLow: -3.3654832307, ciHi: 0.2054832307,
			tolT: 1e-9, tolP: 1e-7, meanA: 2.33, meanB: 0.75,
		},
		{
			name: "exact/equal", a: []float64{5, 5, 5}, b: []float64{5, 5, 5, 5}, level: 0.95,
			t: 0, df: 5, p: 1, ciLow: 0, ciHi: 0, tolT: 0, tolP: 0, meanA: 5, meanB: 5,
		},
		{
			name: "exact/different", a: []float64{5, 5, 5}, b: []float64{6, 6, 6}, level: 0.95,
			t: math.Inf(1), df: 4, p: 0, ciLow: 1, ciHi: 1, tolT: 0, tolP: 0, meanA: 5, meanB: 6,
		},
		{
			name: "too-few", a: []float64{1}, b: []float64{2, 3}, level: 0.95,
			t: math.NaN(), df: math.NaN(), p: math.NaN(), ciLow: math.NaN(), ciHi: math.NaN(),
			meanA: 1, meanB: 2.5,
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			r := WelchAt(test.a, test.b, test.level)
			if !near(r.T, test.t, test.tolT) || !near(r.DF, test.df, test.tolT) {
				t.Errorf("WelchAt(...): T=%.10f DF=%.10f, want T=%.10f DF=%.10f", r.T, r.DF, test.t, test.df)
			}
			if !near(r.P, test.p, test.tolP) {
				t.Errorf("WelchAt(...): P=%.10f, want %.10f", r.P, test.p)
			}
			if !near(r.CILow, test.ciLow, test.tolP) || !near(r.CIHigh, test.ciHi, test.tolP) {
				t.Errorf("WelchAt(...): CI=[%.10f, %.10f], want [%.10f, %.10f]", r.CILow, r.CIHigh, test.ciLow, test.ciHi)
			}
			if !near(r.MeanA, test.meanA, 1e-12) || !near(r.MeanB, test.meanB, 1e-12) || !near(r.Diff, test.meanB-test.meanA, 1e-12) {
				t.Errorf("WelchAt(...): means %v %v diff %v, want %v %v", r.MeanA, r.MeanB, r.Diff, test.meanA, test.meanB)
			}
		})
	}
}

func TestWelchLevel(t *testing.T) {
	// A 99% interval is wider than the 95% one and contains it.
	r95 := WelchAt(sleep1, sleep2, 0.95)
	r99 := WelchAt(sleep1, sleep2, 0.99)
	if !(r99.CILow < r95.CILow && r99.CIHigh > r95.CIHigh) {
		t.Errorf("99%% CI [%v, %v] does not contain 95%% CI [%v, %v]", r99.CILow, r99.CIHigh, r95.CILow, r95.CIHigh)
	}
	// The interval excludes 0 exactly when p < 1 − level: here p ≈ 0.079.
	r90 := WelchAt(sleep1, sleep2, 0.90)
	if !(r90.CILow > 0) || !(r95.CILow < 0) {
		t.Errorf("90%% CI low %v (want > 0), 95%% CI low %v (want < 0) for p=%v", r90.CILow, r95.CILow, r90.P)
	}
}

func TestMannWhitney(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		u, p  float64
		exact bool
	}{
		// R: wilcox.test(sleep$extra[1:10], sleep$extra[11:20])
		//   W = 25.5, p-value = 0.06933 (ties: normal approximation)
		{name: "sleep/ties", a: sleep1, b: sleep2, u: 25.5, p: 0.0693275754},
		// R: wilcox.test(x, y) with the ?wilcox.test data
		//   W = 35, p-value = 0.2544 (exact; the one-sided
		//   alternative = "greater" gives 0.1272)
		{name: "hollander-wolfe/exact", a: hwX, b: hwY, u: 35, p: 0.2544122544, exact: true},
		// The mirror image: U_B = 50 − 35, same p.
		{name: "hollander-wolfe/swapped", a: hwY, b: hwX, u: 15, p: 0.2544122544, exact: true},
		// Complete separation, 5 vs 5: p = 2/C(10,5) = 2/252.
		{name: "separated", a: []float64{6, 7, 8, 9, 10}, b: []float64{1, 2, 3, 4, 5}, u: 25, p: 2.0 / 252, exact: true},
		{name: "all-equal", a: []float64{1, 1}, b: []float64{1, 1, 1}, u: 3, p: 1},
		{name: "empty", a: nil, b: []float64{1}, u: math.NaN(), p: math.NaN()},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			r := MannWhitney(test.a, test.b)
			if !near(r.U, test.u, 1e-12) || !near(r.P, test.p, 1e-9) || r.Exact != test.exact {
				t.Errorf("MannWhitney(...) = U %v P %.10f exact %v, want U %v P %.10f exact %v",
					r.U, r.P, r.Exact, test.u, test.p, test.exact)
			}
		})
	}
}

// TestMWPMF checks the exact distribution of U against brute-force
// enumeration of all assignments of ranks to the first sample.
func TestMWPMF(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 6}, {5, 7}, {6, 4}} {
		m, n := sz[0], sz[1]
		pmf := mwPMF(m, n)
		counts := make([]float64, m*n+1)
		total := 0.0
		gen := combin.NewCombinationGenerator(m+n, m)
		c := make([]int, m)
		for gen.Next() {
			gen.Combination(c)
			// Ranks 0..m+n−1; U counts pairs with an A rank above a B rank.
			u := 0
			for k, r := range c {
				u += r - k // B ranks below r
			}
			counts[u]++
			total++
		}
		for u := range counts {
			if want := counts[u] / total; math.Abs(pmf[u]-want) > 1e-12 {
				t.Errorf("mwPMF(%d, %d)[%d] = %v, want %v", m, n, u, pmf[u], want)
			}
		}
	}
	// Large sizes stay a distribution.
	pmf := mwPMF(MaxExact, MaxExact)
	var s float64
	for _, v := range pmf {
		s += v
	}
	if math.Abs(s-1) > 1e-9 {
		t.Errorf("sum of mwPMF(%d, %d) = %v, want 1", MaxExact, MaxExact, s)
	}
}

func TestMeanCI(t *testing.T) {
	// R: t.test(sleep$extra[1:10])$conf.int = -0.5297804  2.0297804
	iv := MeanCI(sleep1, 0.95)
	if !near(iv.Low, -0.5297804135, 1e-7) || !near(iv.High, 2.0297804135, 1e-7) || !near(iv.Center, 0.75, 1e-12) {
		t.Errorf("MeanCI(sleep1, 0.95) = %+v, want [-0.5297804, 2.0297804] around 0.75", iv)
	}
	// Width 2·t(0.975, 9)·s/√n with t(0.975, 9) = 2.2621571628 (R: qt(0.975, 9)).
	s := Summarize(sleep1)
	if w, want := 2*iv.HalfWidth(), 2*2.2621571628*s.StdDev/math.Sqrt(10); !near(w, want, 1e-8) {
		t.Errorf("MeanCI width = %v, want %v", w, want)
	}
	if iv := MeanCI([]float64{3}, 0.95); iv.Center != 3 || !math.IsNaN(iv.Low) {
		t.Errorf("MeanCI([3]) = %+v, want centre 3 and NaN bounds", iv)
	}
}

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(n - i) // reversed, to check sorting
		}
		return x
	}
	tests := []struct {
		n             int
		low, high     float64
		median, cover float64
	}{
		// n=20: [x(6), x(15)], coverage 1 − 2·pbinom(5, 20, 0.5) = 0.958610534668.
		{n: 20, low: 6, high: 15, median: 10.5, cover: 0.958610534668},
		// n=6: [min, max], coverage 1 − 2/64.
		{n: 6, low: 1, high: 6, median: 3.5, cover: 0.96875},
		// n=10: [x(2), x(9)], coverage 1 − 2·11/1024.
		{n: 10, low: 2, high: 9, median: 5.5, cover: 1 - 22.0/1024},
		// n=5 cannot reach 95%.
		{n: 5, low: math.Inf(-1), high: math.Inf(1), median: 3, cover: math.NaN()},
	}
	for _, test := range tests {
		t.Run(strconv.Itoa(test.n), func(t *testing.T) {
			iv := MedianCI(seq(test.n), 0.95)
			if !near(iv.Low, test.low, 0) || !near(iv.High, test.high, 0) || iv.Center != test.median || !near(iv.Coverage, test.cover, 1e-9) {
				t.Errorf("MedianCI(1..%d, 0.95) = %+v, want [%v, %v] around %v coverage %v", test.n, iv, test.low, test.high, test.median, test.cover)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{4, 1, 3, 2})
	if s.N != 4 || s.Mean != 2.5 || s.Min != 1 || s.Max != 4 || s.Median != 2.5 || !near(s.StdDev, math.Sqrt(5.0/3), 1e-12) || !near(s.CV, math.Sqrt(5.0/3)/2.5, 1e-12) {
		t.Errorf("Summarize([4 1 3 2]) = %+v", s)
	}
	if s := Summarize(nil); s.N != 0 || !math.IsNaN(s.Mean) || !math.IsNaN(s.Median) {
		t.Errorf("Summarize(nil) = %+v, want NaNs", s)
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	tests := []struct{ p, want float64 }{
		{0, 1}, {0.1, 1}, {0.11, 2}, {0.5, 5}, {0.9, 9}, {0.99, 10}, {1, 10},
	}
	for _, test := range tests {
		if got := Quantile(x, test.p); got != test.want {
			t.Errorf("Quantile(1..10, %v) = %v, want %v (nearest rank)", test.p, got, test.want)
		}
	}
	got := Quantiles(x, 0.5, 0.9, 0.99)
	if got[0] != 5 || got[1] != 9 || got[2] != 10 {
		t.Errorf("Quantiles(1..10, 0.5, 0.9, 0.99) = %v, want [5 9 10]", got)
	}
	if x[0] != 10 {
		t.Errorf("Quantile modified its input")
	}
}

func TestCheckPower(t *testing.T) {
	// (z(0.975) + z(0.8))² = (1.959964 + 0.841621)² = 7.848876.
	const k = 7.848876
	tests := []struct {
		name          string
		n             int
		cv, effect    float64
		neededN       int
		tooSmall      bool
		detectableApx float64
	}{
		// 2·k·(0.05/0.02)² = 98.11 → 99.
		{name: "cv5/eff2/n20", n: 20, cv: 0.05, effect: 0.02, neededN: 99, tooSmall: true, detectableApx: math.Sqrt(k) * 0.05 * math.Sqrt(2.0/20)},
		// 2·k·(0.01/0.02)² = 3.92 → 4.
		{name: "cv1/eff2/n20", n: 20, cv: 0.01, effect: 0.02, neededN: 4, detectableApx: math.Sqrt(k) * 0.01 * math.Sqrt(2.0/20)},
		{name: "cv0", n: 2, cv: 0, effect: 0.02, neededN: 2},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			c := CheckPower(test.n, test.cv, test.effect)
			if c.NeededN != test.neededN || c.TooSmall != test.tooSmall || !near(c.Detectable, test.detectableApx, 1e-5) {
				t.Errorf("CheckPower(%d, %v, %v) = %+v, want NeededN %d TooSmall %v Detectable %v",
					test.n, test.cv, test.effect, c, test.neededN, test.tooSmall, test.detectableApx)
			}
		})
	}
	want := "n=20 per side detects ≥4.43% (CV 5.00%, α=0.05, power 0.8); 2.00% needs n=99"
	if got := CheckPower(20, 0.05, 0.02).String(); got != want {
		t.Errorf("CheckPower(20, 0.05, 0.02).String() = %q, want %q", got, want)
	}
}

func TestAtCeiling(t *testing.T) {
	const line = 14.88e6
	tests := []struct {
		name       string
		a, b       []float64
		tol        float64
		pa, pb     bool
		fracA      float64
		wantString string
	}{
		{name: "both", a: []float64{line, line, line}, b: []float64{line, 0.995 * line, line}, pa: true, pb: true, fracA: 1,
			wantString: "pinned at ceiling 1.488e+07 on both sides"},
		{name: "only-a", a: []float64{line, line, 0.5 * line}, b: []float64{0.9 * line, 0.9 * line}, pa: true, fracA: 2.0 / 3,
			wantString: "A pinned at ceiling 1.488e+07"},
		{name: "tight-tol", a: []float64{0.995 * line}, b: []float64{line}, tol: 0.001, pb: true,
			wantString: "B pinned at ceiling 1.488e+07"},
		{name: "none", a: []float64{1}, b: nil, wantString: "below ceiling 1.488e+07"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			c := AtCeiling(test.a, test.b, line, test.tol)
			if c.PinnedA != test.pa || c.PinnedB != test.pb || !near(c.FracA, test.fracA, 1e-12) || c.String() != test.wantString {
				t.Errorf("AtCeiling(...) = %+v %q, want pinned %v/%v fracA %v %q", c, c.String(), test.pa, test.pb, test.fracA, test.wantString)
			}
		})
	}
}

func TestFormatDelta(t *testing.T) {
	tests := []struct {
		a, b, p float64
		na, nb  int
		alpha   float64
		want    string
	}{
		{a: 100, b: 112.3, p: 0.0001, na: 20, nb: 20, want: "+12.30% (p=0.000 n=20)"},
		{a: 100, b: 96.9, p: 0.002, na: 20, nb: 19, want: "-3.10% (p=0.002 n=20+19)"},
		{a: 100, b: 101, p: 0.412, na: 20, nb: 20, want: "~ (p=0.412 n=20)"},
		{a: 100, b: 101, p: 0.05, na: 20, nb: 20, want: "~ (p=0.050 n=20)"},
		{a: 100, b: 101, p: 0.05, na: 20, nb: 20, alpha: 0.1, want: "+1.00% (p=0.050 n=20)"},
		{a: 0, b: 1, p: 0.001, na: 5, nb: 5, want: "? (p=0.001 n=5)"},
		{a: -2, b: -2, p: 0, na: 3, nb: 3, want: "+0.00% (p=0.000 n=3)"},
		{a: 1, b: 2, p: math.NaN(), na: 1, nb: 1, want: "? (n=1)"},
	}
	for _, test := range tests {
		if got := FormatDelta(test.a, test.b, test.p, test.na, test.nb, test.alpha); got != test.want {
			t.Errorf("FormatDelta(%v, %v, %v, %d, %d, %v) = %q, want %q", test.a, test.b, test.p, test.na, test.nb, test.alpha, got, test.want)
		}
	}
}

// testSeed returns the seed for the seeded simulation tests, from
// RXSIM_SEED if set, and logs it so that a failure can be replayed.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(1)
	if s := os.Getenv("RXSIM_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RXSIM_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("RXSIM_SEED=%d", seed)
		}
	})
	return seed
}

// sample draws n values from N(mu, sigma) on the PCG stream (seed, stream).
func sample(seed, stream uint64, n int, mu, sigma float64) []float64 {
	d := distuv.Normal{Mu: mu, Sigma: sigma, Src: rand.New(rand.NewPCG(seed, stream))}
	x := make([]float64, n)
	for i := range x {
		x[i] = d.Rand()
	}
	return x
}

// TestFalsePositiveRate runs 100 A/A comparisons of identical
// distributions: about 5% should come out significant at α = 0.05.
func TestFalsePositiveRate(t *testing.T) {
	seed := testSeed(t)
	const trials, n = 100, 20
	var welch, mw int
	for k := range uint64(trials) {
		a := sample(seed, 2*k, n, 100, 5)   // stream "trial k/A"
		b := sample(seed, 2*k+1, n, 100, 5) // stream "trial k/B"
		if Welch(a, b).Significant(DefaultAlpha) {
			welch++
		}
		if MannWhitney(a, b).Significant(DefaultAlpha) {
			mw++
		}
	}
	t.Logf("A/A: Welch %d%%, Mann-Whitney %d%% significant", welch, mw)
	for _, c := range []struct {
		name string
		k    int
	}{{"Welch", welch}, {"MannWhitney", mw}} {
		if c.k > 12 {
			t.Errorf("%s: %d of %d identical comparisons significant, want ≤ 12", c.name, c.k, trials)
		}
	}
}

// TestDetectsTenPercent checks that a true 10% difference with 1% noise is
// always detected, and that FormatDelta reports it.
func TestDetectsTenPercent(t *testing.T) {
	seed := testSeed(t)
	for k := range uint64(100) {
		a := sample(seed, 1000+2*k, 20, 100, 1)
		b := sample(seed, 1000+2*k+1, 20, 110, 1.1)
		w, u := Welch(a, b), MannWhitney(a, b)
		if !w.Significant(DefaultAlpha) || !u.Significant(DefaultAlpha) {
			t.Fatalf("trial %d: 10%% difference not detected: Welch p=%v, Mann-Whitney p=%v", k, w.P, u.P)
		}
		d := FormatDelta(w.MeanA, w.MeanB, w.P, w.NA, w.NB, 0)
		if !strings.HasPrefix(d, "+") || !strings.HasSuffix(d, "(p=0.000 n=20)") {
			t.Fatalf("trial %d: FormatDelta = %q, want +~10%% (p=0.000 n=20)", k, d)
		}
	}
}
