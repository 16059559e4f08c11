package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// WelchResult is the outcome of Welch's unequal-variances t-test of B
// against A.
type WelchResult struct {
	T  float64 // t statistic of the difference MeanB − MeanA
	DF float64 // Welch–Satterthwaite degrees of freedom
	P  float64 // two-sided p-value

	MeanA, MeanB float64 // sample means
	NA, NB       int     // sample sizes

	Diff   float64 // MeanB − MeanA
	CILow  float64 // lower end of the confidence interval of Diff
	CIHigh float64 // upper end of the confidence interval of Diff
	Level  float64 // confidence level of [CILow, CIHigh]
}

// Welch performs Welch's two-sample t-test of b against a with a 95%
// confidence interval for the difference of means. See WelchAt.
func Welch(a, b []float64) WelchResult { return WelchAt(a, b, DefaultLevel) }

// WelchAt performs Welch's two-sample t-test of b against a, which does not
// assume equal variances, and returns the confidence interval for
// MeanB − MeanA at the given level.
//
//	se = √(s²a/na + s²b/nb),  t = (mean(b) − mean(a)) / se
//	df = se⁴ / ((s²a/na)²/(na−1) + (s²b/nb)²/(nb−1))
//	p  = 2 · P(T_df > |t|),   CI = diff ± t(1−α/2, df) · se
//
// The result equals R's t.test(b, a, conf.level = level). When either
// sample has fewer than two values T, DF, P and the interval are NaN. When
// both samples have zero variance (exact, noise-free figures) the test is
// degenerate: DF is na+nb−2, the interval is [Diff, Diff], and P is 1 if
// the means are equal and 0 otherwise. It panics if level is not in (0, 1).
func WelchAt(a, b []float64, level float64) WelchResult {
	checkLevel(level)
	r := WelchResult{NA: len(a), NB: len(b), Level: level}
	r.MeanA, r.MeanB = meanOrNaN(a), meanOrNaN(b)
	r.Diff = r.MeanB - r.MeanA
	if len(a) < 2 || len(b) < 2 {
		nan := math.NaN()
		r.T, r.DF, r.P, r.CILow, r.CIHigh = nan, nan, nan, nan, nan
		return r
	}
	na, nb := float64(len(a)), float64(len(b))
	qa := stat.Variance(a, nil) / na
	qb := stat.Variance(b, nil) / nb
	se2 := qa + qb
	if se2 == 0 {
		r.DF = na + nb - 2
		r.CILow, r.CIHigh = r.Diff, r.Diff
		switch {
		case r.Diff == 0:
			r.T, r.P = 0, 1
		default:
			r.T, r.P = math.Copysign(math.Inf(1), r.Diff), 0
		}
		return r
	}
	se := math.Sqrt(se2)
	r.T = r.Diff / se
	r.DF = se2 * se2 / (qa*qa/(na-1) + qb*qb/(nb-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: r.DF}
	r.P = math.Min(1, 2*t.Survival(math.Abs(r.T)))
	h := t.Quantile(1-(1-level)/2) * se
	r.CILow, r.CIHigh = r.Diff-h, r.Diff+h
	return r
}

// Significant reports whether P < alpha.
func (r WelchResult) Significant(alpha float64) bool { return r.P < alpha }

func meanOrNaN(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return stat.Mean(x, nil)
}
