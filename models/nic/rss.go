package nic

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// RSSIndirection is the size of the RSS redirection table (ixgbe RETA: 128 entries).
const RSSIndirection = 128

// Demux splits one source into per-queue feeds by RSS: queue =
// reta[hash % 128], with the table filled round-robin over the queues as
// the drivers do by default. Packets are pulled from the source in arrival
// order and buffered per queue until that queue's ring reads them.
type Demux struct {
	src    Feed
	reta   [RSSIndirection]uint16
	queues []*demuxFeed
}

type demuxFeed struct {
	d   *Demux
	q   int
	buf []pkt.Packet
	h   int
}

// NewDemux returns a demultiplexer for n queues.
func NewDemux(src Feed, n int) *Demux {
	d := &Demux{src: src}
	for i := range d.reta {
		d.reta[i] = uint16(i % n)
	}
	for q := 0; q < n; q++ {
		d.queues = append(d.queues, &demuxFeed{d: d, q: q})
	}
	return d
}

// QueueOf returns the RSS queue of a flow hash.
func (d *Demux) QueueOf(hash uint32) int { return int(d.reta[hash%RSSIndirection]) }

// Feed returns queue q's feed.
func (d *Demux) Feed(q int) Feed {
	if len(d.queues) == 1 {
		return d.src
	}
	return d.queues[q]
}

// Buffered returns packets pulled from the source but not yet read by a ring.
func (d *Demux) Buffered() int {
	n := 0
	for _, f := range d.queues {
		n += len(f.buf) - f.h
	}
	return n
}

// demuxLookahead bounds how many source packets a queue with nothing
// buffered pulls ahead (beyond what the rings have asked for) looking for
// one of its own; without a bound an idle queue (no flow hashes to it)
// would pull an unlimited source forever.
const demuxLookahead = 1024

// route puts the next source packet in its queue's buffer.
func (d *Demux) route() {
	p := d.src.Pop()
	q := d.QueueOf(p.Hash)
	p.Queue = uint16(q)
	d.queues[q].push(p)
}

// PullUntil distributes every source packet arriving at or before t (the
// ring is about to read up to t); it implements the ring's horizoner.
func (f *demuxFeed) PullUntil(t sim.Time) {
	for f.d.src.Peek() <= t {
		f.d.route()
	}
}

// Peek returns the arrival of the queue's next packet or, when none is
// found within demuxLookahead source packets, a lower bound for it: the
// source's next arrival (the queue's next packet cannot come earlier).
// After PullUntil(t) the result is exact up to t: it is <= t only if a
// packet of this queue arrives by t.
func (f *demuxFeed) Peek() sim.Time {
	for k := 0; f.h >= len(f.buf); k++ {
		f.buf, f.h = f.buf[:0], 0
		t := f.d.src.Peek()
		if t == sim.Never || k == demuxLookahead {
			return t
		}
		f.d.route()
	}
	return f.buf[f.h].Arrival
}

// Pop returns the queue's next packet. Call it after Peek returned an
// arrival at or before a PullUntil horizon (as the ring does); otherwise it
// pulls the source until one of the queue's packets comes.
func (f *demuxFeed) Pop() pkt.Packet {
	for f.h >= len(f.buf) {
		f.buf, f.h = f.buf[:0], 0
		f.d.route()
	}
	p := f.buf[f.h]
	f.h++
	return p
}

// push appends p to the queue's buffer, first dropping the entries already
// read: all of them when the buffer is used up, else the read prefix once
// it is half the buffer (a queue that never runs empty, because another
// queue's ring reads ahead of it, would otherwise grow its buffer for the
// whole run). Amortised, each packet is copied at most once.
func (f *demuxFeed) push(p pkt.Packet) {
	switch {
	case f.h > 0 && f.h == len(f.buf):
		f.buf, f.h = f.buf[:0], 0
	case f.h >= 64 && 2*f.h >= len(f.buf):
		n := copy(f.buf, f.buf[f.h:])
		f.buf, f.h = f.buf[:n], 0
	}
	f.buf = append(f.buf, p)
}
