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

// TestDemuxBufferBounded: two queues read their feeds at different
// clocks (queue 1 always lags queue 0 by 500 ns, so its buffer never runs
// empty). The buffers must stay bounded by what is pending, not grow with
// the run: 10 ms at 14.9 Mpps is 149,000 packets; the lagging queue holds
// at most ~4 (500 ns / 67 ns / 2 queues).
func TestDemuxBufferBounded(t *testing.T) {
	const n = 149000
	pkts := modeltest.Constant(n, 67, 67, 60, 2)
	for i := range pkts {
		pkts[i].Hash = uint32(i % 2) // alternate queues 0 and 1
	}
	src := modeltest.NewFeed(pkts)
	d := nic.NewDemux(src, 2)
	var led pkt.Ledger
	got := 0
	for now := sim.Time(0); now < 10*sim.Millisecond+1000; now += 1000 {
		for q, lag := range []sim.Time{0, 500} {
			f := d.Feed(q)
			for f.Peek() <= now-lag {
				f.Pop()
				got++
			}
		}
	}
	led.Offer(src.Popped())
	led.Deliver(pkt.ToStack, got)
	modeltest.Conservation(t, &led, demuxQueuer{d})
	for q, c := range d.BufCapsForTest() {
		if c > 1024 {
			t.Errorf("queue %d demux buffer grew to %d entries for %d packets", q, c, n)
		}
	}
}
