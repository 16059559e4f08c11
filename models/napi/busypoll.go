package napi

import "github.com/rxsim/rxsim/sim"

// SpinQuantum is the longest single charge of a spin (a modelling
// granularity, not a kernel constant): the kernel's loop checks
// need_resched and the socket every iteration; the model sees a wake-up
// on its CPU, or data another CPU queued, at the end of the quantum.
const SpinQuantum = 2 * sim.Microsecond

// MissSpin is how many iterations the model spins in one charge while the
// NAPI is held elsewhere, or owned with a poller that cannot tell when it
// will have work (veth, fed by a sender thread): a modelling granularity.
// The kernel looks every iteration, so the release of the NAPI, a new
// entry, or data another CPU queued is seen up to MissSpin-1 iterations
// late.
const MissSpin = 4

// BusyPollBudget is BUSY_POLL_BUDGET (include/net/busy_poll.h): the budget
// of each napi->poll a busy poller makes (kernel-rx-path.md §5.7).
const BusyPollBudget = 8

// Horizoner is implemented by a Poller that can tell, at now, the earliest
// time a poll could find work (the RX ring's next arrival, or a lower bound
// of it). A busy poller that owns the NAPI spins until then without
// polling each iteration; the iterations it skips would have found
// nothing.
type Horizoner interface {
	NextWork(now sim.Time) sim.Time
}

// BusyLoop is one thread's napi_busy_loop (net/core/dev.c, v4.12+ with
// NAPI_STATE_IN_BUSY_POLL): a reader that found its socket empty
// (sk_busy_loop from tcp_recvmsg or __skb_recv_udp, with net.core.busy_read
// or SO_BUSY_POLL set) takes the socket's NAPI when it is idle (cmpxchg of
// SCHED | IN_BUSY_POLL; a NAPI scheduled by its IRQ is left to its softirq
// and the poller only spins), polls it with BUSY_POLL_BUDGET in its own
// thread with bottom halves disabled, delivers the gro_normal list after
// each poll, and stops (busy_poll_stop) when the socket has data, the time
// is up or the CPU is wanted. While it owns the NAPI, napi_complete_done
// returns false, so the driver leaves its interrupt masked; IRQs that fire
// meanwhile only set MISSED.
//
// With Prefer (SO_PREFER_BUSY_POLL, v5.11+) and the device's
// napi_defer_hard_irqs and gro_flush_timeout, the application keeps the
// device IRQ masked as long as it comes back to poll within the timeout.
// Not modelled: irq_suspend_timeout (v6.13), epoll busy polling, and
// several pollers contending for one NAPI beyond the cmpxchg failing.
type BusyLoop struct {
	sn   *Softnet // the poller's CPU
	fn   sim.FuncID
	iter sim.Time
	n    *NAPI // the NAPI owned, nil when none
	// Budget is the budget of each poll (SO_BUSY_POLL_BUDGET; 0 =
	// BUSY_POLL_BUDGET). Prefer is SO_PREFER_BUSY_POLL: a NAPI found
	// scheduled is marked so that its softirq gives it up after a full
	// poll, and busy_poll_stop leaves the device IRQ masked with the NAPI
	// watchdog armed for gro_flush_timeout when napi_defer_hard_irqs is
	// set, instead of re-enabling it (IRQ mitigation by the application).
	Budget int
	Prefer bool

	// Stats.
	Loops      uint64 // napi_busy_loop calls (a reader that found its socket empty)
	Iterations uint64 // loop iterations modelled one by one
	SpinNS     sim.Time
	Stops      uint64 // busy_poll_stop calls
	Misses     uint64 // iterations that found the NAPI scheduled elsewhere
}

// NewBusyLoop returns the busy loop of a thread on sn's CPU; iter is the
// loop's own cost per iteration in ns (local_bh_disable/enable, the state
// check, netpoll_poll_lock, sk_busy_loop_end's queue and clock check,
// cpu_relax), charged to napi_busy_loop.
func NewBusyLoop(sn *Softnet, funcs *sim.Funcs, iter float64) *BusyLoop {
	return &BusyLoop{sn: sn, fn: funcs.ID("napi_busy_loop"), iter: max(sim.Time(iter), 1)}
}

// Owns reports whether the loop holds a NAPI.
func (b *BusyLoop) Owns() bool { return b.n != nil }

// Iterate is one iteration of the loop on n: take n if it is idle, poll it
// once if owned; it returns the packets the poll took.
func (b *BusyLoop) Iterate(w *sim.Work, n *NAPI) int {
	b.Iterations++
	w.Add(b.fn, b.iter)
	if b.n != nil && b.n != n {
		b.Stop(w)
	}
	if b.n == nil {
		if n.sched || n.inBusy {
			b.Misses++
			if b.Prefer {
				n.preferBusy = true
			}
			return 0
		}
		n.sched, n.inBusy = true, true
		n.setPoller(b.sn)
		b.n = n
	}
	work := n.poller.Poll(n, w, b.budget())
	n.BusyPolls++
	n.BusyPackets += uint64(work)
	if n.GRO != nil {
		n.GRO.NormalList(w)
	}
	return work
}

func (b *BusyLoop) budget() int { return BusyBudget(b.Budget) }

// BusyBudget is the budget of a busy poll for SO_BUSY_POLL_BUDGET n: n,
// or BUSY_POLL_BUDGET when n is 0.
func BusyBudget(n int) int {
	if n > 0 {
		return n
	}
	return BusyPollBudget
}

// Spin charges the loop's iterations up to until (at least one iteration,
// at most SpinQuantum), as
// napi_busy_loop spending them: polling an owned NAPI whose poller cannot
// have work before until, or checking the socket. It returns the step
// clock after the spin.
func (b *BusyLoop) Spin(w *sim.Work, until sim.Time) sim.Time {
	d := max(min(until-w.Now(), SpinQuantum), b.iter)
	b.SpinNS += d
	w.Add(b.fn, d)
	return w.Now()
}

// Horizon is when an iteration could next find work: for an owned NAPI
// whose poller is a Horizoner, the poller's next work; otherwise MissSpin
// iterations on (a NAPI held elsewhere may be freed, and a poller that
// cannot tell may be fed, any time).
func (b *BusyLoop) Horizon(now sim.Time) sim.Time {
	if b.n != nil {
		if h, ok := b.n.poller.(Horizoner); ok {
			return h.NextWork(now)
		}
	}
	return now + MissSpin*b.iter
}

// Stop is busy_poll_stop: clear MISSED and IN_BUSY_POLL and poll once more
// with the budget, whose napi_complete_done (work below the budget)
// completes the NAPI and re-enables the device IRQ; a full poll instead
// puts the NAPI on this CPU's poll list (__napi_schedule), where this
// CPU's softirq polls it until it completes. With Prefer and the deferral
// knobs set, the watchdog is armed first: napi_complete_done then keeps
// the IRQ masked, and a full poll only flushes GRO's old packets and the
// gro_normal list and clears SCHED (__busy_poll_stop with skip_schedule).
// Nothing when no NAPI is owned.
func (b *BusyLoop) Stop(w *sim.Work) {
	n := b.n
	if n == nil {
		return
	}
	b.n = nil
	b.Stops++
	n.missed, n.inBusy = false, false
	skip := false
	if b.Prefer {
		n.deferCount = n.cfg.DeferHardIRQs
		if n.deferCount > 0 && n.cfg.GROFlushTimeout > 0 {
			n.armTimer(w.Now()+n.cfg.GROFlushTimeout, b.sn)
			skip = true
		}
	}
	budget := b.budget()
	rc := n.poller.Poll(n, w, budget)
	n.BusyPolls++
	n.BusyPackets += uint64(rc)
	if rc < budget {
		return
	}
	if skip {
		if n.GRO != nil {
			n.GRO.FlushOld(w, n.softnet.jiffyStart(w.Now()), n.softnet.hz < 1000) // napi_gro_flush(napi, HZ >= 1000) + gro_normal_list
		}
		n.release()
		return
	}
	if n.GRO != nil {
		n.GRO.NormalList(w)
	}
	n.Schedules++
	if n.thread != nil {
		n.goHome()
		n.thread.CPU().Wake(n.thread)
		return
	}
	n.softnet = b.sn // pollSN and the poll CPU stay the poller's
	b.sn.add(n)
}
