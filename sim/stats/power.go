package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Defaults for CheckPower.
const (
	DefaultAlpha = 0.05 // significance level of the two-sided test
	DefaultPower = 0.8  // probability of detecting a true effect
)

// PowerCheck says whether N replications per side can detect a relative
// effect of MinEffect given the observed coefficient of variation.
type PowerCheck struct {
	N         int     // replications per side
	CV        float64 // coefficient of variation (σ/μ) of the metric
	MinEffect float64 // requested minimum relative effect, e.g. 0.02 for 2%
	Alpha     float64 // two-sided significance level
	Power     float64 // requested power

	// Detectable is the smallest relative effect N per side detects with
	// the requested power: (z(1−α/2) + z(power)) · CV · √(2/N).
	Detectable float64

	// NeededN is the number per side needed to detect MinEffect:
	// ⌈2 · (z(1−α/2) + z(power))² · (CV/MinEffect)²⌉, at least 2.
	NeededN int

	// TooSmall is true when N < NeededN.
	TooSmall bool
}

// CheckPower is CheckPowerAt with DefaultAlpha and DefaultPower.
func CheckPower(n int, cv, minEffect float64) PowerCheck {
	return CheckPowerAt(n, cv, minEffect, DefaultAlpha, DefaultPower)
}

// CheckPowerAt checks whether n replications per side are enough to
// detect a relative difference of minEffect between two means, using the
// normal approximation of a two-sample two-sided test at significance
// alpha with the given power. cv is the coefficient of variation of the
// metric, for example the larger of the two sides' Summary.CV. The normal
// approximation slightly understates the n a t-test needs when n is
// below about 10.
//
// It panics if minEffect ≤ 0, cv < 0 or NaN, or alpha or power is not in
// (0, 1).
func CheckPowerAt(n int, cv, minEffect, alpha, power float64) PowerCheck {
	switch {
	case !(minEffect > 0):
		panic("stats: minimum effect must be positive")
	case !(cv >= 0):
		panic("stats: coefficient of variation must be non-negative")
	case !(alpha > 0 && alpha < 1):
		panic("stats: alpha must be in (0, 1)")
	case !(power > 0 && power < 1):
		panic("stats: power must be in (0, 1)")
	}
	z := distuv.UnitNormal.Quantile(1-alpha/2) + distuv.UnitNormal.Quantile(power)
	c := PowerCheck{N: n, CV: cv, MinEffect: minEffect, Alpha: alpha, Power: power}
	c.Detectable = math.Inf(1)
	if n > 0 {
		c.Detectable = z * cv * math.Sqrt(2/float64(n))
	}
	need := 2 * z * z * (cv / minEffect) * (cv / minEffect)
	// Guard against 2.0000000001 becoming 3 through rounding.
	c.NeededN = max(2, int(math.Ceil(need-1e-9)))
	c.TooSmall = n < c.NeededN
	return c
}

// String returns a one-line description suitable for a warning, e.g.
// "n=20 per side detects ≥4.43% (CV 5.00%, α=0.05, power 0.8); 2.00% needs n=99".
func (c PowerCheck) String() string {
	s := fmt.Sprintf("n=%d per side detects ≥%.2f%% (CV %.2f%%, α=%g, power %g)",
		c.N, 100*c.Detectable, 100*c.CV, c.Alpha, c.Power)
	if c.TooSmall {
		s += fmt.Sprintf("; %.2f%% needs n=%d", 100*c.MinEffect, c.NeededN)
	}
	return s
}
