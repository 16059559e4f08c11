package modeltest

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Feed is a slice-backed arrival source (it satisfies nic.Feed and
// traffic.Source): packets arrive at exactly their Arrival times, in slice
// order. Arrivals must be non-decreasing.
type Feed struct {
	Pkts []pkt.Packet
	next int
}

// NewFeed returns a feed of pkts.
func NewFeed(pkts []pkt.Packet) *Feed { return &Feed{Pkts: pkts} }

// Peek returns the next arrival time, sim.Never when the feed is empty.
func (f *Feed) Peek() sim.Time {
	if f.next >= len(f.Pkts) {
		return sim.Never
	}
	return f.Pkts[f.next].Arrival
}

// Pop returns the next packet.
func (f *Feed) Pop() pkt.Packet {
	p := f.Pkts[f.next]
	f.next++
	return p
}

// Popped returns how many packets have been taken from the feed.
func (f *Feed) Popped() int { return f.next }

// Remaining returns the packets not yet taken (not yet offered to a ring).
func (f *Feed) Remaining() int { return len(f.Pkts) - f.next }

// Packet returns a UDP packet of len bytes (without FCS) of flow arriving at t.
func Packet(t sim.Time, flow uint32, length int) pkt.Packet {
	return pkt.Packet{Arrival: t, Flow: flow, Hash: flow*2654435761 + 1, Len: int32(length),
		Payload: int32(max(length-42, 0)), Segs: 1, Proto: pkt.UDP, CsumOK: true}
}

// Constant returns n packets of length bytes, the first at start and then
// one every gap, cycling over flows flows (flow i % flows).
func Constant(n int, start, gap sim.Time, length, flows int) []pkt.Packet {
	flows = max(flows, 1)
	out := make([]pkt.Packet, n)
	for i := range out {
		out[i] = Packet(start+sim.Time(i)*gap, uint32(i%flows), length)
	}
	return out
}

// At returns one packet of length bytes per arrival time, all of flow 0.
func At(length int, times ...sim.Time) []pkt.Packet {
	out := make([]pkt.Packet, len(times))
	for i, t := range times {
		out[i] = Packet(t, 0, length)
	}
	return out
}
