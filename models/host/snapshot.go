package host

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// snapshot holds the counters at the end of the warm-up.
type snapshot struct {
	led     pkt.Ledger
	irqs    uint64
	polls   uint64
	pkts    uint64
	rx      []uint64 // per CPU, packets cleaned by queues polled there
	softnet []softnetCounters
}

type softnetCounters struct {
	processed, dropped, squeeze, rps uint64
}

func (h *Host) counters() snapshot {
	s := snapshot{led: h.Ledger, rx: make([]uint64, len(h.CPUs))}
	for _, q := range h.Queues {
		s.irqs += q.IRQs
		s.polls += q.NAPI.Polls
		s.pkts += q.Packets
	}
	for i, sn := range h.Softnet {
		s.softnet = append(s.softnet, softnetCounters{sn.Processed, sn.Dropped, sn.TimeSqueeze, sn.ReceivedRPS})
		_ = i
	}
	for _, q := range h.Queues {
		c := q.NAPI.Softnet().CPU().ID
		if t := q.NAPI.Thread(); t != nil {
			c = t.CPU().ID
		}
		s.rx[c] += q.Packets
	}
	return s
}

func (h *Host) takeSnapshot() { h.snap = h.counters() }

func (h *Host) result(d sim.Time) *Result {
	secs := d.Seconds()
	now := h.counters()
	old := h.snap
	r := &Result{
		Scenario: h.Spec.Name, Seed: h.Streams.Seed(), SimSeconds: secs, OfferedPPS: h.OfferedPPS,
		Drops: map[string]float64{},
	}
	rate := func(a, b uint64) float64 { return float64(a-b) / secs }
	r.RxPPS = rate(now.pkts, old.pkts)
	for i := pkt.Reason(0); i < pkt.NumReasons; i++ {
		if v := now.led.Dropped[i] - old.led.Dropped[i]; v > 0 {
			r.Drops[i.String()] = float64(v) / secs
		}
	}
	r.DeliveredPPS = rate(now.led.Delivered[pkt.ToSocket], old.led.Delivered[pkt.ToSocket])
	r.XDPTxPPS = rate(now.led.Delivered[pkt.XDPTx], old.led.Delivered[pkt.XDPTx])
	r.RedirectPPS = rate(now.led.Delivered[pkt.Redirected], old.led.Delivered[pkt.Redirected])
	r.IRQsPerSec = rate(now.irqs, old.irqs)
	r.PollsPerSec = rate(now.polls, old.polls)
	if now.polls > old.polls {
		r.PktsPerPoll = float64(now.pkts-old.pkts) / float64(now.polls-old.polls)
	}
	for i := range h.CPUs {
		sq := now.softnet[i].squeeze - old.softnet[i].squeeze
		r.TimeSqueezeTotal += sq
		r.Softnet = append(r.Softnet, Softnet{CPU: i,
			Processed: now.softnet[i].processed - old.softnet[i].processed,
			Dropped:   now.softnet[i].dropped - old.softnet[i].dropped, TimeSqueeze: sq,
			ReceivedRPS: now.softnet[i].rps - old.softnet[i].rps})
		r.PerCPURx = append(r.PerCPURx, rate(now.rx[i], old.rx[i]))
	}
	r.TimeSqueeze = float64(r.TimeSqueezeTotal) / secs
	r.CPU = h.cpuReport(d)
	r.Funcs = h.funcReport(d)
	for _, e := range h.Ext {
		e.Report(r, secs)
	}
	r.Ledger = h.ledgerReport()
	return r
}

func (h *Host) cpuReport(d sim.Time) []CPU {
	var out []CPU
	labels := h.Acct.Labels()
	for i := range h.CPUs {
		c := CPU{ID: i, Classes: map[string]float64{}}
		for li, l := range labels {
			if li < len(h.Acct.Busy[i]) && h.Acct.Busy[i][li] > 0 {
				f := float64(h.Acct.Busy[i][li]) / float64(d)
				c.Classes[l] = f
				c.Busy += f
			}
		}
		c.Idle = max(0, 1-c.Busy)
		out = append(out, c)
	}
	return out
}

func (h *Host) funcReport(d sim.Time) []FuncTime {
	var out []FuncTime
	for cpu := range h.CPUs {
		for id, ns := range h.Acct.ByFunc[cpu] {
			if ns > 0 {
				out = append(out, FuncTime{CPU: cpu, Func: h.Funcs.Name(sim.FuncID(id)), NS: int64(ns), Frac: float64(ns) / float64(d)})
			}
		}
	}
	return out
}

func (h *Host) ledgerReport() LedgerReport {
	l := LedgerReport{Offered: h.Ledger.Offered, Delivered: map[string]uint64{}, Dropped: map[string]uint64{}}
	for i := pkt.Reason(0); i < pkt.NumReasons; i++ {
		if v := h.Ledger.Dropped[i]; v > 0 {
			l.Dropped[i.String()] = v
		}
	}
	for i := pkt.Delivery(0); i < pkt.NumDeliveries; i++ {
		if v := h.Ledger.Delivered[i]; v > 0 {
			l.Delivered[i.String()] = v
		}
	}
	l.Queued = h.queued()
	l.Imbalance = h.Ledger.Check(l.Queued)
	return l
}
