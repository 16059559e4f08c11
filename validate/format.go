package validate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// GroupThousands formats v with comma thousands separators, as xdp-bench's
// %' under en_US.UTF-8.
func GroupThousands(v int64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := fmt.Sprint(v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// col renders one xdp-bench column: "%'10d %-13s".
func col(v float64, unit string) string {
	return fmt.Sprintf("%10s %-13s", GroupThousands(int64(math.Round(v))), unit)
}

// colf renders a float column: "%'10.2f %-13s".
func colf(v float64, unit string) string {
	if math.IsNaN(v) {
		return fmt.Sprintf("%10s %-13s", "n/a", unit)
	}
	return fmt.Sprintf("%10.2f %-13s", v, unit)
}

func line(w io.Writer, label string, cols ...string) {
	fmt.Fprintln(w, strings.TrimRight(label+strings.Join(cols, ""), " "))
}

func lbl1(s string) string { return fmt.Sprintf("  %-20s ", s) }
func lbl2(s string) string { return fmt.Sprintf("    %-18s ", s) }

// WriteStart prints xdp-bench's start-up line.
func WriteStart(w io.Writer, o Options, iface string, ifindex int, driver string) {
	verb := map[Program]string{ProgDrop: "Dropping", ProgPass: "Passing", ProgTx: "Hairpinning (XDP_TX)", ProgRedirectCPU: "Redirecting"}[o.Program]
	fmt.Fprintf(w, "%s packets on %s (ifindex %d; driver %s)\n", verb, iface, ifindex, driver)
	mode := "native"
	if o.XDPMode == "skb" {
		mode = "generic (skb), as asked"
	}
	fmt.Fprintf(w, "XDP mode: %s", mode)
	if o.Program == ProgRedirectCPU {
		fmt.Fprintf(w, "; cpumap to cpus %v, qsize %d, program-mode %s, remote-action %s", o.CPUs, o.Qsize, o.Mode, o.RemoteAction)
	}
	if o.Iface == "" {
		fmt.Fprintf(w, "; generator %s pinned to CPU %d, pkt_size %d, flows %d", o.Gen.Kind, o.Gen.CPU, o.Gen.PktSize, o.Gen.Flows)
	}
	fmt.Fprintln(w)
}

// WriteSecond prints one interval in xdp-bench's layout (terse: the first
// line plus lines with drops or errors; extended: everything).
func WriteSecond(w io.Writer, iface string, x *Sample, o Options, extended bool) {
	label := "Summary"
	errUnit := "err,drop/s"
	errs := x.RedirectErr
	if o.Program == ProgRedirectCPU {
		label = iface + "->?"
	}
	if o.Program == ProgDrop {
		errUnit = "err/s"
	}
	line(w, fmt.Sprintf("%-23s", label), col(x.Rx, "rx/s"), col(errs, errUnit))
	rxDrop := x.Drops["xdp_drop"]
	if o.Program == ProgRedirectCPU {
		rxDrop = 0 // remote drops are shown under xdp_stats
	}
	if extended || errs > 0 {
		name := "receive"
		if extended {
			name = "receive total"
		}
		line(w, lbl1(name), col(x.Rx, "pkt/s"), col(rxDrop, "drop/s"), col(errs, "error/s"))
		if extended {
			for cpu, v := range x.RxPerCPU {
				if v > 0 {
					line(w, lbl2(fmt.Sprintf("cpu:%d", cpu)), col(v, "pkt/s"))
				}
			}
		}
	}
	if o.Program == ProgRedirectCPU {
		enq, drop, bulk := x.Rx-x.RedirectErr, x.Drops["cpumap_enqueue"], math.NaN()
		if x.Probe || x.EnqPPS > 0 {
			enq, drop, bulk = x.EnqPPS, x.EnqDrop, x.BulkAvg
		}
		if extended || drop > 0 {
			for _, c := range o.CPUs {
				line(w, lbl1(fmt.Sprintf("enqueue to cpu %d", c)), col(enq/float64(len(o.CPUs)), "pkt/s"), col(drop/float64(len(o.CPUs)), "drop/s"), colf(bulk, "bulk-avg"))
			}
			if extended {
				for _, e := range x.EnqPerCPU {
					line(w, lbl2(fmt.Sprintf("cpu:%d->%d", e.From, e.To)), col(e.PPS, "pkt/s"), col(e.Drop, "drop/s"), colf(e.BulkAvg, "bulk-avg"))
				}
			}
		}
		if extended {
			sched := math.NaN()
			if x.Probe || x.EnqPPS > 0 {
				sched = x.KthSched
			}
			s := col(sched, "sched")
			if math.IsNaN(sched) {
				s = fmt.Sprintf("%10s %-13s", "n/a", "sched")
			}
			line(w, lbl1("kthread total"), col(x.Kthread, "pkt/s"), col(0, "drop/s"), s)
			if o.RemoteAction == RemoteDrop || o.RemoteAction == RemotePass {
				pass, drop := x.Remote, 0.0
				if o.RemoteAction == RemoteDrop {
					pass, drop = 0, x.Remote
				}
				line(w, lbl2("xdp_stats"), col(pass, "pass/s"), col(drop, "drop/s"), col(0, "redir/s"))
			}
		}
	}
	if !extended {
		for _, k := range []string{"ring_full", "rcvbuf", "backlog", "udp_csum"} {
			if v := x.Drops[k]; v > 0 {
				line(w, lbl1(k), col(v, "drop/s"))
			}
		}
		return
	}
	// rxsim's own lines, in the same columns.
	if o.Program == ProgTx {
		line(w, lbl1("xdp_tx to sender"), col(x.Tx, "pkt/s"))
	}
	line(w, lbl1("ring_full"), col(x.Drops["ring_full"], "drop/s"), col(x.SndTxDrop, "snd-txdrop/s"), col(x.LinkRxDrop, "rx-drop/s"))
	line(w, lbl1("stack udp"), col(x.UDP.InDatagrams, "in/s"), col(x.UDP.NoPorts, "noport/s"), col(x.UDP.RcvbufErrors, "rcvbuf/s"))
	line(w, lbl1("delivered"), col(x.Delivered, "pkt/s"), col(x.Offered, "offered/s"))
	line(w, lbl1("softnet total"), col(x.Softnet.Processed, "pkt/s"), col(x.Softnet.Dropped, "drop/s"), col(x.Softnet.TimeSqueeze, "squeeze/s"))
	line(w, lbl1("ethtool xdp"), col(x.EthtoolXDP, "pkt/s"))
	if x.Probe || x.Polls > 0 {
		line(w, lbl1("napi_poll total"), col(x.Polls, "poll/s"), colf(x.AvgWork, "avg-work"), col(x.FullBudget, "full/s"))
	}
	for _, c := range x.CPU {
		line(w, lbl2(fmt.Sprintf("cpu:%d busy", c.CPU)), colf(100*c.SoftIRQ, "% softirq"), colf(100*c.Thread, "% thread"), colf(100*c.HardIRQ, "% hardirq"), colf(100*c.Idle, "% idle"))
	}
}

// sampleFromMedians rebuilds a Sample from a result's medians (and its
// probe run) so the summary uses the per-second layout.
func sampleFromMedians(r *Result) Sample {
	m := r.Median
	x := Sample{Rx: m["rx_pps"], Offered: m["offered_pps"], Delivered: m["delivered_pps"], Drops: r.Drops,
		RedirectErr: m["redirect_err_pps"], Remote: m["remote_pps"], Tx: m["tx_pps"], Kthread: m["kthread_pps"],
		Softnet:    SoftnetRate{Processed: m["softnet.processed"], Dropped: m["softnet.dropped"], TimeSqueeze: m["time_squeeze"], ReceivedRPS: m["softnet.received_rps"]},
		UDP:        UDPRate{InDatagrams: m["udp.in_datagrams"], NoPorts: m["udp.no_ports"], RcvbufErrors: m["udp.rcvbuf_errors"]},
		EthtoolXDP: m["ethtool_rx_xdp_pps"], SndTxDrop: m["snd_tx_dropped_pps"], LinkRxDrop: m["link_rx_dropped_pps"],
		CPU: r.CPU}
	for cpu := 0; ; cpu++ {
		v, ok := m[fmt.Sprintf("rx_pps.cpu%d", cpu)]
		if !ok {
			break
		}
		x.RxPerCPU = append(x.RxPerCPU, v)
	}
	if p := r.Probe; p != nil {
		x.Probe = true
		x.EnqPPS, x.EnqDrop, x.BulkAvg, x.KthSched, x.EnqPerCPU = p.EnqPPS, p.EnqDrop, p.BulkAvg, p.KthSched, p.EnqPerCPU
		x.Polls, x.AvgWork, x.FullBudget = p.Polls, p.AvgWork, p.FullBudget
		if r.Settings.Program == ProgRedirectCPU && p.EnqPPS > 0 {
			// keep probe-free enqueue numbers visible too
			x.EnqPPS = p.EnqPPS
		}
	}
	return x
}

// WriteSummary prints the summary block of a result: the xdp-bench layout of
// the medians, then the spread of the main metrics.
func WriteSummary(w io.Writer, r *Result) {
	secs := 0
	for _, rep := range r.Reps {
		secs += rep.Seconds
	}
	fmt.Fprintf(w, "\n%s: median of %d repetitions x %d s (%s XDP on %s, driver %s)\n", r.Scenario, len(r.Reps), secs/max(1, len(r.Reps)), r.XDPMode, r.Iface, r.Driver)
	fmt.Fprintln(w, "rates: probe-free runs; bulk-avg, sched and napi_poll: a separate probe run")
	x := sampleFromMedians(r)
	WriteSecond(w, r.Iface, &x, r.Settings, true)
	fmt.Fprintln(w, "  spread (over repetitions: min..max of the per-rep medians; over seconds: p10..p90)")
	keys := []string{"rx_pps", "offered_pps", "delivered_pps", "kthread_pps", "ethtool_rx_xdp_pps"}
	for k := range r.Drops {
		keys = append(keys, "drops."+k)
	}
	sort.Strings(keys[5:])
	for _, k := range keys {
		s, ok := r.Spread[k]
		if !ok || r.Median[k] == 0 {
			continue
		}
		fmt.Fprintf(w, "    %-18s %10s median  reps %s..%s (%5.1f%%)  seconds %s..%s\n", k,
			GroupThousands(int64(r.Median[k])), GroupThousands(int64(s.RepMin)), GroupThousands(int64(s.RepMax)),
			100*s.RelRange, GroupThousands(int64(s.SecP10)), GroupThousands(int64(s.SecP90)))
	}
	if len(r.Reference) > 0 {
		var refs []string
		for _, v := range r.Reference {
			mark := ""
			if v < r.Settings.SlowFactor*r.Settings.RefPPS {
				mark = " (slow)"
			}
			refs = append(refs, GroupThousands(int64(v))+mark)
		}
		fmt.Fprintf(w, "  reference XDP_DROP live: %s pkt/s (fixed reference %s, slow below %.0f%%)\n", strings.Join(refs, ", "), GroupThousands(int64(r.Settings.RefPPS)), 100*r.Settings.SlowFactor)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintf(w, "  Duration            : %.1fs\n", r.SimSeconds)
	fmt.Fprintf(w, "  Average packets/s   : %s\n", GroupThousands(int64(r.RxPPS)))
}
