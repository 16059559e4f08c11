package stats

import "fmt"

// DefaultCeilingTol is the relative tolerance AtCeiling uses when tol is 0.
const DefaultCeilingTol = 0.01

// CeilingCheck reports whether the samples of a metric are pinned at a
// known ceiling, such as the line rate of the wire.
type CeilingCheck struct {
	Ceiling float64 // the ceiling, e.g. 14.88e6 pkt/s for 10G at 64 B
	Tol     float64 // relative tolerance

	PinnedA bool // the median of A is within Tol of Ceiling
	PinnedB bool // the median of B is within Tol of Ceiling

	// FracA and FracB are the fractions of samples within Tol of Ceiling.
	FracA, FracB float64
}

// Both reports whether both sides are pinned. A comparison of such a
// metric measures the ceiling, not the change; compare a cost metric
// (CPU time per packet, CPU utilisation) instead.
func (c CeilingCheck) Both() bool { return c.PinnedA && c.PinnedB }

// String describes the check, e.g. "pinned at ceiling 1.488e+07 on both sides".
func (c CeilingCheck) String() string {
	switch {
	case c.Both():
		return fmt.Sprintf("pinned at ceiling %g on both sides", c.Ceiling)
	case c.PinnedA:
		return fmt.Sprintf("A pinned at ceiling %g", c.Ceiling)
	case c.PinnedB:
		return fmt.Sprintf("B pinned at ceiling %g", c.Ceiling)
	}
	return fmt.Sprintf("below ceiling %g", c.Ceiling)
}

// AtCeiling checks whether a and b are pinned at ceiling. A value is at
// the ceiling when it is ≥ ceiling·(1 − tol) (values above the ceiling
// count as at it); a side is pinned when its median is. tol 0 means
// DefaultCeilingTol. An empty side is not pinned. It panics if ceiling ≤ 0
// or tol is negative or ≥ 1.
func AtCeiling(a, b []float64, ceiling, tol float64) CeilingCheck {
	if !(ceiling > 0) {
		panic("stats: ceiling must be positive")
	}
	if !(tol >= 0 && tol < 1) {
		panic("stats: ceiling tolerance must be in [0, 1)")
	}
	if tol == 0 {
		tol = DefaultCeilingTol
	}
	c := CeilingCheck{Ceiling: ceiling, Tol: tol}
	lim := ceiling * (1 - tol)
	side := func(x []float64) (bool, float64) {
		if len(x) == 0 {
			return false, 0
		}
		var k int
		for _, v := range x {
			if v >= lim {
				k++
			}
		}
		return Median(x) >= lim, float64(k) / float64(len(x))
	}
	c.PinnedA, c.FracA = side(a)
	c.PinnedB, c.FracB = side(b)
	return c
}
