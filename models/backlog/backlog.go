package backlog

import (
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/sim"
	"strconv"
)

// Defaults (net/core/hotdata.c, kernel-rx-path.md §5.1).
const (
	NetdevMaxBacklog = 1000 // net.core.netdev_max_backlog
	DevWeight        = 64   // net.core.dev_weight (dev_rx_weight)
)

// Receiver is __netif_receive_skb: process_backlog hands each skb to it on
// the backlog's CPU.
type Receiver interface {
	DeliverSkb(w *sim.Work, cpu int, p pkt.Packet)
}

// Releaser returns buffers to their RX queue when a dropped skb is freed.
type Releaser func(queue uint16, n int)

// Config configures the backlogs and RPS of a host.
type Config struct {
	MaxBacklog int
	DevWeight  int
	// RPSCPUs is the rps_cpus set of the receiving queues (empty: RPS off).
	RPSCPUs []int
	// Threads selects backlog NAPI threads (thread_backlog_napi).
	Threads bool
}

// Costs are the backlog/RPS cost items in ns (from the hw cost profile).
type Costs struct {
	Enqueue           float64 // enqueue_to_backlog per skb (lock, queue tail)
	PollCall, PollPkt float64 // process_backlog per poll and per skb dequeued
	GetRPSCPU         float64 // get_rps_cpu per skb (rps_map lookup)
	FlowDissect       float64 // skb_get_hash in software when the skb has no hash
	IPISend           float64 // net_rps_send_ipi per IPI, on the sender
	IPIHandler        float64 // the IPI's hard IRQ on the target (rps_trigger_softirq)
	Wake              float64 // waking a backlog thread (threads option)
}

// Backlog is one CPU's input_pkt_queue + process_queue and its backlog NAPI.
// Packets are values in a preallocated ring: the first proc entries are the
// process_queue, the rest the input_pkt_queue.
type Backlog struct {
	cpu  int
	set  *Set
	sn   *napi.Softnet
	NAPI *napi.NAPI
	q    []pkt.Packet
	head int
	n    int
	proc int
	segs int
	// sched is NAPI_STATE_SCHED of sd->backlog as enqueue_to_backlog sets
	// it (before the IPI arrives).
	sched bool

	// Stats.
	Enqueued     uint64
	Dropped      uint64
	IPIsReceived uint64
	MaxLen       int
}

var _ napi.Poller = (*Backlog)(nil)

// Set is the host's backlogs (one per CPU) with the RPS configuration and
// the per-CPU rps_ipi_list.
type Set struct {
	cfg   Config
	costs Costs
	b     []*Backlog
	ipi   [][]*Backlog
	sn    []*napi.Softnet
	recv  Receiver
	led   *pkt.Ledger
	rel   Releaser

	fnEnq, fnPoll, fnRPS, fnHash, fnIPI, fnIPIH, fnWake sim.FuncID
	cEnq, cPollCall, cPollPkt, cRPS, cHash              sim.Time
	cIPI, cIPIH, cWake                                  sim.Time

	// Stats.
	IPIsSent uint64
	Steered  uint64
}

func ns(x float64) sim.Time { return sim.Time(x + 0.5) }

// New returns a backlog per softnet (CPU), polled in that CPU's softirq (or
// its own thread), delivering to recv; end hooks on every softnet send the
// batched RPS IPIs. rel may be nil.
func New(cfg Config, c Costs, funcs *sim.Funcs, softnet []*napi.Softnet, recv Receiver, led *pkt.Ledger, rel Releaser) *Set {
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = NetdevMaxBacklog
	}
	if cfg.DevWeight <= 0 {
		cfg.DevWeight = DevWeight
	}
	if rel == nil {
		rel = func(uint16, int) {}
	}
	s := &Set{cfg: cfg, costs: c, sn: softnet, recv: recv, led: led, rel: rel,
		fnEnq: funcs.ID("enqueue_to_backlog"), fnPoll: funcs.ID("process_backlog"),
		fnRPS: funcs.ID("get_rps_cpu"), fnHash: funcs.ID("skb_get_hash"),
		fnIPI: funcs.ID("net_rps_send_ipi"), fnIPIH: funcs.ID("ipi_handler"), fnWake: funcs.ID("wake_up_process"),
		cEnq: ns(c.Enqueue), cPollCall: ns(c.PollCall), cPollPkt: ns(c.PollPkt), cRPS: ns(c.GetRPSCPU),
		cHash: ns(c.FlowDissect), cIPI: ns(c.IPISend), cIPIH: ns(c.IPIHandler), cWake: ns(c.Wake),
	}
	s.ipi = make([][]*Backlog, len(softnet))
	for i, sn := range softnet {
		b := &Backlog{cpu: i, set: s, sn: sn, q: make([]pkt.Packet, 2*(cfg.MaxBacklog+1))}
		b.NAPI = napi.New(napi.Config{Name: "backlog-" + strconv.Itoa(i), Weight: cfg.DevWeight}, b, sn)
		if cfg.Threads {
			b.NAPI.SetThreaded(sn.CPU())
		}
		s.b = append(s.b, b)
		s.ipi[i] = make([]*Backlog, 0, len(softnet))
		cpu := i
		sn.AddEndHook(func(w *sim.Work) { s.sendIPIs(w, cpu) })
	}
	return s
}

// Backlog returns CPU cpu's backlog.
func (s *Set) Backlog(cpu int) *Backlog { return s.b[cpu] }

// RPS reports whether RPS is configured.
func (s *Set) RPS() bool { return len(s.cfg.RPSCPUs) > 0 }

// Queued implements pkt.Queuer: wire segments in all backlogs.
func (s *Set) Queued() int {
	n := 0
	for _, b := range s.b {
		n += b.segs
	}
	return n
}

// Steer implements the stack's RPS hook: get_rps_cpu (computing the flow
// hash in software when the skb carries none, as for cpumap-built skbs)
// then enqueue_to_backlog on the chosen CPU. It reports false when RPS is
// off.
func (s *Set) Steer(w *sim.Work, cpu int, p pkt.Packet) bool {
	n := len(s.cfg.RPSCPUs)
	if n == 0 {
		return false
	}
	if p.Hash == 0 {
		w.Add(s.fnHash, s.cHash)
		p.Hash = traffic.FlowHash(p.Flow)
	}
	w.Add(s.fnRPS, s.cRPS)
	s.Steered++
	t := s.cfg.RPSCPUs[reciprocalScale(p.Hash, n)]
	s.Enqueue(w, cpu, t, p)
	return true
}

// reciprocalScale is reciprocal_scale(val, ep_ro): (val * n) >> 32.
func reciprocalScale(v uint32, n int) int { return int(uint64(v) * uint64(n) >> 32) }

// Enqueue is enqueue_to_backlog(skb, to) called on CPU from. It reports
// whether the skb was queued (false: dropped, reason backlog).
func (s *Set) Enqueue(w *sim.Work, from, to int, p pkt.Packet) bool {
	b := s.b[to]
	w.Add(s.fnEnq, s.cEnq)
	// qlen > max_backlog (lockless pre-check, then the same test under the
	// lock: the length before this enqueue, so the queue reaches max+1).
	if b.inputLen() > s.cfg.MaxBacklog || b.n == len(b.q) {
		segs := p.WireSegs()
		b.Dropped++
		b.sn.Dropped++
		s.led.Drop(pkt.Backlog, segs)
		s.rel(p.Queue, segs)
		return false
	}
	wasEmpty := b.inputLen() == 0
	b.push(p)
	if wasEmpty && !b.sched {
		b.sched = true
		s.scheduleRPS(w, from, b)
	}
	return true
}

// scheduleRPS is napi_schedule_rps(sd) on CPU from.
func (s *Set) scheduleRPS(w *sim.Work, from int, b *Backlog) {
	if b.cpu != from {
		if s.cfg.Threads {
			w.Add(s.fnWake, s.cWake)
			b.NAPI.Schedule()
			return
		}
		s.ipi[from] = append(s.ipi[from], b)
		if sn := s.sn[from]; !sn.InRxAction() {
			sn.CPU().RaiseSoftirq() // so that net_rx_action's end sends the IPI
		}
		return
	}
	b.NAPI.Schedule() // __napi_schedule_irqoff(&mysd->backlog)
}

// sendIPIs is net_rps_send_ipi for CPU cpu's rps_ipi_list.
func (s *Set) sendIPIs(w *sim.Work, cpu int) {
	l := s.ipi[cpu]
	for i, b := range l {
		w.Add(s.fnIPI, s.cIPI)
		s.IPIsSent++
		b.sn.CPU().RaiseIRQ((*ipiIRQ)(b))
		l[i] = nil
	}
	s.ipi[cpu] = l[:0]
}

// PendingIPIs returns the IPIs queued on cpu's rps_ipi_list.
func (s *Set) PendingIPIs(cpu int) int { return len(s.ipi[cpu]) }

type ipiIRQ Backlog

// Run implements sim.Task: rps_trigger_softirq schedules the backlog NAPI.
func (t *ipiIRQ) Run(now sim.Time, w *sim.Work) {
	b := (*Backlog)(t)
	w.Add(b.set.fnIPIH, b.set.cIPIH)
	b.IPIsReceived++
	b.sn.ReceivedRPS++
	b.NAPI.Schedule()
}

// Done implements sim.Task.
func (t *ipiIRQ) Done(now sim.Time) bool { return false }

func (b *Backlog) inputLen() int { return b.n - b.proc }

// Len returns input_pkt_queue and process_queue lengths.
func (b *Backlog) Len() (input, process int) { return b.inputLen(), b.proc }

func (b *Backlog) push(p pkt.Packet) {
	i := b.head + b.n
	if i >= len(b.q) {
		i -= len(b.q)
	}
	b.q[i] = p
	b.n++
	b.segs += p.WireSegs()
	b.Enqueued++
	b.MaxLen = max(b.MaxLen, b.inputLen())
}

func (b *Backlog) pop() pkt.Packet {
	p := b.q[b.head]
	b.head++
	if b.head == len(b.q) {
		b.head = 0
	}
	b.n--
	b.proc--
	b.segs -= p.WireSegs()
	return p
}

// Poll implements napi.Poller: process_backlog(napi, quota).
func (b *Backlog) Poll(n *napi.NAPI, w *sim.Work, quota int) int {
	s := b.set
	w.Add(s.fnPoll, s.cPollCall)
	if len(s.ipi[b.cpu]) > 0 {
		s.sendIPIs(w, b.cpu)
	}
	work := 0
	for {
		for b.proc > 0 {
			p := b.pop()
			w.Add(s.fnPoll, s.cPollPkt)
			s.recv.DeliverSkb(w, b.cpu, p)
			work++
			if work >= quota {
				return work
			}
		}
		if b.inputLen() == 0 {
			b.sched = false
			n.CompleteDone(w, work)
			return work
		}
		b.proc = b.n // skb_queue_splice_tail_init(input_pkt_queue, process_queue)
	}
}
