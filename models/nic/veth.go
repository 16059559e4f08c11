package nic

// The veth device (drivers/net/veth.c, kernel-rx-path.md §2b): the
// receiving end's ptr_ring xdp_ring of VETH_RING_SIZE entries, filled by the
// peer's veth_xmit (socket skbs) or veth_xdp_xmit (redirected xdp_frames)
// in the sender's context, and veth_poll, the NAPI poll that consumes it.
// There is no interrupt: __veth_xdp_flush schedules the NAPI on the
// transmitting CPU's softnet (rx_notify_masked suppresses repeats), so the
// poll runs in NET_RX softirq on the sending CPU, or in the NAPI kthread when
// threaded NAPI is on. Left out: multiple RX queues (the model has one; the
// validation harness uses one), XDP_TX back to the peer (counted as xdp_tx
// deliveries without the peer's side), GRO of veth skbs without XDP, the
// page_pool refill, frames longer than the MTU.

import (
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// PtrRingBatch is the ptr_ring consumer's zeroing batch, r->batch =
// 2 * SMP_CACHE_BYTES / sizeof(void *) = 16 on x86-64 (include/linux/
// ptr_ring.h, kernel-rx-path.md §6.3). With fewer entries queued the
// producer and the consumer work in the same cache lines and the remote
// transmit surcharge applies to every entry; with more, the producer
// writes lines the consumer zeroed a batch at a time, one transfer per
// line of ptrsPerLine entries.
const (
	PtrRingBatch = 16
	ptrsPerLine  = 8 // SMP_CACHE_BYTES / sizeof(void *)
)

// veth constants (drivers/net/veth.c, §2b).
const (
	VethRingSize   = 256 // VETH_RING_SIZE: entries of the per-RX-queue ptr_ring
	VethXDPBatch   = 16  // VETH_XDP_BATCH: XDP_PASS frames built into skbs per bulk
	VethNAPIWeight = 64  // netif_napi_add default weight (NAPI_POLL_WEIGHT)
)

// VethCosts are the veth driver's costs in ns (from the hw cost profile).
type VethCosts struct {
	// XmitPkt is veth_xmit per socket skb in the sender's context
	// (__dev_forward_skb, ptr_ring_produce under the producer lock,
	// __veth_xdp_flush).
	XmitPkt float64
	// XmitRemote is added per skb when veth_poll runs on another CPU and
	// the ring is nearly empty: the producer writes the cache line the
	// consumer is reading, so it bounces for every entry (see
	// PtrRingBatch for a fuller ring).
	XmitRemote float64
	// XdpXmitCall and XdpXmitPkt are veth_xdp_xmit per bulk and per frame.
	XdpXmitCall, XdpXmitPkt float64
	// PollCall and PollPkt are veth_poll per call and per ring entry
	// (__ptr_ring_consume and the entry dispatch).
	PollCall, PollPkt float64
	// RemotePkt is added per entry when the consumer runs on another CPU
	// than the producer (the entry and its data are in the producer's cache).
	RemotePkt float64
	// ConvertPkt and ConvertByte are veth_convert_skb_to_xdp_buff: the copy of
	// a socket skb into page_pool pages before native XDP runs on it.
	ConvertPkt, ConvertByte float64
	// SkbFree is kfree_skb of a socket skb that XDP dropped or redirected.
	SkbFree float64
	// BulkSkbCall and BulkSkbPkt are veth_xdp_rcv_bulk_skb per bulk of up to
	// 16 XDP_PASS frames and per skb built (__xdp_build_skb_from_frame).
	BulkSkbCall, BulkSkbPkt float64
	// Wake is what the sender pays to wake a sleeping threaded-NAPI kthread
	// (napi_schedule -> wake_up_process on another CPU: try_to_wake_up + IPI).
	Wake float64
}

// vethEntry is one ptr_ring slot: an skb from veth_xmit or a tagged
// xdp_frame pointer from veth_xdp_xmit.
type vethEntry struct {
	p      pkt.Packet
	frame  bool
	remote bool // produced on another CPU than the consumer
}

// VethRing is the ptr_ring xdp_ring: a fixed array of entries with one
// producer index and one consumer index; produce fails when it is full.
type VethRing struct {
	slots []vethEntry
	head  int // next to consume
	n     int
}

// NewVethRing returns a ring of size entries.
func NewVethRing(size int) *VethRing { return &VethRing{slots: make([]vethEntry, size)} }

// Size returns the ring's capacity.
func (r *VethRing) Size() int { return len(r.slots) }

// Queued implements pkt.Queuer.
func (r *VethRing) Queued() int { return r.n }

// produce is __ptr_ring_produce: false (-ENOSPC) when full.
func (r *VethRing) produce(e vethEntry) bool {
	if r.n == len(r.slots) {
		return false
	}
	i := r.head + r.n
	if i >= len(r.slots) {
		i -= len(r.slots)
	}
	r.slots[i] = e
	r.n++
	return true
}

// consume is __ptr_ring_consume.
func (r *VethRing) consume() (vethEntry, bool) {
	if r.n == 0 {
		return vethEntry{}, false
	}
	e := r.slots[r.head]
	r.head++
	if r.head == len(r.slots) {
		r.head = 0
	}
	r.n--
	return e, true
}

// VethRQ is the receiving end's RX queue (struct veth_rq): ring, NAPI, the
// XDP hook, and rx_notify_masked.
type VethRQ struct {
	Ring *VethRing
	NAPI *napi.NAPI
	Hook *xdp.Hook
	Led  *pkt.Ledger
	// Stack receives XDP_PASS skbs and skbs when no program is attached
	// (napi_gro_receive and what follows); nil delivers them as "stack".
	Stack xdp.Stack

	c    VethCosts
	bulk vethBulk

	fnXmit, fnXdpXmit, fnPoll, fnConvert, fnFree, fnBulk, fnWake        sim.FuncID
	cXmit, cXmitRemote, cXdpCall, cXdpPkt, cPollCall, cPollPkt, cRemote sim.Time
	cConvPkt, cFree, cBulkCall, cBulkPkt, cWake                         sim.Time

	notifyMasked bool
	owedWakes    int

	// Stats.
	Polls     uint64
	Packets   uint64
	Bytes     uint64
	RingFull  uint64
	Frames    uint64
	Skbs      uint64
	Wakes     uint64
	XmitCalls uint64
	Converted uint64
	BulkCalls uint64
}

// NewVethRQ returns the RX queue with a ring of size entries; hook runs the
// receiving end's XDP program (Hook.Prog nil: no program).
func NewVethRQ(size int, hook *xdp.Hook, led *pkt.Ledger, c VethCosts, funcs *sim.Funcs) *VethRQ {
	rq := &VethRQ{Ring: NewVethRing(size), Hook: hook, Led: led, c: c,
		fnXmit: funcs.ID("veth_xmit"), fnXdpXmit: funcs.ID("veth_xdp_xmit"), fnPoll: funcs.ID("veth_poll"),
		fnConvert: funcs.ID("veth_convert_skb_to_xdp_buff"), fnFree: funcs.ID("kfree_skb"),
		fnBulk: funcs.ID("veth_xdp_rcv_bulk_skb"), fnWake: funcs.ID("wake_up_process"),
		cXmit: sim.Time(c.XmitPkt), cXmitRemote: sim.Time(c.XmitRemote), cXdpCall: sim.Time(c.XdpXmitCall), cXdpPkt: sim.Time(c.XdpXmitPkt),
		cPollCall: sim.Time(c.PollCall), cPollPkt: sim.Time(c.PollPkt), cRemote: sim.Time(c.RemotePkt),
		cConvPkt: sim.Time(c.ConvertPkt), cFree: sim.Time(c.SkbFree),
		cBulkCall: sim.Time(c.BulkSkbCall), cBulkPkt: sim.Time(c.BulkSkbPkt), cWake: sim.Time(c.Wake),
	}
	rq.bulk.rq = rq
	hook.Stack = &rq.bulk
	return rq
}

// Queued implements pkt.Queuer: entries in the ring.
func (rq *VethRQ) Queued() int { return rq.Ring.Queued() + rq.bulk.n }

// ConsumerCPU returns the CPU that runs veth_poll: the NAPI kthread's, the
// softnet's (the transmitting CPU), or a busy-polling reader's.
func (rq *VethRQ) ConsumerCPU() int { return rq.NAPI.PollCPU() }

// ChargeXmit charges, in the step of the sender on cpu, the transmit of n packets
// (veth_xmit per skb, or one veth_xdp_xmit bulk of n frames) and the
// kthread wake-ups the previous transmits caused.
func (rq *VethRQ) ChargeXmit(w *sim.Work, cpu, n int, frames bool) {
	switch {
	case frames:
		w.Add(rq.fnXdpXmit, rq.cXdpCall+sim.Time(n)*rq.cXdpPkt)
	case cpu != rq.ConsumerCPU():
		remote := rq.cXmitRemote
		if rq.Ring.Queued() >= PtrRingBatch {
			remote /= ptrsPerLine
		}
		w.Add(rq.fnXmit, sim.Time(n)*(rq.cXmit+remote))
	default:
		w.Add(rq.fnXmit, sim.Time(n)*rq.cXmit)
	}
	if rq.owedWakes > 0 {
		w.Add(rq.fnWake, sim.Time(rq.owedWakes)*rq.cWake)
		rq.owedWakes = 0
	}
}

// Xmit puts ps into the ring at now on behalf of the sender on cpu (skbs
// from veth_xmit, or frames from veth_xdp_xmit): entries that find the ring
// full are dropped as veth_ring_full (the peer's tx_dropped); if anything
// was queued, __veth_xdp_flush schedules the NAPI. It returns the number
// queued.
func (rq *VethRQ) Xmit(now sim.Time, cpu int, ps []pkt.Packet, frames bool) int {
	rq.XmitCalls++
	remote := cpu != rq.ConsumerCPU()
	n := 0
	for i := range ps {
		if !rq.Ring.produce(vethEntry{p: ps[i], frame: frames, remote: remote}) {
			rq.RingFull++
			rq.Led.Drop(pkt.VethRingFull, 1)
			continue
		}
		n++
	}
	if n > 0 {
		rq.xdpFlush()
	}
	return n
}

// xdpFlush is __veth_xdp_flush: unless rx_notify_masked, napi_schedule_prep
// and __napi_schedule (on the caller's CPU, or waking the NAPI kthread).
func (rq *VethRQ) xdpFlush() {
	if rq.notifyMasked {
		return
	}
	rq.schedule(nil)
}

// schedule is napi_schedule_prep + __napi_schedule on sn's CPU: nil for
// __veth_xdp_flush on the transmitting CPU (the NAPI's own softnet in the
// model), the polling CPU's for veth_poll's re-check of the ring.
func (rq *VethRQ) schedule(sn *napi.Softnet) {
	n := rq.NAPI
	if !n.Scheduled() {
		rq.notifyMasked = true
		if t := n.Thread(); t != nil && !t.Runnable() {
			rq.Wakes++
			rq.owedWakes++
		}
	}
	// already SCHED: napi_schedule_prep sets MISSED
	if sn == nil {
		n.Schedule()
	} else {
		n.ScheduleOn(sn)
	}
}

// Poll implements napi.Poller: veth_poll -> veth_xdp_rcv for up to budget
// entries, the XDP_PASS bulk, xdp_do_flush, then napi_complete_done with
// rx_notify_masked cleared and the ring re-checked.
func (rq *VethRQ) Poll(n *napi.NAPI, w *sim.Work, budget int) int {
	here := n.PollSoftnet()
	rq.Polls++
	w.Add(rq.fnPoll, rq.cPollCall)
	done, bytes := 0, 0
	for done < budget {
		e, ok := rq.Ring.consume()
		if !ok {
			break
		}
		done++
		bytes += int(e.p.Len)
		c := rq.cPollPkt
		if e.remote {
			c += rq.cRemote
		}
		w.Add(rq.fnPoll, c)
		if e.frame {
			rq.rcvFrame(w, e.p)
		} else {
			rq.rcvSkb(w, e.p)
		}
	}
	rq.bulk.flush(w)
	rq.Hook.Finalize(w)
	rq.Packets += uint64(done)
	rq.Bytes += uint64(bytes)
	if done == budget {
		return done
	}
	// What the sender did while this poll ran happens before
	// napi_complete_done: a transmit then found the NAPI scheduled (with
	// rx_notify_masked clear, as under a busy poller, it set MISSED, and
	// napi_complete_done reschedules the NAPI on this CPU) or left its
	// entry for the re-check. A step boundary, when the CPU yields, makes
	// the sender's steps before it visible.
	w.Yield()
	if n.CompleteDone(w, done) {
		rq.notifyMasked = false
		if rq.Ring.Queued() > 0 {
			rq.schedule(here) // on the CPU that polled
		}
	}
	return done
}

// rcvFrame is veth_xdp_rcv_one: the program runs on the frame in place;
// PASS frames go to the bulk skb build.
func (rq *VethRQ) rcvFrame(w *sim.Work, p pkt.Packet) {
	rq.Frames++
	if rq.Hook.Prog == nil {
		rq.bulk.add(w, p)
		return
	}
	rq.bulk.frame = true
	rq.Hook.Rx(w, p)
}

// rcvSkb is veth_xdp_rcv_skb: with a program, the skb is copied into an
// xdp_buff first (socket skbs lack the 256 B headroom) and freed unless
// XDP_PASS keeps it; without one it goes to napi_gro_receive.
func (rq *VethRQ) rcvSkb(w *sim.Work, p pkt.Packet) {
	rq.Skbs++
	if rq.Hook.Prog == nil {
		rq.toStack(w, p)
		return
	}
	rq.Converted++
	w.Add(rq.fnConvert, rq.cConvPkt+sim.Time(rq.c.ConvertByte*float64(p.Len)))
	passed := rq.Hook.Passed
	rq.bulk.frame = false
	rq.Hook.Rx(w, p)
	if rq.Hook.Passed == passed {
		w.Add(rq.fnFree, rq.cFree)
	}
}

func (rq *VethRQ) toStack(w *sim.Work, p pkt.Packet) {
	if rq.Stack == nil {
		rq.Led.Deliver(pkt.ToStack, 1)
		return
	}
	rq.Stack.Receive(w, p)
}

// vethBulk is the XDP_PASS path of veth_xdp_rcv: frames are collected and
// built into skbs VETH_XDP_BATCH at a time (veth_xdp_rcv_bulk_skb); skbs
// that passed go to the stack at once. It is the Hook's Stack.
type vethBulk struct {
	rq    *VethRQ
	frame bool // the entry being handled is an xdp_frame
	buf   [VethXDPBatch]pkt.Packet
	n     int
}

var _ xdp.Stack = (*vethBulk)(nil)
var _ napi.Poller = (*VethRQ)(nil)
var _ pkt.Queuer = (*VethRQ)(nil)

// Receive implements xdp.Stack.
func (b *vethBulk) Receive(w *sim.Work, p pkt.Packet) {
	if !b.frame {
		b.rq.toStack(w, p)
		return
	}
	b.add(w, p)
}

func (b *vethBulk) add(w *sim.Work, p pkt.Packet) {
	b.buf[b.n] = p
	b.n++
	if b.n == VethXDPBatch {
		b.flush(w)
	}
}

// flush builds and delivers the collected frames.
func (b *vethBulk) flush(w *sim.Work) {
	if b.n == 0 {
		return
	}
	rq := b.rq
	rq.BulkCalls++
	w.Add(rq.fnBulk, rq.cBulkCall+sim.Time(b.n)*rq.cBulkPkt)
	n := b.n
	b.n = 0
	for i := 0; i < n; i++ {
		rq.toStack(w, b.buf[i])
	}
}
