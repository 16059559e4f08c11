package stack

import (
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/sim"
)

// BusyPoll configures busy polling of the stack's sockets
// (net.core.busy_read, or SO_BUSY_POLL on each socket: sk_ll_usec).
type BusyPoll struct {
	// Read is how long a reader that finds its socket empty busy-polls
	// before it sleeps (sk_ll_usec; 0 = off).
	Read sim.Time
	// Iter is the busy loop's own cost per iteration in ns (napi.NewBusyLoop).
	Iter float64
	// Budget is SO_BUSY_POLL_BUDGET (0 = BUSY_POLL_BUDGET) and Prefer
	// SO_PREFER_BUSY_POLL (napi.BusyLoop).
	Budget int
	Prefer bool
	// NAPIOf resolves a socket's sk_napi_id, recorded from the RX queue of
	// the last skb it received (sk_mark_napi_id), to that queue's NAPI.
	// Nil NAPIs (skbs built by a cpumap kthread carry no napi_id) leave
	// the socket without busy polling.
	NAPIOf func(q uint16) *napi.NAPI
	Funcs  *sim.Funcs
}

// EnableBusyPoll turns on busy polling for the readers created afterwards.
func (s *Stack) EnableBusyPoll(bp BusyPoll) { s.busy = bp }

// busyRead is sk_busy_loop for one socket's reader (tcp_recvmsg and
// __skb_recv_udp call it when the receive queue is empty, before they
// sleep): napi_busy_loop on the socket's NAPI until the queue has data or
// sk_ll_usec has passed. The loop runs with preemption disabled while it
// owns the NAPI (the reader is sim.Atomic then), and gives the NAPI back
// (busy_poll_stop) when need_resched is set (sim.CPU.NeedResched), so that
// the switch happens; it takes it again on its next step.
type busyRead struct {
	cfg  BusyPoll
	loop *napi.BusyLoop
	cpu  *sim.CPU
	// ready reports whether the socket has data for the reader by a time.
	ready func(at sim.Time) bool
	napi  *napi.NAPI // sk_napi_id's NAPI
	on    bool       // inside sk_busy_loop
	end   sim.Time   // busy_loop_current_time() at the start + sk_ll_usec
	// spent: this wait's busy loop timed out; the reader sleeps until data
	// comes, and busy-polls again on its next read.
	spent bool

	// Stats.
	Loops    uint64 // sk_busy_loop calls
	Timeouts uint64 // loops that ended without data
}

// newBusyRead returns the busy loop of a reader on cpu whose socket has
// data by a time when ready says so, or nil when busy polling is off.
func (s *Stack) newBusyRead(cpu *sim.CPU, ready func(at sim.Time) bool) *busyRead {
	if s.busy.Read <= 0 || s.busy.NAPIOf == nil {
		return nil
	}
	sn := s.Softnet(cpu.ID)
	if sn == nil {
		return nil
	}
	b := &busyRead{cfg: s.busy, cpu: cpu, ready: ready, loop: napi.NewBusyLoop(sn, s.busy.Funcs, s.busy.Iter)}
	b.loop.Budget, b.loop.Prefer = s.busy.Budget, s.busy.Prefer
	s.busyReads = append(s.busyReads, b)
	return b
}

// BusyStats sums the busy-poll counters of the stack's readers.
func (s *Stack) BusyStats() BusyStats {
	var t BusyStats
	for _, b := range s.busyReads {
		t.Add(b.stats())
	}
	return t
}

// mark is sk_mark_napi_id for an skb from RX queue q.
func (b *busyRead) mark(q uint16) {
	if b != nil {
		b.napi = b.cfg.NAPIOf(q)
	}
}

// begin starts sk_busy_loop at now when the socket has a NAPI and this
// wait has not busy-polled yet; it reports whether the reader loops
// instead of sleeping.
func (b *busyRead) begin(now sim.Time) bool {
	if b == nil || b.napi == nil || b.spent {
		return false
	}
	b.on, b.end = true, now+b.cfg.Read
	b.Loops++
	return true
}

// active reports whether the reader is inside sk_busy_loop.
func (b *busyRead) active() bool { return b != nil && b.on }

// read records a read that found data: the next empty queue busy-polls.
func (b *busyRead) read() {
	if b != nil {
		b.spent = false
	}
}

// step is one step of the loop: an iteration, then, if it found nothing,
// the spin up to when the NAPI could next have work or the time is up.
func (b *busyRead) step(w *sim.Work) {
	if b.loop.Iterate(w, b.napi) == 0 && !b.ready(w.Now()) {
		b.loop.Spin(w, min(b.loop.Horizon(w.Now()), b.end))
	}
	switch {
	case b.ready(w.Now()):
		b.loop.Stop(w)
		b.on = false
	case w.Now() >= b.end:
		b.loop.Stop(w)
		b.on, b.spent = false, true
		b.Timeouts++
	case b.cpu.NeedResched(w.Total()):
		b.loop.Stop(w) // need_resched: give the NAPI back before the switch
	}
}

// atomic reports whether the reader must not be switched out after this
// step: it owns a NAPI (napi_busy_loop runs with preemption disabled).
func (b *busyRead) atomic() bool { return b != nil && b.loop.Owns() }

// stats returns the loop's counters (zero when busy polling is off).
func (b *busyRead) stats() BusyStats {
	if b == nil {
		return BusyStats{}
	}
	return BusyStats{Loops: b.Loops, Timeouts: b.Timeouts, Iterations: b.loop.Iterations,
		Spin: b.loop.SpinNS, Stops: b.loop.Stops, Misses: b.loop.Misses}
}

// BusyStats are busy-poll counters: sk_busy_loop calls and those that
// timed out without data, loop iterations modelled one by one, busy_poll_stop
// calls, iterations that found the NAPI scheduled elsewhere.
type BusyStats struct {
	Loops, Timeouts, Iterations, Stops, Misses uint64
	// Spin is the time spent spinning without polling (ns).
	Spin sim.Time
}

// Add sums o into s.
func (s *BusyStats) Add(o BusyStats) {
	s.Loops += o.Loops
	s.Timeouts += o.Timeouts
	s.Iterations += o.Iterations
	s.Stops += o.Stops
	s.Misses += o.Misses
	s.Spin += o.Spin
}
