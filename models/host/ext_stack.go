package host

import (
	"github.com/rxsim/rxsim/models/backlog"
	"github.com/rxsim/rxsim/models/cpumap"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/stack"
)

// StackExt is the stack, backlogs, sockets and applications as a host
// Extension: it reports the UDP counters, the socket latency histogram and
// a "stack" section in Result.Extra.
type StackExt struct {
	h       *Host
	Stack   *stack.Stack
	UDP     *stack.UDP
	Backlog *backlog.Set
	Drivers []*stack.DriverRx
	Apps    []*stack.App
	// Hist is the latency from wire arrival to the application's read.
	Hist stack.Histogram
	snap stackCounters
}

var (
	_ Extension = (*StackExt)(nil)
	_ Extension = (*CpumapExt)(nil)
)

type stackCounters struct {
	udp                         stack.UDPStats
	calls, lists, skbs, steered uint64
	ipis, blEnq, blDrop         uint64
	appCalls, appReads          uint64
}

func (x *StackExt) counters() stackCounters {
	c := stackCounters{udp: x.UDP.Stats, calls: x.Stack.Stats.Calls, lists: x.Stack.Stats.Lists,
		skbs: x.Stack.Stats.Skbs, steered: x.Stack.Stats.Steered, ipis: x.Backlog.IPIsSent}
	for i := range x.h.CPUs {
		b := x.Backlog.Backlog(i)
		c.blEnq += b.Enqueued
		c.blDrop += b.Dropped
	}
	for _, a := range x.Apps {
		c.appCalls += a.Calls
		c.appReads += a.Reads
	}
	return c
}

// Snapshot implements Extension.
func (x *StackExt) Snapshot() {
	x.snap = x.counters()
	x.Hist.Reset()
}

// Queued implements Extension: GRO nodes, backlogs and socket queues.
func (x *StackExt) Queued() int {
	n := x.Backlog.Queued()
	for _, d := range x.Drivers {
		n += d.Queued()
	}
	for _, sk := range x.UDP.Sockets() {
		n += sk.Queued()
	}
	return n
}

// Report implements Extension.
func (x *StackExt) Report(r *Result, secs float64) {
	now, old := x.counters(), x.snap
	rate := func(a, b uint64) float64 { return float64(a-b) / secs }
	if u := now.udp; u.InDatagrams+u.NoPorts+u.RcvbufErrors > 0 || len(x.UDP.Sockets()) > 0 {
		r.UDP = &UDPResult{
			InDatagrams:   rate(now.udp.InDatagrams, old.udp.InDatagrams),
			NoPorts:       rate(now.udp.NoPorts, old.udp.NoPorts),
			RcvbufErrors:  rate(now.udp.RcvbufErrors, old.udp.RcvbufErrors),
			DeferredFrees: rate(now.udp.DeferredFrees, old.udp.DeferredFrees),
		}
	}
	if x.Hist.Count() > 0 {
		r.LatencyUS = latencyOf(&x.Hist)
	}
	if now.skbs == 0 && now.blEnq == 0 {
		return
	}
	if r.Extra == nil {
		r.Extra = map[string]any{}
	}
	st := map[string]any{
		"netif_receive_skb_calls_per_sec": rate(now.calls, old.calls),
		"netif_receive_skb_lists_per_sec": rate(now.lists, old.lists),
		"skbs_per_sec":                    rate(now.skbs, old.skbs),
		"rps_steered_pps":                 rate(now.steered, old.steered),
		"rps_ipis_per_sec":                rate(now.ipis, old.ipis),
		"backlog_enqueue_pps":             rate(now.blEnq, old.blEnq),
		"backlog_drop_pps":                rate(now.blDrop, old.blDrop),
	}
	if len(x.Apps) > 0 {
		st["app_reads_per_sec"] = rate(now.appReads, old.appReads)
		st["app_calls_per_sec"] = rate(now.appCalls, old.appCalls)
	}
	r.Extra["stack"] = st
}

// CpumapExt is the cpumap as a host Extension: xdp-bench's cpumap counters
// in Result.Cpumap.
type CpumapExt struct {
	h    *Host
	Map  *cpumap.Map
	snap []cpumap.EntryStats
}

func (c *CpumapExt) counters() []cpumap.EntryStats {
	var out []cpumap.EntryStats
	for _, e := range c.Map.Entries() {
		out = append(out, e.Stats)
	}
	return out
}

// Snapshot implements Extension.
func (c *CpumapExt) Snapshot() { c.snap = c.counters() }

// Queued implements Extension.
func (c *CpumapExt) Queued() int { return c.Map.Queued() }

// Report implements Extension: enqueue pkt/s and drop/s, bulk-avg (frames per
// xdp_cpumap_enqueue event), kthread pkt/s and sched/s, xdp_stats, the remote
// CPUs' time per frame, and which side limits.
func (c *CpumapExt) Report(r *Result, secs float64) {
	now := c.counters()
	var d cpumap.EntryStats
	res := &CpumapResult{Delivery: c.Map.Config().Delivery.String()}
	var remoteBusy float64
	for i, e := range c.Map.Entries() {
		a, b := now[i], c.snap[i]
		d.Enqueued += a.Enqueued - b.Enqueued
		d.EnqueueDrops += a.EnqueueDrops - b.EnqueueDrops
		d.EnqueueEvents += a.EnqueueEvents - b.EnqueueEvents
		d.Processed += a.Processed - b.Processed
		d.Iterations += a.Iterations - b.Iterations
		d.Sched += a.Sched - b.Sched
		d.Pass += a.Pass - b.Pass
		d.Drop += a.Drop - b.Drop
		d.Redirect += a.Redirect - b.Redirect
		res.CPUs = append(res.CPUs, e.CPU)
		if e.CPU < len(r.CPU) {
			remoteBusy += r.CPU[e.CPU].Busy
			res.RemoteBusy = max(res.RemoteBusy, r.CPU[e.CPU].Busy)
		}
	}
	f := func(v uint64) float64 { return float64(v) / secs }
	res.EnqueuePPS, res.DropPPS = f(d.Enqueued), f(d.EnqueueDrops)
	if d.EnqueueEvents > 0 {
		res.BulkAvg = float64(d.Enqueued) / float64(d.EnqueueEvents)
	}
	res.KthreadPPS, res.KthreadSchedPerSec = f(d.Processed), f(d.Sched)
	res.XDPPassPPS, res.XDPDropPPS, res.XDPRedirectPPS = f(d.Pass), f(d.Drop), f(d.Redirect)
	if d.Iterations > 0 {
		res.KthreadBatchAvg = float64(d.Processed) / float64(d.Iterations)
	}
	// Frames the remote CPUs work on: dequeued from the rings, or in
	// backlog mode handed to their backlogs.
	remotePkts := d.Processed
	if c.Map.Config().Delivery == cpumap.Backlog {
		remotePkts = d.Enqueued
	}
	if remotePkts > 0 {
		res.RemoteNSPerPkt = remoteBusy * secs * 1e9 / float64(remotePkts)
	}
	for _, q := range c.h.Queues {
		cpu := q.Hook.RxCPU() // the poll's CPU: the IRQ CPU, or the NAPI thread's
		if cpu < len(r.CPU) {
			res.RxBusy = max(res.RxBusy, r.CPU[cpu].Busy)
		}
	}
	if r.RxPPS > 0 {
		res.RxNSPerPkt = res.RxBusy * 1e9 / r.RxPPS
	}
	res.Limit = limit(res, r, c.h.Spec.Traffic.TCP())
	r.Cpumap = res
}

// saturated is the busy fraction above which a CPU counts as saturated.
const saturated = 0.97

// limit names the side that limits delivery: "remote" when a remote CPU is
// saturated and its ring overflows (enqueue drops) while its cost per
// packet is the larger one; "rx" when the RX CPU is saturated and is the
// slower side; "qsize" when the ring overflows although the remote CPU is
// not saturated (it sleeps between xdp_do_flush wake-ups and the ring is
// too small to cover them); "none" otherwise.
func limit(c *CpumapResult, r *Result, tcp bool) string {
	// A saturated remote CPU limits when its queue overflows, or, for TCP,
	// without drops: the window keeps the ring and the backlog from
	// overflowing and the stream slows to what that CPU delivers.
	remote := c.RemoteBusy >= saturated && (c.DropPPS > 0 || r.Drops[pkt.Backlog.String()] > 0 || tcp)
	rx := c.RxBusy >= saturated
	switch {
	case remote && (!rx || c.RemoteNSPerPkt > c.RxNSPerPkt):
		return "remote"
	case rx:
		return "rx"
	case remote:
		return "remote"
	case c.DropPPS > 0:
		return "qsize"
	}
	return "none"
}
