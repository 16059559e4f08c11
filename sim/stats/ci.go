package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultLevel is the confidence level used when none is given.
const DefaultLevel = 0.95

// Interval is a confidence interval around a point estimate.
type Interval struct {
	Center float64 // the point estimate (mean or median)
	Low    float64 // lower end of the interval
	High   float64 // upper end of the interval

	// Level is the requested confidence level, e.g. 0.95.
	Level float64

	// Coverage is the confidence actually achieved. It equals Level for
	// MeanCI; for MedianCI it is the (discrete) binomial coverage of the
	// chosen order statistics, which is at least Level, or NaN when the
	// sample is too small to reach Level.
	Coverage float64
}

// HalfWidth returns half the width of the interval, (High − Low) / 2.
func (iv Interval) HalfWidth() float64 { return (iv.High - iv.Low) / 2 }

// MeanCI returns the Student t confidence interval at the given level for
// the mean of x: mean ± t(1−α/2, n−1) · s/√n. With fewer than two values
// Low and High are NaN. It panics if level is not in (0, 1).
func MeanCI(x []float64, level float64) Interval {
	checkLevel(level)
	iv := Interval{Level: level, Coverage: level}
	n := len(x)
	if n == 0 {
		iv.Center, iv.Low, iv.High = math.NaN(), math.NaN(), math.NaN()
		return iv
	}
	if n < 2 {
		iv.Center = x[0]
		iv.Low, iv.High = math.NaN(), math.NaN()
		return iv
	}
	mean, std := stat.MeanStdDev(x, nil)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-level)/2)
	h := q * stat.StdErr(std, float64(n))
	iv.Center, iv.Low, iv.High = mean, mean-h, mean+h
	return iv
}

// MedianCI returns a distribution-free confidence interval for the median
// of x, as benchstat does: the interval [x(k), x(n+1−k)] between two order
// statistics, where k is the largest rank whose binomial coverage
// P(k ≤ B ≤ n−k), B ~ Binomial(n, ½), is at least level. Coverage reports
// the coverage reached. When even [min, max] does not reach level (n < 6
// at 95%), Low and High are −Inf and +Inf and Coverage is NaN.
// It panics if level is not in (0, 1).
func MedianCI(x []float64, level float64) Interval {
	checkLevel(level)
	iv := Interval{Level: level, Center: Median(x)}
	n := len(x)
	k, cov := medianRank(n, level)
	if k == 0 {
		iv.Low, iv.High, iv.Coverage = math.Inf(-1), math.Inf(1), math.NaN()
		return iv
	}
	s := sortedCopy(x)
	iv.Low, iv.High, iv.Coverage = s[k-1], s[n-k], cov
	return iv
}

// medianRank returns the largest 1-based rank k ≤ n/2 such that
// [x(k), x(n+1−k)] covers the median with probability ≥ level, and that
// coverage; k is 0 if no rank qualifies.
func medianRank(n int, level float64) (k int, coverage float64) {
	if n == 0 {
		return 0, math.NaN()
	}
	b := distuv.Binomial{N: float64(n), P: 0.5}
	for r := n / 2; r >= 1; r-- {
		// Coverage of [x(r), x(n+1−r)] is 1 − 2·P(B ≤ r−1).
		c := 1 - 2*b.CDF(float64(r-1))
		if c >= level {
			return r, c
		}
	}
	return 0, math.NaN()
}

func checkLevel(level float64) {
	if !(level > 0 && level < 1) {
		panic("stats: confidence level must be in (0, 1)")
	}
}
