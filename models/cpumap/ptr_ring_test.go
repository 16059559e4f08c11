package cpumap

import (
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
)

func produceN(r *PtrRing, n int) int {
	ok := 0
	for i := 0; i < n; i++ {
		if r.Produce(pkt.Packet{Segs: 1}) {
			ok++
		}
	}
	return ok
}

// The consumer zeroes consumed slots 16 at a time (1 when qsize < 32): after
// consuming k < 16 frames from a full ring the producer still sees it full;
// the 16th consumption frees 16 slots at once.
func TestPtrRingLazyZeroing(t *testing.T) {
	var buf [64]pkt.Packet
	for _, tc := range []struct {
		name                 string
		qsize, batch         int
		fill, consume, after int // produced after consuming
	}{
		{"15 consumed, 0 free", 64, 16, 64, 15, 0},
		{"16 consumed, 16 free", 64, 16, 64, 16, 16},
		{"17 consumed, still 16", 64, 16, 64, 17, 16},
		{"32 consumed, 32", 64, 16, 64, 32, 32},
		{"qsize 32 batch 16", 32, 16, 32, 15, 0},
		{"qsize 31 batch 1", 31, 1, 31, 1, 1},
		{"qsize 16 batch 1", 16, 1, 16, 5, 5},
		{"end of array zeroes", 40, 16, 40, 40, 40}, // 16+16, then 8 zeroed at the end
	} {
		r := NewPtrRing(tc.qsize)
		if r.Batch() != tc.batch {
			t.Errorf("%s: batch %d, want %d", tc.name, r.Batch(), tc.batch)
		}
		if got := produceN(r, tc.fill+1); got != tc.fill {
			t.Errorf("%s: produced %d into empty ring, want %d", tc.name, got, tc.fill)
		}
		got := 0
		for got < tc.consume {
			got += r.ConsumeBatched(buf[:min(8, tc.consume-got)])
		}
		if n := produceN(r, 64); n != tc.after {
			t.Errorf("%s: produced %d after consuming %d, want %d (occupied %d)", tc.name, n, tc.consume, tc.after, r.Occupied())
		}
		if r.Len() != tc.fill-tc.consume+tc.after || r.Queued() != r.Len() {
			t.Errorf("%s: len %d queued %d, want %d", tc.name, r.Len(), r.Queued(), tc.fill-tc.consume+tc.after)
		}
	}
}

// Consuming one frame at a time from a ring kept full, the producer's view
// lags the consumer by up to batch-1 = 15 consumed-but-not-zeroed slots:
// the effective capacity dips to qsize-15.
func TestPtrRingFifteenSlots(t *testing.T) {
	r := NewPtrRing(64)
	var buf [1]pkt.Packet
	maxHidden := 0
	for i := 0; i < 200; i++ {
		produceN(r, 64)
		maxHidden = max(maxHidden, r.Occupied()-r.Len())
		r.ConsumeBatched(buf[:])
	}
	if maxHidden != 15 {
		t.Errorf("max consumed-but-not-zeroed slots = %d, want 15", maxHidden)
	}
}
