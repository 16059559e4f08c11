package gro

import (
	"reflect"
	"testing"
)

// TestFlushAllReasons: the full-flush callers other than napi_complete_done
// (the gro_flush_timeout watchdog path and the cpumap kthread on an empty
// ring) complete every held skb under their own reason, buckets in
// ascending order, and the list goes out at NormalList.
func TestFlushAllReasons(t *testing.T) {
	for _, r := range []FlushReason{ReasonTimeout, ReasonCpumapEmpty} {
		t.Run(r.String(), func(t *testing.T) {
			h := newHarness(DefaultConfig(), Costs{})
			// Flow 1 in bucket 1 (3 segments), flow 2 in bucket 0 (2).
			for _, p := range append(stream(1, 1, 3, nil), stream(2, 0, 2, nil)...) {
				h.receive(p)
			}
			h.e.FlushAll(h.w, r)
			if h.e.HeldSkbs() != 0 || len(h.rec.segs()) != 0 {
				t.Fatalf("after FlushAll: held %d, lists %v (the list waits for NormalList: 5 < batch 8)", h.e.HeldSkbs(), h.rec.segs())
			}
			h.e.NormalList(h.w)
			if got, want := h.rec.segs(), [][]int32{{2, 3}}; !reflect.DeepEqual(got, want) {
				t.Errorf("lists %v, want %v (bucket 0 first)", got, want)
			}
			st := h.e.Stats()
			if fl, want := st.FlushesByName(), map[string]uint64{r.String(): 2}; !reflect.DeepEqual(fl, want) {
				t.Errorf("flushes %v, want %v", fl, want)
			}
			h.checkConservation(t)
		})
	}
}
