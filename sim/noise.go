package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Dist is the distribution of a cost's noise factor. Every distribution has
// mean 1 and the cost's coefficient of variation.
type Dist uint8

// The noise distributions.
const (
	// DistNormal is 1 + cv·Z, Z ~ N(0, 1) clipped at ±3σ and the factor at
	// 0.05 or more: symmetric jitter.
	DistNormal Dist = iota
	// DistLogNormal is exp(σZ − σ²/2) with σ² = ln(1 + cv²): right-skewed,
	// as cache misses and contention make a cost's tail (the default).
	DistLogNormal
	// DistGamma is Gamma(shape 1/cv², rate 1/cv²): right-skewed with a
	// lighter tail than the log-normal.
	DistGamma
)

var distNames = [...]string{DistNormal: "normal", DistLogNormal: "lognormal", DistGamma: "gamma"}

// String returns the distribution's name as written in a profile.
func (d Dist) String() string {
	if int(d) < len(distNames) {
		return distNames[d]
	}
	return fmt.Sprintf("Dist(%d)", d)
}

// ParseDist returns the distribution named s ("" is the log-normal).
func ParseDist(s string) (Dist, error) {
	if s == "" {
		return DistLogNormal, nil
	}
	for i, n := range distNames {
		if n == s {
			return Dist(i), nil
		}
	}
	return 0, fmt.Errorf("unknown distribution %q, expected normal, lognormal or gamma", s)
}

// CostNoise is the per-function cost noise of a host: each kernel function
// has a coefficient of variation and a distribution (from the cost
// profile). A CPU that has it draws one factor per function per step and
// scales that function's charge in the step by it. A function without its
// own entry uses the default; cv 0 leaves it exact.
type CostNoise struct {
	cv      []float64
	dist    []Dist
	set     []bool
	defCV   float64
	defDist Dist
}

// NewCostNoise returns noise with the default cv and distribution for
// functions that have no entry of their own.
func NewCostNoise(defCV float64, defDist Dist) *CostNoise {
	return &CostNoise{defCV: defCV, defDist: defDist}
}

// Set gives fn its own cv and distribution.
func (n *CostNoise) Set(fn FuncID, cv float64, d Dist) {
	for int(fn) >= len(n.cv) {
		n.cv, n.dist, n.set = append(n.cv, 0), append(n.dist, 0), append(n.set, false)
	}
	n.cv[fn], n.dist[fn], n.set[fn] = cv, d, true
}

// Of returns fn's cv and distribution.
func (n *CostNoise) Of(fn FuncID) (float64, Dist) {
	if int(fn) < len(n.set) && n.set[fn] {
		return n.cv[fn], n.dist[fn]
	}
	return n.defCV, n.defDist
}

// Factor draws fn's noise factor from rng (1 when its cv is 0).
func (n *CostNoise) Factor(fn FuncID, rng *rand.Rand) float64 {
	cv, d := n.Of(fn)
	return NoiseFactor(cv, d, rng)
}

// NoiseFactor draws one factor of mean 1 and coefficient of variation cv
// from distribution d.
func NoiseFactor(cv float64, d Dist, rng *rand.Rand) float64 {
	if cv <= 0 {
		return 1
	}
	switch d {
	case DistLogNormal:
		s2 := math.Log1p(cv * cv)
		return math.Exp(math.Sqrt(s2)*rng.NormFloat64() - s2/2)
	case DistGamma:
		k := 1 / (cv * cv)
		return distuv.Gamma{Alpha: k, Beta: k, Src: rng}.Rand()
	default:
		z := math.Max(-3, math.Min(3, rng.NormFloat64()))
		return math.Max(0.05, 1+cv*z)
	}
}

// Jitter is the seeded expiry latency of a kernel timer (hrtimer interrupt
// latency, time with interrupts off on the target CPU): each expiry is late
// by an exponential delay of mean Mean. A nil Jitter or Mean 0 is exact.
type Jitter struct {
	Mean Time
	rng  *rand.Rand
}

// NewJitter returns timer jitter of mean mean drawn from rng.
func NewJitter(mean Time, rng *rand.Rand) *Jitter { return &Jitter{Mean: mean, rng: rng} }

// Delay draws one expiry latency.
func (j *Jitter) Delay() Time {
	if j == nil || j.Mean <= 0 || j.rng == nil {
		return 0
	}
	return Time(j.rng.ExpFloat64() * float64(j.Mean))
}
