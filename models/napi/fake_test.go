package napi_test

import (
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// pollRec is one call of a fake driver's poll.
type pollRec struct {
	dev       string
	at        sim.Time // step-local clock at the poll's entry
	work      int
	rxActions uint64 // net_rx_action invocations on the softnet so far
	complete  bool   // napi_complete_done's return (only when work < budget)
}

// fakeDev is a driver whose poll takes min(pending, budget) packets at
// perPkt ns each and calls napi_complete_done when it did less than its
// budget, as drivers do. Packets are offered to led when the device is
// made and delivered (as "stack") when polled.
type fakeDev struct {
	name    string
	pending int
	perPkt  sim.Time
	fn      sim.FuncID
	led     *pkt.Ledger
	sn      *napi.Softnet
	log     *[]pollRec
	// onPoll runs at the start of poll number k (1-based) of this device.
	onPoll func(k int, n *napi.NAPI)
	polls  int
}

func newDev(name string, pending int, perPkt sim.Time, funcs *sim.Funcs, led *pkt.Ledger, sn *napi.Softnet, log *[]pollRec) *fakeDev {
	led.Offer(pending)
	return &fakeDev{name: name, pending: pending, perPkt: perPkt, fn: funcs.ID("fake_rx"), led: led, sn: sn, log: log}
}

var _ napi.Poller = (*fakeDev)(nil)

// Poll implements napi.Poller.
func (d *fakeDev) Poll(n *napi.NAPI, w *sim.Work, budget int) int {
	d.polls++
	if d.onPoll != nil {
		d.onPoll(d.polls, n)
	}
	r := pollRec{dev: d.name, at: w.Now(), rxActions: d.sn.RxActions}
	k := min(d.pending, budget)
	w.Add(d.fn, sim.Time(k)*d.perPkt)
	d.pending -= k
	d.led.Deliver(pkt.ToStack, k)
	r.work = k
	if k < budget {
		r.complete = n.CompleteDone(w, k)
	}
	*d.log = append(*d.log, r)
	return k
}

// Queued implements pkt.Queuer: packets not yet polled.
func (d *fakeDev) Queued() int { return d.pending }

// at schedules f on eng at t.
func at(eng *sim.Engine, t sim.Time, f func()) {
	eng.Schedule(t, sim.HandlerFunc(func(sim.Time, int64) { f() }), 0)
}

// irq raises, at t, a zero-cost hard IRQ on cpu that runs f: work f raises
// (napi_schedule of several NAPIs) is dispatched at IRQ exit, all at once.
func irq(eng *sim.Engine, cpu *sim.CPU, t sim.Time, f func()) {
	at(eng, t, func() { cpu.RaiseIRQ(irqTask(f)) })
}

type irqTask func()

func (f irqTask) Run(sim.Time, *sim.Work) { f() }
func (f irqTask) Done(sim.Time) bool      { return false }
