package host

import (
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/sim"
)

// BusyPollExt reports the readers' busy polling (Result.BusyPoll) when
// stack.busy_read is set.
type BusyPollExt struct {
	h     *Host
	st    *stack.Stack
	napis []*napi.NAPI
	snap  busyCounters
}

var _ Extension = (*BusyPollExt)(nil)

type busyCounters struct {
	readers     stack.BusyStats
	polls, pkts uint64
}

func (x *BusyPollExt) counters() busyCounters {
	c := busyCounters{readers: x.st.BusyStats()}
	for _, n := range x.napis {
		c.polls += n.BusyPolls
		c.pkts += n.BusyPackets
	}
	return c
}

// Snapshot implements Extension.
func (x *BusyPollExt) Snapshot() { x.snap = x.counters() }

// Queued implements Extension: the busy loop holds no packets of its own.
func (x *BusyPollExt) Queued() int { return 0 }

// Report implements Extension.
func (x *BusyPollExt) Report(r *Result, secs float64) {
	now, old := x.counters(), x.snap
	rate := func(a, b uint64) float64 { return float64(a-b) / secs }
	r.BusyPoll = &BusyPoll{
		ReadUS:         x.h.Spec.Stack.BusyRead,
		Budget:         napi.BusyBudget(x.h.Spec.Stack.BusyPollBudget),
		Prefer:         x.h.Spec.Stack.PreferBusyPoll,
		LoopsPerSec:    rate(now.readers.Loops, old.readers.Loops),
		TimeoutsPerSec: rate(now.readers.Timeouts, old.readers.Timeouts),
		PollsPerSec:    rate(now.polls, old.polls),
		RxPPS:          rate(now.pkts, old.pkts),
		SpinPercent:    100 * float64(now.readers.Spin-old.readers.Spin) / (secs * float64(sim.Second)),
	}
}
