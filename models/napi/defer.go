package napi

import "github.com/rxsim/rxsim/sim"

// Deferred skb frees (net/core/skbuff.c skb_attempt_defer_free, v5.19+,
// "net: generalize skb freeing deferral to per-cpu lists"): a reader that
// consumes an skb allocated on another CPU does not free it; it pushes the
// skb on that CPU's sd->defer_list, which the allocating CPU's
// net_rx_action frees at the top of every loop iteration
// (skb_defer_free_flush; the threaded NAPI loop does the same). The list
// holds at most net.core.skb_defer_max skbs (the reader frees the rest
// itself); the push that finds it half full sends an IPI that raises
// NET_RX there (kick_defer_list_purge), so that a CPU with no RX traffic
// of its own frees them too. kernel-rx-path.md §5.1, §5.2, §11.

// DeferCosts are the deferral's costs in ns (from the hw cost profile).
type DeferCosts struct {
	// Push is skb_attempt_defer_free on the freeing CPU, per skb.
	Push float64
	// FreeSkb and FreeSeg are the free by skb_defer_free_flush of an skb
	// (the list walk, napi_consume_skb, the head) and of each of its
	// segment buffers (skb_release_data's frag and page release: an skb
	// carries the buffers of the segments coalesced into it).
	FreeSkb, FreeSeg float64
	// Flush is what skb_defer_free_flush costs per skb beyond that free:
	// taking the list from sd->defer_list and the cache misses on skbs the
	// pushing CPU wrote last (charged as skb_defer_free_flush).
	Flush float64
	// IPISend and IPIHandler are the kick: smp_call_function_single_async
	// on the freeing CPU and the IPI's hard IRQ on the allocating one.
	IPISend, IPIHandler float64
}

// deferred is one skb on a defer list.
type deferred struct {
	at    sim.Time // the pushing step's clock
	queue uint16   // the RX queue its buffers return to
	segs  int32    // buffers (wire segments)
}

// deferList is the defer state of a softnet.
type deferList struct {
	max                  int
	release              func(queue uint16, n int)
	list                 []deferred
	ipiScheduled         bool
	fnPush, fnFree       sim.FuncID
	fnFlush              sim.FuncID
	cFlush               sim.Time
	fnIPI, fnIPIH        sim.FuncID
	cPush                sim.Time
	freeSkb, freeSeg     float64
	cIPISend, cIPIHandle sim.Time
}

// DeferStats count the deferral on the allocating CPU.
type DeferStats struct {
	Deferred uint64 // skbs pushed by other CPUs
	Freed    uint64 // skbs freed by skb_defer_free_flush
	Kicks    uint64 // IPIs sent to this CPU (kick_defer_list_purge)
}

// EnableDefer turns on skb_attempt_defer_free towards this CPU with
// net.core.skb_defer_max = max (0 leaves it off, as before v5.19); release
// returns a freed skb's buffers to their RX queue.
func (s *Softnet) EnableDefer(max int, c DeferCosts, funcs *sim.Funcs, release func(queue uint16, n int)) {
	if max <= 0 {
		s.defers = nil
		return
	}
	s.defers = &deferList{max: max, release: release,
		fnPush: funcs.ID("skb_attempt_defer_free"), fnFree: funcs.ID("skb_release_data"),
		fnFlush: funcs.ID("skb_defer_free_flush"), cFlush: sim.Time(c.Flush + 0.5),
		fnIPI: funcs.ID("net_rps_send_ipi"), fnIPIH: funcs.ID("ipi_handler"),
		cPush: sim.Time(c.Push + 0.5), freeSkb: c.FreeSkb, freeSeg: c.FreeSeg,
		cIPISend: sim.Time(c.IPISend + 0.5), cIPIHandle: sim.Time(c.IPIHandler + 0.5),
	}
}

// DeferFree is skb_attempt_defer_free, run in w's step on another CPU for
// an skb this CPU allocated, holding segs buffers of RX queue queue. It
// reports false when the skb is not deferred (deferral off, or the list
// holds skb_defer_max skbs): the caller frees it.
func (s *Softnet) DeferFree(w *sim.Work, queue uint16, segs int) bool {
	d := s.defers
	if d == nil || len(d.list) >= d.max {
		return false
	}
	w.Add(d.fnPush, d.cPush)
	// "Send an IPI every time queue reaches half capacity."
	kick := len(d.list) == d.max>>1
	d.list = append(d.list, deferred{at: w.Now(), queue: queue, segs: int32(segs)})
	s.Defer.Deferred++
	if kick && !d.ipiScheduled {
		d.ipiScheduled = true
		w.Add(d.fnIPI, d.cIPISend)
		s.Defer.Kicks++
		s.cpu.RaiseIRQ((*deferIPI)(s))
	}
	return true
}

// Deferred returns the skbs waiting on this CPU's defer list.
func (s *Softnet) Deferred() int {
	if s.defers == nil {
		return 0
	}
	return len(s.defers.list)
}

// DeferredBuffers returns the RX buffers the skbs on the defer list hold.
func (s *Softnet) DeferredBuffers() int {
	n := 0
	if s.defers != nil {
		for _, e := range s.defers.list {
			n += int(e.segs)
		}
	}
	return n
}

// flushDeferred is skb_defer_free_flush: free the skbs pushed by w's clock.
func (s *Softnet) flushDeferred(w *sim.Work) {
	d := s.defers
	if d == nil || len(d.list) == 0 {
		return
	}
	now, k := w.Now(), 0
	for _, e := range d.list {
		if e.at > now {
			d.list[k] = e // pushed by a step whose clock is ahead of this one
			k++
			continue
		}
		w.Add(d.fnFree, sim.Time(d.freeSkb+d.freeSeg*float64(e.segs)+0.5))
		if d.cFlush > 0 {
			w.Add(d.fnFlush, d.cFlush)
		}
		s.Defer.Freed++
		if d.release != nil {
			d.release(e.queue, int(e.segs))
		}
	}
	clear(d.list[k:])
	d.list = d.list[:k]
}

// deferIPI is the kick's IPI on the allocating CPU (trigger_rx_softirq).
type deferIPI Softnet

// Run implements sim.Task: raise NET_RX, whose net_rx_action flushes.
func (t *deferIPI) Run(now sim.Time, w *sim.Work) {
	s := (*Softnet)(t)
	w.Add(s.defers.fnIPIH, s.defers.cIPIHandle)
	s.defers.ipiScheduled = false
	s.cpu.RaiseSoftirq()
}

// Done implements sim.Task.
func (t *deferIPI) Done(now sim.Time) bool { return false }
