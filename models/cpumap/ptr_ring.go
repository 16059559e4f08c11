package cpumap

import "github.com/rxsim/rxsim/models/pkt"

// SMPCacheBytes and the pointer size give ptr_ring's lazy-zeroing batch:
// r->batch = SMP_CACHE_BYTES * 2 / sizeof(void *) = 16 on x86-64
// (include/linux/ptr_ring.h __ptr_ring_set_size, kernel-rx-path.md §6.3).
const (
	SMPCacheBytes = 64
	PtrSize       = 8
	// PtrRingBatch is the default consumer zeroing batch (16).
	PtrRingBatch = 2 * SMPCacheBytes / PtrSize
)

// PtrRing is a ptr_ring of frames with one producer (under producer_lock)
// and one consumer. A slot is "full" (non-NULL) from its produce until the
// consumer zeroes it; the consumer zeroes consumed slots lazily, Batch at a
// time (or at the end of the array), so up to Batch-1 consumed slots still
// look occupied to the producer, which sees the ring full when the slot at
// its index is non-NULL. Frames are values in a preallocated array.
type PtrRing struct {
	slots []pkt.Packet
	size  int
	batch int

	producer     int
	consumerHead int
	consumerTail int
	count        int // produced and not yet consumed
	nonNull      int // produced and not yet zeroed
	segs         int
}

// NewPtrRing returns a ring of size slots. The zeroing batch is
// PtrRingBatch, or 1 when that exceeds size/2 (qsize < 32).
func NewPtrRing(size int) *PtrRing {
	if size < 1 {
		size = 1
	}
	b := PtrRingBatch
	if b > size/2 {
		b = 1
	}
	return &PtrRing{slots: make([]pkt.Packet, size), size: size, batch: b}
}

// Size returns the number of slots.
func (r *PtrRing) Size() int { return r.size }

// Batch returns the consumer's zeroing batch.
func (r *PtrRing) Batch() int { return r.batch }

// Len returns the frames produced and not yet consumed.
func (r *PtrRing) Len() int { return r.count }

// Occupied returns the non-NULL slots (unconsumed plus consumed-not-zeroed).
func (r *PtrRing) Occupied() int { return r.nonNull }

// Empty is __ptr_ring_empty: the slot at consumer_head is NULL.
func (r *PtrRing) Empty() bool { return r.count == 0 }

// Queued implements pkt.Queuer: wire segments in the ring.
func (r *PtrRing) Queued() int { return r.segs }

// Produce is __ptr_ring_produce: false (-ENOSPC) when the slot at the
// producer index is still non-NULL. The occupied slots are contiguous from
// consumer_tail to the producer, so that happens exactly when all size
// slots are non-NULL.
func (r *PtrRing) Produce(p pkt.Packet) bool {
	if r.nonNull == r.size {
		return false
	}
	r.slots[r.producer] = p
	r.producer++
	if r.producer == r.size {
		r.producer = 0
	}
	r.count++
	r.nonNull++
	r.segs += p.WireSegs()
	return true
}

// ConsumeBatched is __ptr_ring_consume_batched: up to len(dst) frames.
func (r *PtrRing) ConsumeBatched(dst []pkt.Packet) int {
	n := 0
	for n < len(dst) && r.count > 0 {
		dst[n] = r.slots[r.consumerHead]
		r.segs -= dst[n].WireSegs()
		r.discardOne()
		n++
	}
	return n
}

// discardOne is __ptr_ring_discard_one: advance consumer_head and zero the
// consumed slots in a batch when batch of them accumulated or the end of
// the array is reached.
func (r *PtrRing) discardOne() {
	head := r.consumerHead
	r.consumerHead++
	r.count--
	if r.consumerHead-r.consumerTail >= r.batch || r.consumerHead >= r.size {
		r.nonNull -= head - r.consumerTail + 1
		r.consumerTail = r.consumerHead
	}
	if r.consumerHead >= r.size {
		r.consumerHead = 0
		r.consumerTail = 0
	}
}
