package stack

import (
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
)

// TestCoalesce: tcp_add_backlog merges an skb into the backlog's tail only
// when it continues it in sequence, neither carries SYN, RST or URG, CWR
// agrees, both came from the same RX queue and the frags fit.
func TestCoalesce(t *testing.T) {
	tail := func() pkt.Packet {
		return pkt.Packet{Seq: 1000, Payload: 1448, Len: 1514, Segs: 1, Ack: 7, Flags: pkt.FlagACK}
	}
	next := func() pkt.Packet {
		return pkt.Packet{Seq: 2448, Payload: 1448, Len: 1514, Segs: 1, Ack: 9, Flags: pkt.FlagACK | pkt.FlagPSH}
	}
	for _, c := range []struct {
		name  string
		tail  func(*pkt.Packet)
		p     func(*pkt.Packet)
		merge bool
	}{
		{"in sequence", nil, nil, true},
		{"gap", nil, func(p *pkt.Packet) { p.Seq += 1448 }, false},
		{"SYN", nil, func(p *pkt.Packet) { p.Flags |= pkt.FlagSYN }, false},
		{"RST on the tail", func(p *pkt.Packet) { p.Flags |= pkt.FlagRST }, nil, false},
		{"URG", nil, func(p *pkt.Packet) { p.Flags |= pkt.FlagURG }, false},
		{"CWR differs", nil, func(p *pkt.Packet) { p.Flags |= pkt.FlagCWR }, false},
		{"other queue", nil, func(p *pkt.Packet) { p.Queue = 1 }, false},
		{"frags full", func(p *pkt.Packet) { p.Segs = coalesceMaxSegs }, func(p *pkt.Packet) { p.Seq = 1000 + 1448 }, false},
		{"last frag", func(p *pkt.Packet) { p.Segs = coalesceMaxSegs - 1 }, func(p *pkt.Packet) { p.Seq = 1000 + 1448 }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl, p := tail(), next()
			if c.tail != nil {
				c.tail(&tl)
			}
			if c.p != nil {
				c.p(&p)
			}
			before := tl
			if got := coalesce(&tl, p); got != c.merge {
				t.Fatalf("coalesce = %v, want %v", got, c.merge)
			}
			if !c.merge {
				if tl != before {
					t.Errorf("tail changed without a merge: %+v", tl)
				}
				return
			}
			if tl.Payload != before.Payload+p.Payload || tl.Len != before.Len+p.Len ||
				int(tl.Segs) != before.WireSegs()+p.WireSegs() || tl.Ack != 9 || tl.Flags&pkt.FlagPSH == 0 {
				t.Errorf("merged tail %+v from %+v and %+v", tl, before, p)
			}
		})
	}
}
