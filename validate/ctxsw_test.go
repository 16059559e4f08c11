package validate

import (
	"math"
	"runtime"
	"testing"
)

// TestMeasureContextSwitch runs a short lat_ctx measurement: every
// repetition gives a positive, finite per-switch cost well under the round
// trip, and the median is one of them; likewise for the sched_yield switch.
func TestMeasureContextSwitch(t *testing.T) {
	cpu := runtime.NumCPU() - 1
	r, err := MeasureContextSwitch(cpu, 2000, 3)
	if err != nil {
		t.Skipf("skip: %v", err)
	}
	if len(r.PerSwitch) != 3 {
		t.Fatalf("%d repetitions", len(r.PerSwitch))
	}
	found := false
	for _, v := range r.PerSwitch {
		if !(v > 0) || math.IsInf(v, 0) || v > 1e6 {
			t.Errorf("per-switch cost %v ns", v)
		}
		found = found || v == r.Median
	}
	if !found {
		t.Errorf("median %v is none of %v", r.Median, r.PerSwitch)
	}
	// the yield switch: one per repetition, finite, below the round trip
	found = false
	for _, v := range r.PerYield {
		if math.IsNaN(v) || math.IsInf(v, 0) || v > 1e6 {
			t.Errorf("yield switch %v ns", v)
		}
		found = found || v == r.YieldMedian
	}
	if len(r.PerYield) != 3 || !found {
		t.Errorf("yield switches %v, median %v", r.PerYield, r.YieldMedian)
	}
	if _, err := MeasureContextSwitch(cpu, 0, 1); err == nil {
		t.Error("n = 0 accepted")
	}
}
