package stats

import (
	"fmt"
	"math"
)

// FormatDelta formats the change from a to b in benchstat's layout:
//
//	+12.30% (p=0.000 n=20)     significant: p < alpha
//	~ (p=0.412 n=20)           not significant
//	-3.10% (p=0.002 n=20+19)   sample sizes differ
//
// a and b are the two sides' centres (means or medians), p the test's
// p-value, na and nb the sample sizes. alpha 0 means DefaultAlpha. The
// delta is (b − a) / a; it prints as "?" when a is 0. When p is NaN (too
// few samples for a test) the result is "? (n=1)".
func FormatDelta(a, b, p float64, na, nb int, alpha float64) string {
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	n := fmt.Sprint(na)
	if na != nb {
		n = fmt.Sprintf("%d+%d", na, nb)
	}
	if math.IsNaN(p) {
		return fmt.Sprintf("? (n=%s)", n)
	}
	if !(p < alpha) {
		return fmt.Sprintf("~ (p=%.3f n=%s)", p, n)
	}
	return fmt.Sprintf("%s (p=%.3f n=%s)", FormatPercent(a, b), p, n)
}

// FormatPercent formats the relative change (b − a) / a as a signed
// percentage with two decimals, "+12.30%", or "?" when it is undefined
// (a is 0, or either value is NaN).
func FormatPercent(a, b float64) string {
	d := (b - a) / a
	if a == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return "?"
	}
	if d == 0 {
		d = 0 // print −0 as +0.00%
	}
	return fmt.Sprintf("%+.2f%%", 100*d)
}
