package main

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/validate"
)

// groupThousands formats n with thousands separators ("14,880,952"), as
// xdp-bench's "%'10llu" in an en_US locale; validate prints the same way.
func groupThousands(n int64) string { return validate.GroupThousands(n) }

// col is one xdp-bench column: "%'10<fmt> %-13s".
func col(v float64, unit string) string {
	return fmt.Sprintf("%10s %-13s", groupThousands(int64(math.Round(v))), unit)
}

func colF(v float64, unit string) string { return fmt.Sprintf("%10.2f %-13s", v, unit) }

// writeText prints a run in xdp-bench's layout, then softnet_stat-like
// counters, interrupt and poll rates, and CPU% per CPU and class.
func writeText(w io.Writer, s *scenarios.Spec, r *host.Result) error {
	fmt.Fprintf(w, "rxsim run %s (seed %d, %.3fs simulated after %s warm-up; %s)\n",
		r.Scenario, r.Seed, r.SimSeconds, s.Warmup.Duration, s.Description)
	if s.CPUGHz > 0 {
		fmt.Fprintf(w, "costs: the cost profile's CPU at %g GHz (cpu_ghz; costs scaled as cycles)\n", s.CPUGHz)
	}
	errs := r.Drops["xdp_aborted"]
	drops := 0.0
	for k, v := range r.Drops {
		if k != "xdp_drop" {
			drops += v
		}
	}
	label := "Summary"
	errUnit := "err,drop/s"
	errVal := errs + drops
	if s.XDP.Program == "drop" {
		errUnit, errVal = "err/s", errs
	}
	if s.XDP.Program == "redirect-cpu" {
		label = s.HW + "->?"
	}
	dm, _ := r.Extra["devmap"].(map[string]any)
	if dm == nil {
		fmt.Fprintf(w, "%-23s%s%s\n", label, col(r.RxPPS, "rx/s"), col(errVal, errUnit))
	} else {
		// xdp-bench redirect-map: in_if->out_if, rx/s, err,drop/s, xmit/s
		label = fmt.Sprintf("%s->%v", s.HW, dm["egress"])
		fmt.Fprintf(w, "%-23s%s%s%s\n", label, col(r.RxPPS, "rx/s"), col(errVal, errUnit), col(num(dm["xmit_pps"]), "xmit/s"))
	}
	fmt.Fprintf(w, "  %-20s %s%s%s\n", "receive total", col(r.RxPPS, "pkt/s"), col(r.Drops["xdp_drop"], "drop/s"), col(errs, "error/s"))
	for i, v := range r.PerCPURx {
		if v > 0 {
			fmt.Fprintf(w, "    %-18s %s%s%s\n", fmt.Sprintf("cpu:%d", i), col(v, "pkt/s"), col(0, "drop/s"), col(0, "error/s"))
		}
	}
	if r.Cpumap != nil {
		writeCpumap(w, s, r)
	}
	if dm != nil {
		fmt.Fprintf(w, "  %-20s %s%s%s\n", "devmap_xmit total", col(num(dm["xmit_pps"]), "xmit/s"), col(num(dm["drop_pps"]), "drop/s"),
			colF(num(dm["bulk_avg"]), "bulk-avg"))
	}
	writeExtras(w, r)
	writeNetperf(w, s, r) // report_tcp.go
	if r.Cpumap != nil {
		writeCpumapCosts(w, s, r)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "offered %s pkt/s; ", groupThousands(int64(math.Round(r.OfferedPPS))))
	fmt.Fprintf(w, "drops:")
	if len(r.Drops) == 0 {
		fmt.Fprintf(w, " none")
	}
	for _, k := range sortedKeys(r.Drops) {
		fmt.Fprintf(w, " %s %s/s", k, groupThousands(int64(math.Round(r.Drops[k]))))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "irqs/s %s  polls/s %s  pkts/poll %.1f  time_squeeze/s %s\n",
		groupThousands(int64(r.IRQsPerSec)), groupThousands(int64(r.PollsPerSec)), r.PktsPerPoll, groupThousands(int64(r.TimeSqueeze)))
	if b := r.BusyPoll; b != nil {
		prefer := ""
		if b.Prefer {
			prefer = ", prefer_busy_poll"
		}
		fmt.Fprintf(w, "busy poll (busy_read %d us, budget %d%s): %s loops/s (%s timed out), %s pkt/s in %s busy polls/s (BusyPollRxPackets), spinning %.1f%% of a CPU\n",
			b.ReadUS, b.Budget, prefer, groupThousands(int64(b.LoopsPerSec)), groupThousands(int64(b.TimeoutsPerSec)),
			groupThousands(int64(b.RxPPS)), groupThousands(int64(b.PollsPerSec)), b.SpinPercent)
	}
	fmt.Fprintln(w, "softnet_stat (over the measured interval):")
	fmt.Fprintf(w, "  %-5s %12s %10s %13s %13s\n", "cpu", "processed", "dropped", "time_squeeze", "received_rps")
	for _, sn := range r.Softnet {
		fmt.Fprintf(w, "  %-5d %12d %10d %13d %13d\n", sn.CPU, sn.Processed, sn.Dropped, sn.TimeSqueeze, sn.ReceivedRPS)
	}
	writeCPU(w, r)
	fmt.Fprintf(w, "conservation: offered %d = delivered %d + dropped %d + queued %d (imbalance %d)\n",
		r.Ledger.Offered, sumU(r.Ledger.Delivered), sumU(r.Ledger.Dropped), r.Ledger.Queued, r.Ledger.Imbalance)
	return nil
}

// cpuClasses is the report order of CPU classes.
var cpuClassOrder = []string{"hardirq", "softirq", "ksoftirqd", "napi", "kthread", "app"}

func writeCPU(w io.Writer, r *host.Result) {
	fmt.Fprintf(w, "CPU%%:  %-4s", "cpu")
	for _, c := range cpuClassOrder {
		fmt.Fprintf(w, " %9s", c)
	}
	fmt.Fprintf(w, " %9s\n", "idle")
	for _, c := range r.CPU {
		fmt.Fprintf(w, "       %-4d", c.ID)
		for _, k := range cpuClassOrder {
			fmt.Fprintf(w, " %9.1f", 100*c.Classes[k])
		}
		fmt.Fprintf(w, " %9.1f\n", 100*c.Idle)
	}
}

// writeExtras prints the stack sections (UDP counters, latency) when present.
func writeExtras(w io.Writer, r *host.Result) {
	if u := r.UDP; u != nil {
		fmt.Fprintf(w, "  %-20s %s%s%s\n", "udp", col(u.InDatagrams, "InDatagrams/s"), col(u.NoPorts, "NoPorts/s"), col(u.RcvbufErrors, "RcvbufErr/s"))
	}
	if l := r.LatencyUS; l != nil && r.TCP == nil { // TCP_RR latency: writeNetperf
		fmt.Fprintf(w, "  %-20s p50 %.1f us  p90 %.1f us  p99 %.1f us  mean %.1f us (wire arrival to recvmsg return; nearest-rank percentiles)\n", "socket latency", l.P50, l.P90, l.P99, l.Mean)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sumU(m map[string]uint64) uint64 {
	var s uint64
	for _, v := range m {
		s += v
	}
	return s
}

// num reads a number from a Result.Extra map (0 when absent).
func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
