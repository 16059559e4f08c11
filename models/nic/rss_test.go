package nic_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/traffic"
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

// TestDemuxIdleQueue: one flow over 4 queues from an unlimited source
// (pktgen at 64 B line rate, no count): the queues no flow hashes to must
// neither hang nor hoard. Each of the 4 rings is served by its own NAPI
// on one of 2 CPUs; after 2 ms the busy queue has dropped every packet
// by XDP, the idle ones took no interrupt, the demux holds a bounded
// lookahead, and the engine fired a bounded number of events (an idle
// queue's interrupt timer re-arms once per 1024 source packets).
func TestDemuxIdleQueue(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 2})
	src := traffic.NewPktgen(traffic.PktgenConfig{PktSize: 60, Threads: 2, ThreadMaxPPS: 12e6, Flows: 1,
		LineGbps: 10, Overhead: 24}, nil)
	d := nic.NewDemux(src, 4)
	busy := d.QueueOf(traffic.FlowHash(0))
	for q := 0; q < 4; q++ {
		h.AddQueue(modeltest.QueueConfig{CPU: q % 2, Feed: d.Feed(q), ITRUsecs: 20, Costs: smallCosts, Prog: h.Drop(5)})
	}
	h.Start()
	h.Run(2 * sim.Millisecond)
	for q, x := range h.Queues {
		if q != busy && (x.IRQs != 0 || x.Packets != 0) {
			t.Errorf("idle queue %d: %d IRQs, %d packets", q, x.IRQs, x.Packets)
		}
	}
	if x := h.Queues[busy]; x.Packets < 29000 { // 2 ms x 14.88 Mpps = 29,762
		t.Errorf("busy queue %d handled only %d packets", busy, x.Packets)
	}
	// Bounded: the idle queues' lookahead (3 x 1024) plus what arrived
	// since the busy ring last read its feed (it reads lazily, when its
	// filled descriptors run out). It must not grow with the run.
	b1 := d.Buffered()
	h.Run(6 * sim.Millisecond)
	if b2 := d.Buffered(); b1 > 8192 || b2 > 8192 {
		t.Errorf("demux holds %d packets at 2 ms, %d at 6 ms", b1, b2)
	}
	t.Logf("demux buffered %d at 2 ms, %d at 6 ms; %d events", b1, d.Buffered(), h.Eng.Fired())
	if f := h.Eng.Fired(); f > 60000 {
		t.Errorf("%d events for 6 ms", f)
	}
	h.Check(t)
}
