package xdp

import (
	"math"

	"github.com/rxsim/rxsim/sim"
)

// Wire is a device's transmit side: frames leave one after another at the
// line rate, from every TX ring of the device (the NIC serves its queues
// in turn, approximated as in the order frames were posted).
type Wire struct {
	perFrame float64 // ns on the wire per frame
	free     float64 // ns: when every frame posted so far has left
}

// NewWire returns a wire sending pps frames per second (0: no limit).
func NewWire(pps float64) *Wire {
	w := &Wire{}
	if pps > 0 {
		w.perFrame = float64(sim.Second) / pps
	}
	return w
}

// TxRing is one XDP TX ring (of a CPU, or of an RX queue for XDP_TX): a
// frame holds a descriptor and its RX buffer until it has left the wire;
// the TX clean of a later poll returns the buffer.
type TxRing struct {
	Size   int // descriptors (0: unlimited)
	wire   *Wire
	frames []onRing
	head   int
}

type onRing struct {
	at sim.Time
	q  uint16
}

// NewTxRing returns a ring of size descriptors on wire.
func NewTxRing(size int, wire *Wire) *TxRing { return &TxRing{Size: size, wire: wire} }

// Complete takes the frames that left the wire by now off the ring and
// returns their buffers to their RX queues through rel.
func (r *TxRing) Complete(now sim.Time, rel func(q uint16, n int)) {
	for r.head < len(r.frames) && r.frames[r.head].at <= now {
		rel(r.frames[r.head].q, 1)
		r.head++
	}
	if r.head == len(r.frames) {
		r.frames, r.head = r.frames[:0], 0
	} else if r.head > 1024 {
		r.frames = append(r.frames[:0], r.frames[r.head:]...)
		r.head = 0
	}
}

// InFlight is the frames on the ring (posted, not yet completed).
func (r *TxRing) InFlight() int { return len(r.frames) - r.head }

// Post puts a frame from RX queue q on the ring at now; false if the ring
// is full (the caller drops and recycles it).
func (r *TxRing) Post(now sim.Time, q uint16) bool {
	if r.Size > 0 && r.InFlight() >= r.Size {
		return false
	}
	w := r.wire
	w.free = math.Max(float64(now), w.free) + w.perFrame
	r.frames = append(r.frames, onRing{sim.Time(math.Ceil(w.free)), q})
	return true
}
