package nic

import (
	"testing"

	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// vethRig is one CPU with a softnet and a veth RX queue whose NAPI runs in
// its softirq (the inline, non-threaded case). NAPI costs are 0 so the
// softirq's busy time is the veth's and XDP's work alone.
type vethRig struct {
	eng  *sim.Engine
	acct *sim.Account
	rq   *VethRQ
	led  pkt.Ledger
}

var testVethCosts = VethCosts{XmitPkt: 4, PollCall: 10, PollPkt: 1, ConvertPkt: 20, ConvertByte: 0.5,
	SkbFree: 7, BulkSkbCall: 5, BulkSkbPkt: 2}

func newVethRig(t *testing.T, verdict string) *vethRig {
	t.Helper()
	r := &vethRig{eng: sim.NewEngine(64), acct: sim.NewAccount(1)}
	funcs := sim.NewFuncs()
	cpu := sim.NewCPU(0, r.eng, r.acct, sim.DefaultSched())
	sn := napi.NewSoftnet(napi.SoftnetConfig{}, cpu, napi.NewCosts(funcs, 0, 0, 0, 0))
	var prog *xdp.Program
	if verdict != "none" {
		v, err := xdp.ParseVerdict(verdict)
		if err != nil {
			t.Fatal(err)
		}
		prog = xdp.NewProgram(verdict, xdp.All{V: v}, 2, funcs)
	}
	hook := xdp.NewHook(prog, 0, xdp.Costs{ReturnFrame: 3}, &r.led, funcs)
	r.rq = NewVethRQ(VethRingSize, hook, &r.led, testVethCosts, funcs)
	r.rq.NAPI = napi.New(napi.Config{Name: "veth0"}, r.rq, sn)
	return r
}

func packets(n int) []pkt.Packet {
	ps := make([]pkt.Packet, n)
	for i := range ps {
		ps[i] = pkt.Packet{Len: 60, Segs: 1}
	}
	return ps
}

func TestVethPoll(t *testing.T) {
	cases := []struct {
		name    string
		verdict string
		n       int
		frames  bool
		queued  int
		polls   uint64
		busy    sim.Time // softirq ns, hand-computed from testVethCosts
		deliv   uint64   // to the stack
		drops   uint64   // xdp_drop
		full    uint64   // veth_ring_full
		bulks   uint64
	}{
		// 64 frames: one full poll (64 = weight, repoll) then an empty one:
		// 2 x 10 + 64 x (1 consume + 2 prog + 3 return_frame).
		{"live batch drop", "drop", 64, true, 64, 2, 2*10 + 64*6, 0, 64, 0, 0},
		// 300 frames: 256 fit the ring; polls 64,64,64,64,0.
		{"ring full", "drop", 300, true, 256, 5, 5*10 + 256*6, 0, 256, 44, 0},
		// one socket skb: consume 1, copy 20 + 60 x 0.5, prog 2, return 3, kfree_skb 7.
		{"skb drop", "drop", 1, false, 1, 1, 10 + 1 + 20 + 30 + 2 + 3 + 7, 0, 1, 0, 0},
		// 20 PASS frames: bulks of 16 and 4: 10 + 20 x (1+2) + 2 x 5 + 20 x 2.
		{"frame pass bulk", "pass", 20, true, 20, 1, 10 + 20*3 + 2*5 + 20*2, 20, 0, 0, 2},
		// PASS skb: copy, no free; straight to the stack.
		{"skb pass", "pass", 2, false, 2, 1, 10 + 2*(1+20+30+2), 2, 0, 0, 0},
		// no program: skbs go to napi_gro_receive, no copy.
		{"no prog skb", "none", 3, false, 3, 1, 10 + 3*1, 3, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newVethRig(t, c.verdict)
			r.led.Offer(c.n)
			if got := r.rq.Xmit(0, 0, packets(c.n), c.frames); got != c.queued {
				t.Fatalf("Xmit queued %d, want %d", got, c.queued)
			}
			if imb := r.led.Check(r.rq.Queued()); imb != 0 {
				t.Fatalf("before the poll: imbalance %d", imb)
			}
			r.eng.Run(sim.Never)
			rq := r.rq
			if rq.Polls != c.polls || rq.Packets != uint64(c.queued) {
				t.Errorf("polls %d packets %d, want %d and %d", rq.Polls, rq.Packets, c.polls, c.queued)
			}
			if got := r.acct.BusyOf(0, "softirq"); got != c.busy {
				t.Errorf("softirq busy %d ns, want %d", got, c.busy)
			}
			if r.led.Delivered[pkt.ToStack] != c.deliv || r.led.Dropped[pkt.XDPDrop] != c.drops ||
				r.led.Dropped[pkt.VethRingFull] != c.full || rq.BulkCalls != c.bulks {
				t.Errorf("stack %d xdp_drop %d ring_full %d bulks %d, want %d %d %d %d",
					r.led.Delivered[pkt.ToStack], r.led.Dropped[pkt.XDPDrop], r.led.Dropped[pkt.VethRingFull], rq.BulkCalls,
					c.deliv, c.drops, c.full, c.bulks)
			}
			if imb := r.led.Check(rq.Queued()); imb != 0 || rq.Queued() != 0 {
				t.Errorf("conservation: imbalance %d, queued %d", imb, rq.Queued())
			}
		})
	}
}

// sender transmits n single skbs at the end of its step, as the generator
// thread does (the softirq they raise runs after the step).
type sender struct {
	r *vethRig
	n int
}

func (s *sender) Run(now sim.Time, w *sim.Work) { w.Add(0, 1) }

func (s *sender) Done(now sim.Time) bool {
	for i := 0; i < s.n; i++ {
		s.r.led.Offer(1)
		s.r.rq.Xmit(now, 0, packets(1), false)
	}
	return false
}

// TestVethNotifyMasked: while the NAPI is scheduled, rx_notify_masked keeps
// further transmits from scheduling it again; after it completes, the next
// transmit schedules it once more.
func TestVethNotifyMasked(t *testing.T) {
	r := newVethRig(t, "drop")
	cpu := r.rq.NAPI.Softnet().CPU()
	th := cpu.NewThread("sender", "app", &sender{r: r, n: 3})
	cpu.Wake(th)
	r.eng.Run(sim.Never)
	if s := r.rq.NAPI.Schedules; s != 1 {
		t.Fatalf("schedules %d after 3 transmits in one step, want 1", s)
	}
	if r.rq.Polls != 1 || r.rq.Packets != 3 {
		t.Fatalf("polls %d packets %d, want 1 and 3", r.rq.Polls, r.rq.Packets)
	}
	cpu.Wake(th)
	r.eng.Run(sim.Never)
	if s := r.rq.NAPI.Schedules; s != 2 || r.rq.Polls != 2 {
		t.Errorf("schedules %d polls %d, want 2 and 2", s, r.rq.Polls)
	}
	if imb := r.led.Check(r.rq.Queued()); imb != 0 {
		t.Errorf("conservation: imbalance %d", imb)
	}
}

// TestVethXmitRemote: the sender's remote-consumer surcharge (80 ns here)
// is paid per skb while the ring holds fewer than PtrRingBatch entries
// (producer and consumer in the same cache lines), an eighth of it (one
// line transfer per 8 pointers) with more queued, and not at all when
// the consumer is the sender's own CPU.
func TestVethXmitRemote(t *testing.T) {
	for _, c := range []struct {
		name   string
		cpu    int // the sender's CPU (the consumer is CPU 0)
		queued int
		want   sim.Time
	}{
		{"local", 0, 0, 4},
		{"remote, empty ring", 1, 0, 4 + 80},
		{"remote, 15 queued", 1, PtrRingBatch - 1, 4 + 80},
		{"remote, 16 queued", 1, PtrRingBatch, 4 + 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newVethRig(t, "drop")
			r.rq.cXmitRemote = 80
			r.led.Offer(c.queued)
			for _, p := range packets(c.queued) {
				r.rq.Ring.produce(vethEntry{p: p}) // queued, no NAPI run
			}
			if r.rq.Ring.Queued() != c.queued {
				t.Fatalf("%d queued, want %d", r.rq.Ring.Queued(), c.queued)
			}
			var w sim.Work
			r.rq.ChargeXmit(&w, c.cpu, 1, false)
			if w.Total() != c.want {
				t.Errorf("transmit of one skb charged %d ns, want %d", w.Total(), c.want)
			}
			if imb := r.led.Check(r.rq.Queued()); imb != 0 {
				t.Errorf("conservation: imbalance %d", imb)
			}
		})
	}
}
