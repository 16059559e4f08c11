package stack

import (
	"testing"

	"github.com/rxsim/rxsim/sim"
)

// TestHistogramBuckets checks that every recorded value lies in a bucket
// whose upper bound is at least the value and within 1/128 of it, and that
// the counts add up.
func TestHistogramBuckets(t *testing.T) {
	var h Histogram
	vals := []sim.Time{0, 1, 255, 256, 257, 1000, 1000, 65_000, 1_000_000, 123_456_789}
	for _, v := range vals {
		h.Record(v)
	}
	up, n := h.Buckets()
	var total uint64
	for i := range up {
		if i > 0 && !(up[i] > up[i-1]) {
			t.Fatalf("bounds not increasing at %d: %v", i, up)
		}
		total += n[i]
	}
	if total != uint64(len(vals)) {
		t.Errorf("counts sum to %d, want %d", total, len(vals))
	}
	for _, v := range vals {
		i := histIndex(v)
		if u := bucketUpper(i); u < float64(v) || u-float64(v) > float64(v)/128+1 {
			t.Errorf("value %d: bucket upper bound %g", v, u)
		}
		if i+1 < histBuckets && bucketUpper(i) >= bucketUpper(i+1) {
			t.Errorf("bucket %d's bound %g not below the next %g", i, bucketUpper(i), bucketUpper(i+1))
		}
	}
}
