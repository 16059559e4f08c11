package sweep

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rxsim/rxsim/models/host"
)

// Metrics are one run's figures by name (see FromResult for the names).
// Only finite values are kept.
type Metrics map[string]float64

// Names returns the metric names of ms, sorted.
func Names(ms ...Metrics) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// FromResult flattens a run's Result into Metrics:
//
//	offered_pps rx_pps delivered_pps xdp_tx_pps redirect_pps   rates (pkt/s)
//	drop_pps, drop.<reason>_pps                                 drops: all reasons, and per reason
//	loss_pps, loss_pct                                          drops other than the program's XDP_DROP (pkt/s, % of offered)
//	irqs_per_sec polls_per_sec pkts_per_poll time_squeeze_per_sec
//	cpu_busy_pct                                                sum over CPUs of busy % (100 = one CPU)
//	ns_per_pkt                                                  busy CPU ns per received packet
//	cpu<N>.<class>_pct, cpu<N>.idle_pct                         per CPU and class (hardirq, softirq, ...)
//	cpumap.drop_pct                                             cpumap enqueue drops in % of offered
//	cpumap.<field>, udp.<field>, latency_us.<p50|p90|p99|mean>  sections of later models, when present
//	goodput_gbps transactions_per_sec acks_per_sec              TCP (netperf figures), when present
//	tcp.<field>, gro.<field>, gro.flush.<reason>                TCP and GRO detail (flushes per second)
//	busy_poll.<field>                                           busy polling (stack.busy_read), when on
//	extra.<key>, extra.<section>.<key>                          numeric values of Result.Extra and of its sections
//	ledger.imbalance                                            offered − delivered − dropped − queued (0 when packets are conserved)
//
// WallSeconds is left out: it is not a property of the simulation.
func FromResult(r *host.Result) Metrics {
	m := Metrics{}
	m.set("offered_pps", r.OfferedPPS)
	m.set("rx_pps", r.RxPPS)
	m.set("delivered_pps", r.DeliveredPPS)
	m.set("xdp_tx_pps", r.XDPTxPPS)
	m.set("redirect_pps", r.RedirectPPS)
	drops, loss := 0.0, 0.0
	for _, k := range host.Names(r.Drops) {
		drops += r.Drops[k]
		if k != "xdp_drop" {
			loss += r.Drops[k]
		}
		m.set("drop."+k+"_pps", r.Drops[k])
	}
	m.set("drop_pps", drops)
	m.set("loss_pps", loss)
	if r.OfferedPPS > 0 {
		m.set("loss_pct", 100*loss/r.OfferedPPS)
	}
	m.set("irqs_per_sec", r.IRQsPerSec)
	m.set("polls_per_sec", r.PollsPerSec)
	m.set("pkts_per_poll", r.PktsPerPoll)
	m.set("time_squeeze_per_sec", r.TimeSqueeze)
	busy := 0.0
	for _, c := range r.CPU {
		busy += c.Busy
		for _, cl := range host.Names(c.Classes) {
			m.set(fmt.Sprintf("cpu%d.%s_pct", c.ID, cl), 100*c.Classes[cl])
		}
		m.set(fmt.Sprintf("cpu%d.idle_pct", c.ID), 100*c.Idle)
	}
	m.set("cpu_busy_pct", 100*busy)
	if r.RxPPS > 0 {
		m.set("ns_per_pkt", busy*1e9/r.RxPPS)
	}
	m.set("ledger.imbalance", float64(r.Ledger.Imbalance))
	m.ext(r)
	return m
}

func (m Metrics) ext(r *host.Result) {
	if c := r.Cpumap; c != nil {
		m.set("cpumap.enqueue_pps", c.EnqueuePPS)
		m.set("cpumap.drop_pps", c.DropPPS)
		if r.OfferedPPS > 0 {
			m.set("cpumap.drop_pct", 100*c.DropPPS/r.OfferedPPS)
		}
		m.set("cpumap.bulk_avg", c.BulkAvg)
		m.set("cpumap.kthread_pps", c.KthreadPPS)
		m.set("cpumap.kthread_sched_per_sec", c.KthreadSchedPerSec)
	}
	if u := r.UDP; u != nil {
		m.set("udp.in_datagrams", u.InDatagrams)
		m.set("udp.no_ports", u.NoPorts)
		m.set("udp.rcvbuf_errors", u.RcvbufErrors)
	}
	if l := r.LatencyUS; l != nil {
		m.set("latency_us.p50", l.P50)
		m.set("latency_us.p90", l.P90)
		m.set("latency_us.p99", l.P99)
		m.set("latency_us.mean", l.Mean)
	}
	if b := r.BusyPoll; b != nil {
		m.set("busy_poll.loops_per_sec", b.LoopsPerSec)
		m.set("busy_poll.timeouts_per_sec", b.TimeoutsPerSec)
		m.set("busy_poll.polls_per_sec", b.PollsPerSec)
		m.set("busy_poll.rx_pps", b.RxPPS)
		m.set("busy_poll.spin_pct", b.SpinPercent)
	}
	m.tcp(r)
	m.extra("extra.", r.Extra)
}

// extra sets the numeric values of an Extra map under prefix, and those of
// its sections (maps one level down, such as extra.devmap.xmit_pps).
func (m Metrics) extra(prefix string, x map[string]any) {
	for _, k := range host.Names(x) {
		switch v := x[k].(type) {
		case float64:
			m.set(prefix+k, v)
		case int:
			m.set(prefix+k, float64(v))
		case int64:
			m.set(prefix+k, float64(v))
		case uint64:
			m.set(prefix+k, float64(v))
		case map[string]any:
			if strings.Count(prefix, ".") < 2 {
				m.extra(prefix+k+".", v)
			}
		}
	}
}

// tcp adds the TCP layer's figures: goodput_gbps, transactions_per_sec,
// acks_per_sec, tcp.<field> and gro.<field> (gro.flush.<reason> per second).
func (m Metrics) tcp(r *host.Result) {
	t := r.TCP
	if t == nil {
		return
	}
	if t.Kind == "tcp_rr" {
		m.set("transactions_per_sec", r.TransactionsPerSec)
	} else {
		m.set("goodput_gbps", r.GoodputGbps)
	}
	if r.AcksPerSec != nil {
		m.set("acks_per_sec", *r.AcksPerSec)
	}
	m.set("tcp.segments_per_sec", t.SegmentsPerSec)
	m.set("tcp.segs_per_skb", t.SegsPerSkb)
	m.set("tcp.segs_per_ack", t.SegsPerAck)
	m.set("tcp.retransmits_per_sec", t.Retransmits)
	m.set("tcp.service_demand", t.ServiceDemand)
	if t.Kind != "tcp_rr" {
		m.set("tcp.rcvbuf_bytes", float64(t.RcvbufBytes))
		m.set("tcp.rcv_rtt_us", t.RcvRTTus)
	}
	if g := r.GRO; g != nil {
		m.set("gro.merged_per_super_skb", g.MergedPerSuperSkb)
		m.set("gro.segs_per_skb", g.SegsPerSkb)
		m.set("gro.lists_per_sec", g.ListsPerSec)
		m.set("gro.skbs_per_list", g.SkbsPerList)
		for _, k := range host.Names(g.Flushes) {
			m.set("gro.flush."+k, float64(g.Flushes[k])/r.SimSeconds)
		}
	}
}

func (m Metrics) set(k string, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		m[k] = v
	}
}

// Skewed reports whether a metric's distribution across seeds is skewed
// (latencies and their percentiles): such metrics are summarised by the
// median and compared with the Mann-Whitney U test.
func Skewed(name string) bool {
	return len(name) >= 11 && name[:11] == "latency_us."
}
