package xdp

// This file models XDP_REDIRECT into a BPF_MAP_TYPE_DEVMAP entry: the
// per-CPU bulk queue of DEV_MAP_BULK_SIZE frames (bq_enqueue), its flush
// into the egress driver's ndo_xdp_xmit when full and at xdp_do_flush
// (__dev_flush -> bq_xmit_all), the egress XDP TX ring of each redirecting
// CPU, which the device's one wire drains at its line rate, and the TX
// completion that returns each frame's buffer to its RX queue.
//
// Kernel files followed: kernel/bpf/devmap.c (bq_enqueue, bq_xmit_all,
// __dev_flush), the i40e/ixgbe ndo_xdp_xmit (i40e_xdp_xmit: one descriptor
// per frame, a tail write with XDP_XMIT_FLUSH; frames that do not fit are
// returned and counted by trace_xdp_devmap_xmit as drops). Left out: the
// egress program (BPF_F_XDP_DEV_BOUND / devmap prog), broadcast
// (BPF_F_BROADCAST), and where TX completion runs: its cost is charged
// with the transmit on the redirecting CPU (the egress queue's NAPI runs
// there when its IRQ is affine to the same CPU, as in the kernel's
// one-queue-per-CPU XDP TX rings). Buffers of frames that left the wire
// are returned at the ring's next transmit, so while a ring is full its
// frames keep their RX pages and the RX queue's refill needs new ones
// (§2.4), as in the kernel.

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// DevmapBulkSize is DEV_MAP_BULK_SIZE (kernel/bpf/devmap.c).
const DevmapBulkSize = 16

// DevmapConfig describes a devmap entry's egress device.
type DevmapConfig struct {
	// Ring is the egress XDP TX ring size (descriptors).
	Ring int
	// WirePPS is the egress line rate in frames per second for the
	// frame size sent (0: unlimited).
	WirePPS float64
	// Bulk is the bulk queue size (0: DevmapBulkSize).
	Bulk int
}

// DevmapCosts are the devmap and egress-driver costs (ns).
type DevmapCosts struct {
	XmitCall float64 // bq_xmit_all + ndo_xdp_xmit per call, with the tail write
	XmitPkt  float64 // ndo_xdp_xmit per frame: dma_map + descriptor write
	Clean    float64 // TX completion per frame: descriptor clean + xdp_return_frame
}

// Devmap is one BPF_MAP_TYPE_DEVMAP entry (the egress device) as a
// Redirector, used by every RX CPU.
type Devmap struct {
	cfg DevmapConfig
	led *pkt.Ledger
	rel func(q uint16, n int)
	bq  []bulkQueue // per RX CPU
	tx  []*TxRing   // the egress XDP TX ring of each RX CPU, on one wire

	fnXmit, fnClean       sim.FuncID
	cXCall, cXPkt, cClean sim.Time

	// Stats.
	Xmits   uint64 // bq_xmit_all calls
	Sent    uint64 // frames put on the egress ring
	Dropped uint64 // frames that found the ring full
}

type bulkQueue struct{ frames []pkt.Packet }

// NewDevmap returns a devmap entry for ncpus redirecting CPUs; rel returns
// the buffers of freed frames to their RX queue.
func NewDevmap(cfg DevmapConfig, c DevmapCosts, ncpus int, led *pkt.Ledger, rel func(q uint16, n int), funcs *sim.Funcs) *Devmap {
	if cfg.Bulk <= 0 {
		cfg.Bulk = DevmapBulkSize
	}
	m := &Devmap{cfg: cfg, led: led, rel: rel,
		bq:     make([]bulkQueue, ncpus),
		fnXmit: funcs.ID("ndo_xdp_xmit"), fnClean: funcs.ID("xdp_tx_clean"),
		cXCall: sim.Time(c.XmitCall), cXPkt: sim.Time(c.XmitPkt), cClean: sim.Time(c.Clean)}
	wire := NewWire(cfg.WirePPS)
	for range ncpus {
		m.tx = append(m.tx, NewTxRing(cfg.Ring, wire))
	}
	return m
}

// Enqueue is bq_enqueue: the frame joins rxCPU's bulk queue, which is sent
// when it holds Bulk frames.
func (m *Devmap) Enqueue(w *sim.Work, rxCPU, _ int, p pkt.Packet) {
	b := &m.bq[rxCPU]
	b.frames = append(b.frames, p)
	if len(b.frames) >= m.cfg.Bulk {
		m.xmit(w, rxCPU)
	}
}

// Flush is __dev_flush at xdp_do_flush: send what the bulk queue holds.
func (m *Devmap) Flush(w *sim.Work, rxCPU int) {
	if len(m.bq[rxCPU].frames) > 0 {
		m.xmit(w, rxCPU)
	}
}

// xmit is bq_xmit_all -> ndo_xdp_xmit: each frame takes a descriptor of the
// CPU's egress ring if one is free at the step's clock, else it is
// returned at once and counted as a devmap_xmit drop. A sent frame leaves
// the wire at the line rate; its buffer goes back to its RX queue at the
// first transmit after that (the TX clean of the next poll).
func (m *Devmap) xmit(w *sim.Work, rxCPU int) {
	b := &m.bq[rxCPU]
	r := m.tx[rxCPU]
	now := w.Now()
	r.Complete(now, m.rel)
	m.Xmits++
	w.Add(m.fnXmit, m.cXCall)
	for _, p := range b.frames {
		if !r.Post(now, p.Queue) {
			m.Dropped++
			m.led.Drop(pkt.DevmapXmit, 1)
			m.rel(p.Queue, 1)
			continue
		}
		w.Add(m.fnXmit, m.cXPkt)
		w.Add(m.fnClean, m.cClean)
		m.Sent++
		m.led.Deliver(pkt.Redirected, 1)
	}
	b.frames = b.frames[:0]
	r.Arm()
}

// SetClean lets the egress rings clean themselves when no transmit comes
// (TxRing.SetClean).
func (m *Devmap) SetClean(eng *sim.Engine) {
	for _, r := range m.tx {
		r.SetClean(eng, m.rel)
	}
}

// Queued is the frames waiting in bulk queues (frames put on an egress
// ring are counted as redirected when they are sent).
func (m *Devmap) Queued() int {
	n := 0
	for i := range m.bq {
		n += len(m.bq[i].frames)
	}
	return n
}

var _ Redirector = (*Devmap)(nil)
