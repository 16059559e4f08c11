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
// the TX clean of a later poll returns the buffer, or, with SetClean, the
// TX interrupt's clean when no poll comes first.
type TxRing struct {
	Size   int // descriptors (0: unlimited)
	wire   *Wire
	frames []onRing
	head   int

	eng   *sim.Engine
	rel   func(q uint16, n int)
	armed bool
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

// SetClean makes the ring clean itself when its newest frame has left the
// wire, if no poll did (the TX completion interrupt and its NAPI poll, at
// no CPU cost here: the clean is charged with the transmit); rel returns
// the buffers.
func (r *TxRing) SetClean(eng *sim.Engine, rel func(q uint16, n int)) { r.eng, r.rel = eng, rel }

// Arm schedules the clean for the newest frame's departure (once until it
// fires). Callers arm after posting.
func (r *TxRing) Arm() {
	if r.eng == nil || r.armed || r.InFlight() == 0 {
		return
	}
	r.armed = true
	r.eng.Schedule(r.frames[len(r.frames)-1].at, r, 0)
}

// Fire implements sim.Handler: the TX clean.
func (r *TxRing) Fire(now sim.Time, _ int64) {
	r.armed = false
	r.Complete(now, r.rel)
	r.Arm()
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
