package nic_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// TestDemuxRSS: every packet lands in exactly one queue, the one QueueOf
// its hash names (reta[hash % 128] with the table filled round-robin, so
// queue = hash % 128 % n), in arrival order within the queue, whatever
// order the rings read their feeds in.
func TestDemuxRSS(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 16} {
		const total = 5000
		pkts := modeltest.Constant(total, 10, 7, 60, 37)
		for i := range pkts {
			pkts[i].Seq = uint32(i) // packet id
		}
		src := modeltest.NewFeed(pkts)
		d := nic.NewDemux(src, n)
		var led pkt.Ledger
		seen := make([]int, total)
		last := make([]int, n)
		for q := range last {
			last[q] = -1
		}
		rng := sim.NewStreams(3).Get("test/demux")
		got := 0
		for got < total {
			q := rng.IntN(n)
			f := d.Feed(q)
			for k := rng.IntN(20); k > 0 && f.Peek() != sim.Never; k-- {
				p := f.Pop()
				got++
				id := int(p.Seq)
				seen[id]++
				if want := int(pkts[id].Hash % nic.RSSIndirection % uint32(n)); d.QueueOf(p.Hash) != want || q != want {
					t.Fatalf("n=%d packet %d (hash %#x) read from queue %d, QueueOf %d, want %d", n, id, p.Hash, q, d.QueueOf(p.Hash), want)
				}
				if n > 1 && int(p.Queue) != q {
					t.Fatalf("n=%d packet %d: Queue field %d, read from %d", n, id, p.Queue, q)
				}
				if id <= last[q] {
					t.Fatalf("n=%d queue %d: packet %d after %d (order broken)", n, q, id, last[q])
				}
				last[q] = id
			}
			led.Offer(src.Popped() - int(led.Offered))
			led.Deliver(pkt.ToStack, got-int(led.DeliveredTotal()))
			modeltest.Conservation(t, &led, demuxQueuer{d})
		}
		for id, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d packet %d seen %d times", n, id, c)
			}
		}
		// QueueOf is stable: same hash, same queue, every time.
		for _, p := range pkts[:200] {
			if a, b := d.QueueOf(p.Hash), d.QueueOf(p.Hash); a != b {
				t.Fatalf("QueueOf unstable")
			}
		}
	}
}

type demuxQueuer struct{ d *nic.Demux }

func (q demuxQueuer) Queued() int { return q.d.Buffered() }
