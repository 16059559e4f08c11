package backlog_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/backlog"
	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// sink is __netif_receive_skb: it ends skbs as delivered to the stack and
// records on which CPU.
type sink struct {
	led   *pkt.Ledger
	byCPU [4]int
}

func (s *sink) DeliverSkb(w *sim.Work, cpu int, p pkt.Packet) {
	s.byCPU[cpu]++
	s.led.Deliver(pkt.ToStack, p.WireSegs())
}

// irq is a hard-IRQ task running f.
type irq func(w *sim.Work)

func (f irq) Run(now sim.Time, w *sim.Work) { f(w) }
func (f irq) Done(now sim.Time) bool        { return false }

var costs = backlog.Costs{Enqueue: 30, PollCall: 20, PollPkt: 10, GetRPSCPU: 10, FlowDissect: 25, IPISend: 100, IPIHandler: 400, Wake: 150}

func rig(cpus int, cfg backlog.Config) (*modeltest.Harness, *backlog.Set, *sink) {
	h := modeltest.New(modeltest.Config{CPUs: cpus, NAPI: modeltest.NAPICosts{RxAction: 80, Poll: 40, Complete: 60}})
	s := &sink{led: &h.Led}
	return h, backlog.New(cfg, costs, h.Funcs, h.Softnet, s, &h.Led, nil), s
}

// 1005 skbs enqueued to CPU 0's backlog in one go: the length test is on
// the length before the enqueue (qlen > 1000 drops), so 1001 are queued and
// 4 dropped; process_backlog then drains them 64 per poll: 15 full polls and
// one of 41 that completes.
func TestBacklogDropsAt1000(t *testing.T) {
	h, set, s := rig(1, backlog.Config{})
	h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
		for i := 0; i < 1005; i++ {
			h.Led.Offer(1)
			set.Enqueue(w, 0, 0, modeltest.Packet(0, 0, 60))
		}
	}))
	b := set.Backlog(0)
	if in, proc := b.Len(); in+proc > 1001 {
		t.Fatalf("queue length %d, want at most 1001", in+proc)
	}
	h.Run(10 * sim.Millisecond)
	if b.Enqueued != 1001 || b.Dropped != 4 || h.Softnet[0].Dropped != 4 || h.Led.Dropped[pkt.Backlog] != 4 {
		t.Errorf("enqueued %d dropped %d (softnet %d, ledger %d), want 1001 4 4 4", b.Enqueued, b.Dropped, h.Softnet[0].Dropped, h.Led.Dropped[pkt.Backlog])
	}
	if b.MaxLen != 1001 {
		t.Errorf("max input_pkt_queue length %d, want 1001", b.MaxLen)
	}
	if s.byCPU[0] != 1001 {
		t.Errorf("delivered %d, want 1001", s.byCPU[0])
	}
	if b.NAPI.Polls != 16 || b.NAPI.FullPolls != 15 || b.NAPI.Completes != 1 {
		t.Errorf("backlog polls %d full %d completes %d, want 16 15 1", b.NAPI.Polls, b.NAPI.FullPolls, b.NAPI.Completes)
	}
	if set.IPIsSent != 0 {
		t.Errorf("local enqueue sent %d IPIs", set.IPIsSent)
	}
	h.Check(t, set)
}

// steerer is a driver NAPI on CPU 0 whose poll hands packets to RPS.
type steerer struct {
	set  *backlog.Set
	pkts []pkt.Packet
	led  *pkt.Ledger
}

func (d *steerer) Poll(n *napi.NAPI, w *sim.Work, budget int) int {
	done := 0
	for done < budget && len(d.pkts) > 0 {
		d.led.Offer(1)
		d.set.Steer(w, 0, d.pkts[0])
		d.pkts = d.pkts[1:]
		done++
	}
	if done < budget {
		n.CompleteDone(w, done)
	}
	return done
}

// RPS IPIs are batched per net_rx_action: one per target CPU whose backlog
// NAPI was idle, sent at the end of net_rx_action however many NAPIs it
// polled or skbs it steered; none are sent before that end. Two driver
// NAPIs on CPU 0 steer 32 skbs each in one net_rx_action. Hashes below 2^31
// go to rps_cpus[0] = 1, the others to rps_cpus[1] = 2 (reciprocal_scale).
func TestRPSIPIsPerNetRxAction(t *testing.T) {
	h, set, s := rig(3, backlog.Config{RPSCPUs: []int{1, 2}})
	mk := func(n int) []pkt.Packet {
		var out []pkt.Packet
		for i := 0; i < n; i++ {
			p := modeltest.Packet(0, uint32(i%4), 60)
			p.Hash = 0x10000000
			if i%4 == 3 {
				p.Hash = 0x90000000
			}
			out = append(out, p)
		}
		return out
	}
	var pending, sent []int
	after := func() {
		pending = append(pending, set.PendingIPIs(0))
		sent = append(sent, int(set.IPIsSent))
	}
	d1 := &steerer{set: set, pkts: mk(32), led: &h.Led}
	d2 := &steerer{set: set, pkts: mk(32), led: &h.Led}
	n1 := napi.New(napi.Config{Name: "rx0", Weight: 64}, &probePoller{inner: d1, after: after}, h.Softnet[0])
	n2 := napi.New(napi.Config{Name: "rx1", Weight: 64}, &probePoller{inner: d2, after: after}, h.Softnet[0])
	burst := func() { h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) { n1.Schedule(); n2.Schedule() })) }
	burst()
	h.Run(sim.Millisecond)
	if got := h.Softnet[0].RxActions; got != 1 {
		t.Errorf("net_rx_action invocations %d, want 1", got)
	}
	if len(pending) != 2 || pending[0] != 2 || pending[1] != 2 || sent[1] != 0 {
		t.Errorf("pending IPIs after each poll %v, sent %v; want [2 2] pending and 0 sent until the end", pending, sent)
	}
	if set.IPIsSent != 2 || h.Softnet[1].ReceivedRPS != 1 || h.Softnet[2].ReceivedRPS != 1 {
		t.Errorf("IPIs sent %d, received_rps %d/%d; want 2, 1/1", set.IPIsSent, h.Softnet[1].ReceivedRPS, h.Softnet[2].ReceivedRPS)
	}
	if s.byCPU[1] != 48 || s.byCPU[2] != 16 {
		t.Errorf("delivered on CPU1 %d CPU2 %d, want 48 16", s.byCPU[1], s.byCPU[2])
	}
	// A second burst: a second net_rx_action, two more IPIs.
	d1.pkts, d2.pkts = mk(32), mk(32)
	burst()
	h.Run(2 * sim.Millisecond)
	if h.Softnet[0].RxActions != 2 || set.IPIsSent != 4 {
		t.Errorf("after 2 bursts: %d net_rx_action, %d IPIs; want 2, 4", h.Softnet[0].RxActions, set.IPIsSent)
	}
	// The IPI is a hard IRQ on the target: 400 ns each.
	if got := h.Busy(1, "hardirq"); got != 2*400 {
		t.Errorf("CPU1 hard IRQ time %d, want 800", got)
	}
	h.Check(t, set)
}

type probePoller struct {
	inner napi.Poller
	after func()
}

func (p *probePoller) Poll(n *napi.NAPI, w *sim.Work, budget int) int {
	done := p.inner.Poll(n, w, budget)
	p.after()
	return done
}

// With backlog threads a remote enqueue wakes the target's backlog NAPI
// thread: no IPI, the thread runs the poll.
func TestBacklogThreads(t *testing.T) {
	h, set, s := rig(2, backlog.Config{RPSCPUs: []int{1}, Threads: true})
	h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
		for i := 0; i < 100; i++ {
			h.Led.Offer(1)
			set.Steer(w, 0, modeltest.Packet(0, 0, 60))
		}
	}))
	h.Run(sim.Millisecond)
	th := set.Backlog(1).NAPI.Thread()
	if set.IPIsSent != 0 || th == nil || th.Wakeups != 1 || s.byCPU[1] != 100 {
		t.Errorf("IPIs %d, thread wakeups %v, delivered %d; want 0, 1, 100", set.IPIsSent, th.Wakeups, s.byCPU[1])
	}
	if h.Busy(1, "napi") == 0 || h.Busy(1, "softirq") != 0 {
		t.Errorf("backlog work: napi thread %d ns, softirq %d ns; want all in the thread", h.Busy(1, "napi"), h.Busy(1, "softirq"))
	}
	h.Check(t, set)
}

// An skb without a hash (cpumap-built) pays the software flow dissector
// before get_rps_cpu.
func TestSteerComputesMissingHash(t *testing.T) {
	_, set, _ := rig(2, backlog.Config{RPSCPUs: []int{1}})
	var w sim.Work
	p := modeltest.Packet(0, 3, 60)
	set.Steer(&w, 0, p)
	p.Hash = 0
	set.Steer(&w, 0, p)
	// enqueue 30 + rps 10 twice, dissector 25 once.
	if w.Total() != 2*(30+10)+25 {
		t.Errorf("cost %d, want %d", w.Total(), 2*(30+10)+25)
	}
}
