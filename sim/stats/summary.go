package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Summary describes one sample.
type Summary struct {
	N      int     // number of values
	Mean   float64 // arithmetic mean
	StdDev float64 // unbiased sample standard deviation (NaN when N < 2)
	CV     float64 // coefficient of variation, StdDev / |Mean| (NaN when undefined)
	Min    float64 // smallest value
	Max    float64 // largest value
	Median float64 // classical sample median
}

// Summarize returns the summary of x. For an empty x every field but N is
// NaN. x is not modified.
func Summarize(x []float64) Summary {
	s := Summary{N: len(x)}
	if len(x) == 0 {
		nan := math.NaN()
		s.Mean, s.StdDev, s.CV, s.Min, s.Max, s.Median = nan, nan, nan, nan, nan, nan
		return s
	}
	sorted := sortedCopy(x)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Median = medianSorted(sorted)
	if len(x) < 2 {
		s.Mean = x[0]
		s.StdDev, s.CV = math.NaN(), math.NaN()
		return s
	}
	s.Mean, s.StdDev = stat.MeanStdDev(x, nil)
	s.CV = math.NaN()
	if s.Mean != 0 {
		s.CV = s.StdDev / math.Abs(s.Mean)
	}
	return s
}

// Median returns the classical sample median of x: the middle value, or
// the mean of the two middle values when len(x) is even. It returns NaN
// for an empty x. x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return medianSorted(sortedCopy(x))
}

// Quantile returns the p-quantile of x with the nearest-rank definition
// (stat.Empirical): the smallest value v of x such that at least a
// fraction p of the values are ≤ v. Quantile(x, 0) is the minimum and
// Quantile(x, 1) the maximum. It returns NaN for an empty x and panics if
// p is outside [0, 1]. x is not modified.
func Quantile(x []float64, p float64) float64 {
	if !(p >= 0 && p <= 1) {
		panic("stats: quantile probability out of [0, 1]")
	}
	if len(x) == 0 {
		return math.NaN()
	}
	return stat.Quantile(p, stat.Empirical, sortedCopy(x), nil)
}

// Quantiles returns Quantile(x, p) for each p in ps, sorting x only once.
func Quantiles(x []float64, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	var sorted []float64
	if len(x) > 0 {
		sorted = sortedCopy(x)
	}
	for i, p := range ps {
		if !(p >= 0 && p <= 1) {
			panic("stats: quantile probability out of [0, 1]")
		}
		if sorted == nil {
			out[i] = math.NaN()
			continue
		}
		out[i] = stat.Quantile(p, stat.Empirical, sorted, nil)
	}
	return out
}

func sortedCopy(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
