package stack

import (
	"math"
	"math/bits"

	"github.com/rxsim/rxsim/sim"
)

// histSub is the number of sub-buckets per power of two (relative bucket
// width 1/128 above 256 ns; exact below).
const (
	histSubBits = 7
	histSub     = 1 << histSubBits
	histExact   = 2 * histSub
	histBuckets = histExact + 48*histSub
)

// Histogram is a log-linear latency histogram in nanoseconds: values below
// 256 ns are exact, above they fall in buckets of 1/128 of their power of
// two. It does not allocate when recording.
//
// Percentile definition: Quantile(q) is the nearest-rank percentile, the
// smallest recorded value v such that at least q of all samples are <= v
// (rank ceil(q*N)), reported as the midpoint of the bucket holding it, so
// within 1/256 of the true sample value. Mean is exact.
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    float64
	max    sim.Time
}

func histIndex(v sim.Time) int {
	if v < histExact {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - (histSubBits + 1)
	mant := int(uint64(v) >> uint(shift))
	i := histExact + (shift-1)*histSub + (mant - histSub)
	if i >= histBuckets {
		return histBuckets - 1
	}
	return i
}

// bucketMid returns the midpoint of bucket i in ns.
func bucketMid(i int) float64 {
	if i < histExact {
		return float64(i)
	}
	shift := (i-histExact)/histSub + 1
	mant := (i-histExact)%histSub + histSub
	lo := float64(uint64(mant) << uint(shift))
	return lo + float64(uint64(1)<<uint(shift))/2
}

// Record adds one sample of v ns.
func (h *Histogram) Record(v sim.Time) {
	h.counts[histIndex(v)]++
	h.n++
	h.sum += float64(v)
	if v > h.max {
		h.max = v
	}
}

// Reset clears the histogram (end of the warm-up).
func (h *Histogram) Reset() { *h = Histogram{} }

// Count returns the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Mean returns the exact mean in ns (0 without samples).
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1) in ns.
func (h *Histogram) Quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var c uint64
	for i, k := range h.counts {
		c += k
		if c >= rank {
			return bucketMid(i)
		}
	}
	return float64(h.max)
}

// bucketUpper returns the largest value bucket i holds, in ns.
func bucketUpper(i int) float64 {
	if i < histExact {
		return float64(i)
	}
	shift := (i-histExact)/histSub + 1
	mant := (i-histExact)%histSub + histSub
	return float64(uint64(mant+1)<<uint(shift)) - 1
}

// Buckets returns the non-empty buckets in increasing order: each one's
// upper bound in ns (the largest value it holds) and its count.
func (h *Histogram) Buckets() (upper []float64, counts []uint64) {
	for i, k := range h.counts {
		if k > 0 {
			upper = append(upper, bucketUpper(i))
			counts = append(counts, k)
		}
	}
	return upper, counts
}
