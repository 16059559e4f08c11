package stack

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
	"strconv"
)

// MaxCallsPerStep is how many recvmsg calls the application makes in one
// CPU step before the model gives the scheduler a look (a modelling
// granularity, not a kernel constant: higher classes still preempt a step
// at any time, and a step only takes what was queued when it began).
const MaxCallsPerStep = 32

// App is a thread that reads one socket in a loop (a udp_sink-like
// receiver): recvmsg (Batch = 1) or recvmmsg of Batch messages per call,
// sleeping in the socket's wait queue when it is empty.
type App struct {
	sk     *Socket
	th     *sim.Thread
	batch  int
	hist   *Histogram
	fnRecv sim.FuncID
	fnCsum sim.FuncID
	cCall  sim.Time
	cPkt   sim.Time
	cByte  float64
	busy   *busyRead // sk_busy_loop in __skb_recv_udp (nil: off)

	// Stats.
	Calls uint64
	Reads uint64
	Bytes uint64
}

var (
	_ sim.Task   = (*App)(nil)
	_ sim.Atomic = (*App)(nil)
)

// Atomic implements sim.Atomic: not switched out while busy polling owns a
// NAPI.
func (a *App) Atomic() bool { return a.busy.atomic() }

// NewApp starts a reader of sk as a thread on cpu ("app" accounting label),
// reading batch messages per call, recording latency in hist (may be nil).
func NewApp(sk *Socket, cpu *sim.CPU, batch int, hist *Histogram, funcs *sim.Funcs) *App {
	c := sk.u.st.costs
	a := &App{sk: sk, batch: max(batch, 1), hist: hist, fnRecv: funcs.ID("recvmsg"), fnCsum: funcs.ID("skb_copy_and_csum_datagram"),
		cCall: ns(c.RecvmsgCall), cPkt: ns(c.RecvmsgPkt), cByte: c.RecvmsgByte}
	a.th = cpu.NewThread("udp_sink/"+strconv.Itoa(sk.ID), "app", a)
	a.busy = sk.u.st.newBusyRead(cpu, sk.readable)
	sk.reader = a
	sk.sleeping = true
	return a
}

// Thread returns the application thread.
func (a *App) Thread() *sim.Thread { return a.th }

func (a *App) wake() { a.th.CPU().Wake(a.th) }

// Run implements sim.Task: up to MaxCallsPerStep calls, each taking up to
// Batch messages that were queued when the step began.
func (a *App) Run(now sim.Time, w *sim.Work) {
	sk := a.sk
	st := sk.u.st
	if a.busy.active() {
		a.busy.step(w)
		return
	}
	avail := sk.n
	if avail > 0 {
		a.busy.read()
	}
	for calls := 0; calls < MaxCallsPerStep && avail > 0; calls++ {
		a.Calls++
		w.Add(a.fnRecv, a.cCall)
		k := min(a.batch, avail)
		avail -= k
		for i := 0; i < k; i++ {
			p := sk.pop()
			segs := p.WireSegs()
			w.Add(a.fnRecv, a.cPkt+sim.Time(a.cByte*float64(p.Payload)+0.5))
			// udp_recvmsg of a datagram without checksum status: the
			// copy sums it (skb_copy_and_csum_datagram_msg), at the
			// checksum's rate on top of the copy.
			st.checksum(w, a.fnCsum, &p)
			a.Reads++
			a.Bytes += uint64(p.Payload)
			sk.u.Stats.InDatagrams++
			st.Led.Deliver(pkt.ToSocket, segs)
			// skb_consume_udp: deferred with DeferUDP (v6.18+).
			if st.freeSkb(w, a.th.CPU().ID, int(p.AllocCPU), p.Queue, segs, st.DeferUDP) {
				sk.u.Stats.DeferredFrees++
			}
			if a.hist != nil {
				a.hist.Record(w.Now() - p.Arrival)
			}
		}
	}
}

// Done implements sim.Task: keep reading while the socket has data, else
// sleep until sk_data_ready wakes the thread.
func (a *App) Done(now sim.Time) bool {
	if a.busy.active() || a.sk.n > 0 {
		return true
	}
	if a.busy.begin(now) {
		return true // the next recvmsg finds the queue empty: sk_busy_loop
	}
	a.sk.sleeping = true
	return false
}
