package host

import (
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/sim"
)

// tcpSnap holds the TCP layer's counters at the end of the warm-up.
type tcpSnap struct {
	tcp    stack.TCPStats
	stream traffic.TCPStreamStats
	rr     traffic.TCPRRStats
	gro    gro.Stats
	defers napi.DeferStats // summed over the CPUs
}

func (x *TCPExt) counters() tcpSnap {
	s := tcpSnap{tcp: x.TCP.Stats, gro: x.groStats()}
	for _, sn := range x.h.Softnet {
		s.defers.Deferred += sn.Defer.Deferred
		s.defers.Freed += sn.Defer.Freed
		s.defers.Kicks += sn.Defer.Kicks
	}
	if x.Stream != nil {
		s.stream = x.Stream.Stats
	}
	if x.RR != nil {
		s.rr = x.RR.Stats
	}
	return s
}

// groStats sums the counters of the GRO nodes.
func (x *TCPExt) groStats() gro.Stats {
	var t gro.Stats
	for _, e := range x.GRO {
		s := e.Stats()
		t.SegsIn += s.SegsIn
		for i := range s.Results {
			t.Results[i] += s.Results[i]
		}
		for i := range s.Flushes {
			t.Flushes[i] += s.Flushes[i]
		}
		t.FlushedSegs += s.FlushedSegs
		t.Lists += s.Lists
		t.SkbsDelivered += s.SkbsDelivered
		t.SegsDelivered += s.SegsDelivered
	}
	return t
}

// Snapshot implements Extension.
func (x *TCPExt) Snapshot() { x.snap = x.counters() }

// Queued implements Extension: TCP holds no undelivered segments (the
// sockets' contents were delivered at enqueue; the GRO nodes belong to the
// stack layer, which counts them).
func (x *TCPExt) Queued() int { return x.TCP.Queued() }

// Report implements Extension: the netperf figures, the TCP detail and the
// GRO section.
func (x *TCPExt) Report(r *Result, secs float64) {
	now, old := x.counters(), x.snap
	rate := func(a, b uint64) float64 { return float64(a-b) / secs }
	t, o := now.tcp, old.tcp
	cpu := 0.0
	for _, c := range r.CPU {
		cpu += c.Busy
	}
	r.CPUTotalPercent = 100 * cpu
	acks := rate(t.Acks(), o.Acks())
	r.AcksPerSec = &acks
	tr := &TCPResult{Kind: x.h.Spec.Traffic.Kind,
		SegmentsPerSec: rate(t.Segs, o.Segs), SkbsPerSec: rate(t.Skbs, o.Skbs),
		AcksSoftirq: rate(t.AcksSoftirq, o.AcksSoftirq), AcksBacklog: rate(t.AcksBacklog, o.AcksBacklog),
		AcksApp:    rate(t.AcksApp, o.AcksApp),
		AcksDelack: rate(t.AcksDelack, o.AcksDelack), DupAcks: rate(t.DupAcks, o.DupAcks),
		ReadsPerSec: rate(t.Reads, o.Reads), WakeupsPerSec: rate(t.Wakeups, o.Wakeups),
		WokenWakesPerSec: rate(t.WakeQueued, o.WakeQueued),
		BackloggedPerSec: rate(t.Backlogged, o.Backlogged), BacklogCoalescePerSec: rate(t.BacklogCoalesced, o.BacklogCoalesced),
		RcvCoalescePerSec: rate(t.RcvCoalesced, o.RcvCoalesced), CsumSkbsPerSec: rate(t.CsumSkbs, o.CsumSkbs),
		OfoQueued: rate(t.OfoQueued, o.OfoQueued), DupDrops: rate(t.DupDrops, o.DupDrops),
		RcvbufDrops:         rate(t.RcvbufDrops, o.RcvbufDrops),
		DeferredFreesPerSec: rate(now.defers.Deferred, old.defers.Deferred),
		DeferKicksPerSec:    rate(now.defers.Kicks, old.defers.Kicks),
	}
	if tr.SkbsPerSec > 0 {
		tr.SegsPerSkb = tr.SegmentsPerSec / tr.SkbsPerSec
	}
	x.reportRcvbuf(tr)
	if acks := acks + rate(t.Responses, o.Responses); acks > 0 {
		tr.SegsPerAck = tr.SegmentsPerSec / acks
	}
	cpuUS := cpu * 1e6 // CPU-us per second of simulated time
	if x.Stream != nil {
		r.GoodputGbps = rate(t.BytesRead, o.BytesRead) * 8 / 1e9
		tr.Retransmits = rate(now.stream.Retransmits, old.stream.Retransmits)
		tr.Recoveries = rate(now.stream.Recoveries, old.stream.Recoveries)
		tr.RTOs = now.stream.RTOs - old.stream.RTOs
		if kb := rate(t.BytesRead, o.BytesRead) / 1024; kb > 0 {
			tr.ServiceDemand, tr.ServiceDemandUnit = cpuUS/kb, "us/KB"
		}
	}
	if x.RR != nil {
		r.TransactionsPerSec = rate(now.rr.Transactions, old.rr.Transactions)
		if x.Hist.Count() > 0 {
			r.LatencyUS = latencyOf(&x.Hist)
		}
		if r.TransactionsPerSec > 0 {
			tr.ServiceDemand, tr.ServiceDemandUnit = cpuUS/r.TransactionsPerSec, "us/Tr"
		}
	}
	r.TCP = tr
	if now.gro.SegsIn > old.gro.SegsIn {
		r.GRO = groReport(now.gro, old.gro, secs)
	}
}

// groReport is the gro section over the interval.
func groReport(now, old gro.Stats, secs float64) *GROResult {
	var d gro.Stats
	for i := range d.Flushes {
		d.Flushes[i] = now.Flushes[i] - old.Flushes[i]
	}
	d.FlushedSegs = now.FlushedSegs - old.FlushedSegs
	d.Lists = now.Lists - old.Lists
	d.SkbsDelivered = now.SkbsDelivered - old.SkbsDelivered
	d.SegsDelivered = now.SegsDelivered - old.SegsDelivered
	g := &GROResult{MergedPerSuperSkb: d.MergedPerSuperSkb(), SegsPerSkb: d.SegsPerSkb(), Flushes: d.FlushesByName(),
		ListsPerSec:  float64(d.Lists) / secs,
		NormalPerSec: float64(now.Results[gro.GRONormal]-old.Results[gro.GRONormal]) / secs}
	if d.Lists > 0 {
		g.SkbsPerList = float64(d.SkbsDelivered) / float64(d.Lists)
	}
	return g
}

// reportRcvbuf fills the sockets' receive-buffer state: the mean sk_rcvbuf
// and receiver RTT estimate at the end.
func (x *TCPExt) reportRcvbuf(tr *TCPResult) {
	socks := x.TCP.Sockets()
	if len(socks) == 0 {
		return
	}
	var buf, rtt float64
	for _, sk := range socks {
		buf += float64(sk.Rcvbuf())
		rtt += float64(sk.RcvRTT()) / float64(sim.Microsecond)
	}
	n := float64(len(socks))
	tr.RcvbufBytes = int(buf/n + 0.5)
	tr.RcvRTTus = rtt / n
	tr.Autotuned = x.TCP.Autotuned()
}
