package cpumap

import (
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

var (
	_ gro.Deliverer = (*Entry)(nil)
	_ napi.Poller   = (*Entry)(nil)
	_ sim.Task      = (*kthread)(nil)
)

// kthread is cpu_map_kthread_run: one CPU step per loop iteration.
type kthread Entry

// Run implements sim.Task: one iteration. An empty ring means schedule()
// (Done puts the thread to sleep); otherwise dequeue up to CPUMAP_BATCH
// frames and process them inside local_bh_disable.
func (k *kthread) Run(now sim.Time, w *sim.Work) {
	e := (*Entry)(k)
	if e.Ring.Empty() {
		return
	}
	m := e.m
	// sched: the thread slept or was switched out since the last
	// iteration (schedule() on an empty ring, or cond_resched()).
	sched := e.Thread.Scheds != e.lastScheds || !e.ran
	e.lastScheds, e.ran = e.Thread.Scheds, true
	n := e.Ring.ConsumeBatched(e.frames)
	w.Add(m.fnKthread, m.cKCall+sim.Time(n)*m.cKPkt)
	e.Stats.Iterations++
	if sched {
		e.Stats.Sched++
	}
	kept := e.process(w, e.frames[:n])
	switch m.cfg.Delivery {
	case Single:
		for i := range kept {
			m.recv.ReceiveCore(w, e.CPU, kept[i])
		}
	case List:
		m.recv.ReceiveList(w, e.CPU, kept)
	case GRO:
		for i := range kept {
			e.GRO.Receive(w, kept[i])
		}
		e.packets += n
		if empty := e.Ring.Empty(); e.packets >= GROFlushPackets || empty {
			// cpu_map_gro_flush: old-only while frames wait, all when empty.
			if empty {
				e.GRO.FlushAll(w, gro.ReasonCpumapEmpty)
			} else {
				e.GRO.FlushOld(w, w.Now(), m.cfg.Jiffy, gro.ReasonCpumap64)
			}
			e.GRO.NormalList(w)
			e.packets = 0
		}
	}
}

// Done implements sim.Task: loop while the ring has frames (checked at the
// end of the step, like set_current_state + the re-check before schedule()),
// else sleep until xdp_do_flush wakes the thread.
func (k *kthread) Done(now sim.Time) bool { return !(*Entry)(k).Ring.Empty() }

// process runs the cpumap program on frames (cpu_map_bpf_prog_run), then
// allocates and builds the skbs of the frames it passed
// (napi_skb_cache_get_bulk / kmem_cache_alloc_bulk and
// __xdp_build_skb_from_frame: no checksum status, no hash). It returns the
// skbs, in place at the front of frames.
func (e *Entry) process(w *sim.Work, frames []pkt.Packet) []pkt.Packet {
	m := e.m
	e.Stats.Processed += uint64(len(frames))
	kept := len(frames)
	if m.cfg.Remote != RemoteDisabled {
		kept = 0
		redirected := false
		for i := range frames {
			p := frames[i]
			w.Add(m.fnProg, m.cProg)
			switch m.cfg.Remote {
			case RemotePass:
				e.Stats.Pass++
				frames[kept] = p
				kept++
			case RemoteDrop:
				e.Stats.Drop++
				w.Add(m.fnRet, m.cRet)
				m.led.Drop(pkt.CpumapProgDrop, p.WireSegs())
				m.rel(p.Queue, p.WireSegs())
			case RemoteRedirect:
				e.Stats.Redirect++
				redirected = true
				w.Add(m.fnRedir, m.cRedir)
				m.led.Deliver(pkt.Redirected, p.WireSegs())
				m.rel(p.Queue, p.WireSegs())
			}
		}
		if redirected {
			w.Add(m.fnFlush, m.cFlush)
		}
	}
	if kept == 0 {
		return frames[:0]
	}
	w.Add(m.fnAlloc, m.cAllocCall+sim.Time(kept)*m.cAllocPkt)
	for i := 0; i < kept; i++ {
		w.Add(m.fnBuild, m.cBuild)
		frames[i].CsumOK = false
		frames[i].Hash = 0
		frames[i].AllocCPU = uint16(e.CPU)
	}
	return frames[:kept]
}

// DeliverList implements gro.Deliverer: the GRO node's gro_normal list goes
// to netif_receive_skb_list on the entry's CPU.
func (e *Entry) DeliverList(w *sim.Work, skbs []pkt.Packet) { e.m.recv.ReceiveList(w, e.CPU, skbs) }

// Poll implements napi.Poller for napi mode (cpu_map_napi_poll): dequeue in
// batches up to the budget, napi_gro_receive each skb; napi_complete_done
// (a full GRO flush) when the ring is empty before the budget is used.
func (e *Entry) Poll(n *napi.NAPI, w *sim.Work, budget int) int {
	m := e.m
	th := n.Thread()
	sched := th != nil && (th.Scheds != e.lastScheds || !e.ran)
	if th != nil {
		e.lastScheds, e.ran = th.Scheds, true
	}
	work := 0
	for work < budget && !e.Ring.Empty() {
		c := e.Ring.ConsumeBatched(e.frames[:min(len(e.frames), budget-work)])
		w.Add(m.fnKthread, m.cKCall+sim.Time(c)*m.cKPkt)
		e.Stats.Iterations++
		if sched {
			e.Stats.Sched++
			sched = false
		}
		kept := e.process(w, e.frames[:c])
		for i := range kept {
			e.GRO.Receive(w, kept[i])
		}
		work += c
	}
	if work < budget {
		n.CompleteDone(w, work)
	}
	return work
}
