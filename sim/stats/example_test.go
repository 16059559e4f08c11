package stats_test

import (
	"fmt"

	"github.com/rxsim/rxsim/sim/stats"
)

// Welch's t-test on R's sleep data, checked against
// R: t.test(sleep$extra[11:20], sleep$extra[1:10]).
func ExampleWelch() {
	a := []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	b := []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
	r := stats.Welch(a, b)
	fmt.Printf("t = %.4f, df = %.3f, p-value = %.5f\n", r.T, r.DF, r.P)
	fmt.Printf("95%% CI of B-A: [%.7f, %.7f]\n", r.CILow, r.CIHigh)
	fmt.Println(stats.FormatDelta(r.MeanA, r.MeanB, r.P, r.NA, r.NB, 0))
	// Output:
	// t = 1.8608, df = 17.776, p-value = 0.07939
	// 95% CI of B-A: [-0.2054832, 3.3654832]
	// ~ (p=0.079 n=10)
}

// The Mann-Whitney U test with an exact p-value, checked against
// R: wilcox.test(x, y) on the data of ?wilcox.test.
func ExampleMannWhitney() {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	r := stats.MannWhitney(x, y)
	fmt.Printf("W = %g, p-value = %.4f, exact = %v\n", r.U, r.P, r.Exact)
	// Output:
	// W = 35, p-value = 0.2544, exact = true
}

// A power check before trusting a "~": with a 5% run-to-run CV, 20
// replications per side cannot see a 2% change.
func ExampleCheckPower() {
	fmt.Println(stats.CheckPower(20, 0.05, 0.02))
	// Output:
	// n=20 per side detects ≥4.43% (CV 5.00%, α=0.05, power 0.8); 2.00% needs n=99
}
