package nic

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Feed is where a ring's arrivals come from (one RSS queue's share of the
// traffic).
type Feed interface {
	Peek() sim.Time
	Pop() pkt.Packet
}

// horizoner is a Feed shared with other rings through the RSS demux: the
// ring tells it how far it reads before peeking, so that the feed hands out
// every arrival up to then and can answer Peek with a lower bound beyond.
type horizoner interface {
	PullUntil(t sim.Time)
}

// CapDepth is the burst (in frames) the NIC absorbs above its packet-rate
// capability: the RX packet buffer in front of the descriptor engine
// (assumed; the XL710 datasheet value was not read).
const CapDepth = 32

// RxRing is a descriptor ring. Posted descriptors own a buffer the NIC can
// DMA into; filled descriptors hold received packets not yet cleaned;
// cleaned descriptors wait for the next refill batch. posted + filled +
// cleaned = size - 1 (one descriptor stays unused, as ixgbe_desc_unused).
type RxRing struct {
	size    int
	slots   []pkt.Packet
	head    int // next filled slot to clean
	filled  int
	posted  int
	cleaned int
	feed    Feed
	hfeed   horizoner // feed as a horizoner, nil if it is not one
	bulk    BulkFeed  // feed as a BulkFeed, nil if it is not one
	led     *pkt.Ledger
	// capacity limit (XL710 ~36 Mpps): a token bucket of capDepth frames
	// refilled at capRate frames/ns.
	capRate   float64
	capTokens float64
	capLast   float64

	// Stats.
	Missed   uint64
	Capped   uint64
	Received uint64
}

// NewRxRing returns a ring of size descriptors, all posted, fed by feed.
// maxPPS > 0 limits the rate the NIC can take frames in.
func NewRxRing(size int, feed Feed, led *pkt.Ledger, maxPPS float64) *RxRing {
	r := &RxRing{size: size, slots: make([]pkt.Packet, size), posted: size - 1, feed: feed, led: led}
	r.hfeed, _ = feed.(horizoner)
	r.bulk, _ = feed.(BulkFeed)
	if maxPPS > 0 {
		r.capRate = maxPPS / 1e9
		r.capTokens = CapDepth
	}
	return r
}

// Size returns the ring size.
func (r *RxRing) Size() int { return r.size }

// Filled returns the descriptors holding packets not yet cleaned.
func (r *RxRing) Filled() int { return r.filled }

// Queued implements pkt.Queuer.
func (r *RxRing) Queued() int { return r.filled }

// Advance pulls every arrival up to t into the ring, dropping those that
// find no posted descriptor (rx_missed) or exceed the NIC's rate (nic_cap).
func (r *RxRing) Advance(t sim.Time) {
	if r.hfeed != nil {
		r.hfeed.PullUntil(t)
	}
	if r.bulk != nil && r.capRate == 0 {
		r.advanceBulk(t)
		return
	}
	for r.feed.Peek() <= t {
		p := r.feed.Pop()
		r.led.Offer(1)
		if r.capRate > 0 {
			at := float64(p.Arrival)
			r.capTokens = min(CapDepth, r.capTokens+(at-r.capLast)*r.capRate)
			r.capLast = at
			if r.capTokens < 1 {
				r.Capped++
				r.led.Drop(pkt.NICCap, 1)
				continue
			}
			r.capTokens--
		}
		if r.posted == 0 {
			r.Missed++
			r.led.Drop(pkt.RxMissed, 1)
			continue
		}
		r.posted--
		i := r.head + r.filled
		if i >= r.size {
			i -= r.size
		}
		r.slots[i] = p
		r.filled++
		r.Received++
	}
}

// BulkFeed is a Feed that writes its arrivals up to a time straight into
// descriptor slots and counts the ones it discards, without a call per
// packet (the ring's fast path; the outcome is the same as Peek/Pop).
type BulkFeed interface {
	Feed
	// PopUntil writes the packets arriving at or before t into dst, at most
	// len(dst), and returns how many.
	PopUntil(t sim.Time, dst []pkt.Packet) int
	// SkipUntil discards the packets arriving at or before t and returns how many.
	SkipUntil(t sim.Time) int
}

// advanceBulk is Advance for a BulkFeed without a rate cap: fill the posted
// descriptors in ring order, then count what found the ring full.
func (r *RxRing) advanceBulk(t sim.Time) {
	for r.posted > 0 {
		i := r.head + r.filled
		if i >= r.size {
			i -= r.size
		}
		n := min(r.posted, r.size-i)
		k := r.bulk.PopUntil(t, r.slots[i:i+n])
		r.led.Offer(k)
		r.posted -= k
		r.filled += k
		r.Received += uint64(k)
		if k < n {
			return
		}
	}
	if k := r.bulk.SkipUntil(t); k > 0 {
		r.led.Offer(k)
		r.Missed += uint64(k)
		r.led.Drop(pkt.RxMissed, k)
	}
}

// NextArrival returns when the ring will next have a filled descriptor:
// the first filled one's arrival, else the feed's next arrival (for an RSS
// demux queue with none of its packets in sight, a lower bound: the
// interrupt timer then finds nothing and re-arms).
func (r *RxRing) NextArrival() sim.Time {
	if r.filled > 0 {
		return r.slots[r.head].Arrival
	}
	return r.feed.Peek()
}

// Clean takes the next filled descriptor (call Advance first).
func (r *RxRing) Clean() (pkt.Packet, bool) {
	if r.filled == 0 {
		return pkt.Packet{}, false
	}
	p := r.slots[r.head]
	r.head++
	if r.head == r.size {
		r.head = 0
	}
	r.filled--
	r.cleaned++
	return p, true
}

// Cleaned returns the descriptors cleaned since the last refill.
func (r *RxRing) Cleaned() int { return r.cleaned }

// Refill re-posts the cleaned descriptors and returns how many.
func (r *RxRing) Refill() int {
	n := r.cleaned
	r.posted += n
	r.cleaned = 0
	return n
}
