package nic

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// CapFeed applies a NIC-wide packet-rate capability (the XL710's ~36 Mpps
// over all queues, kernel-rx-path.md §1) in front of RSS: a token bucket of
// CapDepth frames refilled at maxPPS. Frames above it are offered and
// dropped as nic_cap; the rest pass on in arrival order.
type CapFeed struct {
	src    Feed
	led    *pkt.Ledger
	rate   float64 // frames per ns
	tokens float64
	last   float64
	// Capped counts the frames dropped.
	Capped uint64
}

var _ Feed = (*CapFeed)(nil)

// NewCapFeed wraps src with a capability of maxPPS frames per second.
func NewCapFeed(src Feed, maxPPS float64, led *pkt.Ledger) *CapFeed {
	return &CapFeed{src: src, led: led, rate: maxPPS / 1e9, tokens: CapDepth}
}

// Peek implements Feed: the next frame the NIC accepts.
func (c *CapFeed) Peek() sim.Time {
	for {
		t := c.src.Peek()
		if t == sim.Never {
			return t
		}
		at := float64(t)
		tok := min(CapDepth, c.tokens+(at-c.last)*c.rate)
		if tok >= 1 {
			return t
		}
		c.src.Pop()
		c.tokens, c.last = tok, at
		c.Capped++
		c.led.Offer(1)
		c.led.Drop(pkt.NICCap, 1)
	}
}

// Pop implements Feed.
func (c *CapFeed) Pop() pkt.Packet {
	c.Peek()
	p := c.src.Pop()
	at := float64(p.Arrival)
	c.tokens = min(CapDepth, c.tokens+(at-c.last)*c.rate) - 1
	c.last = at
	return p
}
