// Package stats provides the statistics rxsim uses to compare two sets of
// replications (A and B) honestly: summaries, confidence intervals, Welch's
// t-test, the Mann-Whitney U test, a power check for a requested minimum
// effect, a detector for metrics pinned at a ceiling, and benchstat-style
// delta formatting.
//
// Everything is built on gonum.org/v1/gonum/stat and stat/distuv. The
// functions are pure: they never draw random numbers and never read the
// clock, so a comparison of the same samples always prints the same text.
//
// # Conventions
//
//   - A is the baseline and B the candidate. Differences are B − A and
//     relative deltas are (B − A) / A, as in benchstat.
//   - Quantiles use the nearest-rank definition (stat.Empirical, R's
//     quantile type 1): Quantile(x, p) is the smallest sample value v such
//     that at least a fraction p of the samples are ≤ v. It is always an
//     observed value, which is what latency reports print. Median is the
//     classical sample median (the mean of the two middle values when the
//     sample size is even).
//   - Standard deviations are the unbiased (n−1) estimates.
//   - Functions whose result is undefined for the input (too few samples)
//     return NaN in the affected fields rather than failing; invalid
//     parameters (a confidence level outside (0, 1), a non-positive
//     minimum effect) are programmer errors and panic, as in gonum.
//
// # What this package does not do
//
// It does not correct for multiple comparisons, and it does not pair
// samples: A and B are treated as independent samples even when rxsim
// runs them with common seeds.
package stats
