package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// MaxExact is the largest sample size (per side) for which MannWhitney
// computes an exact p-value when there are no ties. It follows R's
// wilcox.test, which uses the exact distribution below 50.
const MaxExact = 49

// MWResult is the outcome of a two-sided Mann-Whitney U (Wilcoxon rank-sum)
// test.
type MWResult struct {
	// U is the Mann-Whitney statistic of A: the number of pairs (a, b)
	// with a > b, plus half the number of tied pairs. It equals the W
	// that R's wilcox.test(a, b) reports. U_B = NA·NB − U.
	U float64

	// Z is the normal score of U with tie and continuity corrections
	// (positive when A tends to be larger). It is computed even when P
	// is exact.
	Z float64

	// P is the two-sided p-value.
	P float64

	NA, NB int

	// Exact reports whether P comes from the exact null distribution of
	// U (no ties and both sides ≤ MaxExact) rather than from the normal
	// approximation.
	Exact bool
}

// Significant reports whether P < alpha.
func (r MWResult) Significant(alpha float64) bool { return r.P < alpha }

// MannWhitney performs the two-sided Mann-Whitney U test of a against b.
//
// Without ties and with both samples of at most MaxExact values the
// p-value is exact, from the permutation distribution of U. Otherwise it
// uses the normal approximation with the tie-corrected variance
//
//	σ² = na·nb/12 · ((N+1) − Σ(t³−t) / (N(N−1)))
//
// and a continuity correction of ½, as R's wilcox.test(a, b, exact = NULL,
// correct = TRUE) does. If either sample is empty U, Z and P are NaN; if
// all values are equal Z is 0 and P is 1.
func MannWhitney(a, b []float64) MWResult {
	r := MWResult{NA: len(a), NB: len(b)}
	if len(a) == 0 || len(b) == 0 {
		r.U, r.Z, r.P = math.NaN(), math.NaN(), math.NaN()
		return r
	}
	na, nb := float64(len(a)), float64(len(b))
	n := na + nb

	// Rank the pooled sample, giving ties their mid-rank.
	type obs struct {
		v    float64
		inA  bool
		rank float64
	}
	pool := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		pool = append(pool, obs{v: v, inA: true})
	}
	for _, v := range b {
		pool = append(pool, obs{v: v})
	}
	slices.SortStableFunc(pool, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	var tieSum float64
	for i := 0; i < len(pool); {
		j := i + 1
		for j < len(pool) && pool[j].v == pool[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			pool[k].rank = mid
		}
		t := float64(j - i)
		tieSum += t*t*t - t
		i = j
	}
	var rankA float64
	for _, o := range pool {
		if o.inA {
			rankA += o.rank
		}
	}
	r.U = rankA - na*(na+1)/2

	mu := na * nb / 2
	sigma := math.Sqrt(na * nb / 12 * ((n + 1) - tieSum/(n*(n-1))))
	if sigma == 0 {
		r.Z, r.P = 0, 1
		return r
	}
	d := r.U - mu
	corr := 0.0
	if d != 0 {
		corr = math.Copysign(0.5, d)
	}
	r.Z = (d - corr) / sigma

	if tieSum == 0 && len(a) <= MaxExact && len(b) <= MaxExact {
		r.Exact = true
		r.P = exactMWTwoSided(len(a), len(b), r.U)
		return r
	}
	std := distuv.UnitNormal
	r.P = math.Min(1, 2*math.Min(std.CDF(r.Z), std.Survival(r.Z)))
	return r
}

// exactMWTwoSided returns the exact two-sided p-value of an observed U
// (an integer, since there are no ties) for samples of sizes m and n:
// 2·P(U ≥ u) if u is above the mean m·n/2, else 2·P(U ≤ u), capped at 1.
func exactMWTwoSided(m, n int, u float64) float64 {
	pmf := mwPMF(m, n)
	k := int(math.Round(u))
	var p float64
	if u > float64(m*n)/2 {
		for i := k; i < len(pmf); i++ {
			p += pmf[i]
		}
	} else {
		for i := 0; i <= k; i++ {
			p += pmf[i]
		}
	}
	return math.Min(1, 2*p)
}

// mwPMF returns the null distribution of U for sample sizes m and n,
// P(U = u) for u = 0 .. m·n, by the recurrence on the largest pooled
// value, which belongs to the first sample with probability i/(i+j):
//
//	p(i, j; u) = i/(i+j) · p(i−1, j; u−j) + j/(i+j) · p(i, j−1; u)
//
// All terms are non-negative, so the recurrence is numerically stable.
func mwPMF(m, n int) []float64 {
	// row[j] holds p(i, j; ·) for the current i.
	row := make([][]float64, n+1)
	for j := range row {
		row[j] = []float64{1} // p(0, j) is a point mass at 0
	}
	for i := 1; i <= m; i++ {
		next := make([][]float64, n+1)
		next[0] = []float64{1} // p(i, 0) is a point mass at 0
		for j := 1; j <= n; j++ {
			cur := make([]float64, i*j+1)
			wa := float64(i) / float64(i+j)
			wb := float64(j) / float64(i+j)
			for u, v := range row[j] { // p(i−1, j; u), shifted by j
				cur[u+j] += wa * v
			}
			for u, v := range next[j-1] { // p(i, j−1; u)
				cur[u] += wb * v
			}
			next[j] = cur
		}
		row = next
	}
	return row[n]
}
