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

func (f *demuxFeed) Peek() sim.Time {
	for f.h >= len(f.buf) {
		f.buf, f.h = f.buf[:0], 0
		t := f.d.src.Peek()
		if t == sim.Never {
			return sim.Never
		}
		p := f.d.src.Pop()
		q := f.d.QueueOf(p.Hash)
		p.Queue = uint16(q)
		f.d.queues[q].push(p)
	}
	return f.buf[f.h].Arrival
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

func (f *demuxFeed) Pop() pkt.Packet {
	f.Peek()
	p := f.buf[f.h]
	f.h++
	return p
}
