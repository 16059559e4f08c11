package nic

import (
	"math"
	"math/rand/v2"

	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// Costs are the driver's costs (ns, from the hw cost profile).
type Costs struct {
	IRQ                  float64 // irq_handler per interrupt
	RxCall, RxPkt        float64 // driver_rx per poll and per descriptor
	RefillCall, RefillPk float64 // driver_refill per batch (tail MMIO) and per descriptor
	PageAlloc            float64 // page_alloc when page reuse fails
}

// QueueConfig configures one RX queue and its MSI-X vector.
type QueueConfig struct {
	Index  int
	Driver string // ixgbe, i40e
	// RefillBatch is the refill threshold (ixgbe 16; i40e ring/2).
	RefillBatch int
	ITR         *ITR
	// IRQJitter is the CV of the interrupt delivery delay (0 = exact).
	IRQJitter float64
	// IRQRand draws the jitter (stream "irq-jitter/qN"); nil = no jitter.
	IRQRand *rand.Rand
}

// Queue is one RX queue: ring, vector, NAPI and XDP hook.
type Queue struct {
	cfg                           QueueConfig
	Ring                          *RxRing
	NAPI                          *napi.NAPI
	Hook                          *xdp.Hook
	cpu                           *sim.CPU
	eng                           *sim.Engine
	costs                         Costs
	fnIRQ, fnRx, fnRefill, fnPage sim.FuncID
	cIRQ, cRxCall, cRxPkt         sim.Time
	cRefCall, cRefPkt, cPage      sim.Time

	// PushLead is the least time between a closed-loop source deciding to
	// send and the frame's arrival (its wire's propagation delay; Never for
	// open-loop sources, whose feed already knows every arrival): NextWork
	// looks no further ahead than that.
	PushLead sim.Time

	irqEnabled bool
	lastIRQ    sim.Time
	irqGen     int64
	irqAt      sim.Time

	// Inflight counts buffers handed away (PASS/REDIRECT/TX) and not yet
	// freed; reuse fails while more than a ring's worth are out (§2.4).
	Inflight int

	// Stats.
	IRQs       uint64
	Polls      uint64
	Packets    uint64
	Bytes      uint64
	PageAllocs uint64
}

// NewQueue returns an RX queue with its IRQ on cpu.
func NewQueue(cfg QueueConfig, ring *RxRing, hook *xdp.Hook, cpu *sim.CPU, c Costs, funcs *sim.Funcs) *Queue {
	q := &Queue{cfg: cfg, Ring: ring, Hook: hook, cpu: cpu, eng: cpu.Engine(), costs: c,
		fnIRQ: funcs.ID("irq_handler"), fnRx: funcs.ID("driver_rx"),
		fnRefill: funcs.ID("driver_refill"), fnPage: funcs.ID("page_alloc"),
		cIRQ: sim.Time(c.IRQ), cRxCall: sim.Time(c.RxCall), cRxPkt: sim.Time(c.RxPkt),
		cRefCall: sim.Time(c.RefillCall), cRefPkt: sim.Time(c.RefillPk), cPage: sim.Time(c.PageAlloc),
		lastIRQ: -1 << 40, PushLead: sim.Never,
	}
	if q.cfg.RefillBatch <= 0 {
		q.cfg.RefillBatch = ring.Size() / 2
	}
	return q
}

// Start enables the vector's interrupt (device up).
func (q *Queue) Start() { q.enableIRQ(q.eng.Now()) }

// Kick tells the queue that its feed gained an earlier arrival (closed-loop
// sources); an enabled interrupt is re-armed for it.
func (q *Queue) Kick() {
	if q.irqEnabled {
		q.armIRQ(q.eng.Now())
	}
}

func (q *Queue) enableIRQ(now sim.Time) {
	q.irqEnabled = true
	q.armIRQ(now)
}

// armIRQ schedules the interrupt: it fires when a packet is pending and at
// least the ITR interval has passed since the previous interrupt (§4).
func (q *Queue) armIRQ(now sim.Time) {
	a := q.Ring.NextArrival()
	if a == sim.Never {
		q.irqAt = sim.Never
		return
	}
	itr := sim.Time(q.cfg.ITR.IntervalNS())
	at := max(a, now, q.lastIRQ+itr) + q.irqDelay(itr)
	q.irqGen++
	q.irqAt = at
	q.eng.Schedule(at, (*irqTimer)(q), q.irqGen)
}

// irqDelay is the seeded interrupt/timer jitter (noise.irq_jitter): the
// interrupt is delivered d = IRQJitter · itr · |Z| later, Z ~ N(0, 1), so
// the delay scales with the moderation interval (EITR) and its spread is
// IRQJitter times it. Without moderation (itr 0) or jitter it is 0, and
// the figures stay exact.
func (q *Queue) irqDelay(itr sim.Time) sim.Time {
	if q.cfg.IRQJitter <= 0 || q.cfg.IRQRand == nil || itr <= 0 {
		return 0
	}
	return sim.Time(math.Abs(q.cfg.IRQRand.NormFloat64()) * q.cfg.IRQJitter * float64(itr))
}

type irqTimer Queue

// Fire implements sim.Handler: the MSI-X interrupt is delivered.
func (t *irqTimer) Fire(now sim.Time, gen int64) {
	q := (*Queue)(t)
	if gen != q.irqGen || !q.irqEnabled {
		return
	}
	q.Ring.Advance(now)
	if q.Ring.Filled() == 0 {
		q.armIRQ(now) // the packet was dropped (ring full); wait for the next
		return
	}
	q.irqEnabled = false // auto-masked (EIAM) / disabled until INTENA
	q.lastIRQ = now
	q.IRQs++
	q.cpu.RaiseIRQ((*irqHandler)(q))
}

type irqHandler Queue

// Run implements sim.Task: ixgbe_msix_clean_rings / i40e_msix_clean_rings.
func (h *irqHandler) Run(now sim.Time, w *sim.Work) {
	q := (*Queue)(h)
	w.Add(q.fnIRQ, q.cIRQ)
	q.NAPI.Schedule()
}

// Done implements sim.Task.
func (h *irqHandler) Done(now sim.Time) bool { return false }

// Poll implements napi.Poller: ixgbe_poll/i40e_napi_poll with
// *_clean_rx_irq for the queue's one RX ring.
func (q *Queue) Poll(n *napi.NAPI, w *sim.Work, budget int) int {
	q.Polls++
	w.Add(q.fnRx, q.cRxCall)
	done := 0
	bytes := 0
	for done < budget {
		if q.Ring.Cleaned() >= q.cfg.RefillBatch {
			q.refill(w)
		}
		// Pulling arrivals can wait until the filled descriptors are used
		// up: until a refill, posted descriptors only decrease, so the
		// ring-full outcome of each arrival does not depend on when it is
		// pulled (refill pulls first).
		if q.Ring.Filled() == 0 {
			q.Ring.Advance(w.Now())
		}
		p, ok := q.Ring.Clean()
		if !ok {
			break // descriptor not written back: size == 0
		}
		w.Add(q.fnRx, q.cRxPkt)
		done++
		bytes += int(p.Len)
		// Count the buffer as handed away before the hand-off: a receiver
		// may free it (Release) synchronously, before Rx returns.
		q.Inflight++
		if !q.Hook.Rx(w, p) {
			q.Inflight-- // recycled in place (DROP) or finished at once
		}
	}
	q.Hook.Finalize(w)
	q.Packets += uint64(done)
	q.Bytes += uint64(bytes)
	q.cfg.ITR.Count(done, bytes)
	if done >= budget {
		return budget
	}
	if n.CompleteDone(w, done) {
		q.cfg.ITR.Update(n.Softnet().Jiffies(w.Now()))
		q.enableIRQ(w.Now())
	}
	return min(done, budget-1)
}

// refill is *_alloc_rx_buffers: re-post cleaned descriptors with one tail
// write; a buffer whose page is still in flight elsewhere needs a new page.
func (q *Queue) refill(w *sim.Work) {
	q.Ring.Advance(w.Now())
	n := q.Ring.Refill()
	w.Add(q.fnRefill, q.cRefCall+sim.Time(n)*q.cRefPkt)
	if over := q.Inflight - q.Ring.Size(); over > 0 {
		k := min(n, over)
		q.PageAllocs += uint64(k)
		w.Add(q.fnPage, sim.Time(k)*q.cPage)
	}
}

// Release records that n buffers handed away by this queue were freed.
func (q *Queue) Release(n int) {
	q.Inflight -= n
	if q.Inflight < 0 {
		q.Inflight = 0
	}
}

var _ napi.Horizoner = (*Queue)(nil)

// NextWork implements napi.Horizoner for a busy poller: a poll finds work
// once a descriptor is filled; no frame can arrive before the ring's next
// known arrival, nor, from a closed-loop source, before PushLead from now.
func (q *Queue) NextWork(now sim.Time) sim.Time {
	if q.Ring.Cleaned() >= q.cfg.RefillBatch {
		return now // the poll has a refill to do
	}
	a := q.Ring.NextArrival()
	if q.PushLead < sim.Never-now {
		a = min(a, now+q.PushLead)
	}
	return a
}

// IRQEnabled reports whether the vector is unmasked.
func (q *Queue) IRQEnabled() bool { return q.irqEnabled }
