package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
)

// writeCpumap prints xdp-bench's extended redirect-cpu lines: enqueue to
// the target CPU with bulk-avg, the kthread with sched, and the cpumap
// program's xdp_stats.
func writeCpumap(w io.Writer, s *scenarios.Spec, r *host.Result) {
	c := r.Cpumap
	to := joinInts(c.CPUs)
	fmt.Fprintf(w, "  %-20s %s%s%s\n", "enqueue to cpu "+to, col(c.EnqueuePPS, "pkt/s"), col(c.DropPPS, "drop/s"), colF(c.BulkAvg, "bulk-avg"))
	// The per-(RX CPU, target) sub-line, when there is one of each (the
	// model keeps the enqueue counters per target only).
	if rx := rxCPUs(r); len(c.CPUs) == 1 && rx != "" && !strings.Contains(rx, ",") {
		fmt.Fprintf(w, "    %-18s %s%s%s\n", "cpu:"+rx+"->"+to, col(c.EnqueuePPS, "pkt/s"), col(c.DropPPS, "drop/s"), colF(c.BulkAvg, "bulk-avg"))
	}
	label := "kthread total"
	if c.Delivery == "napi" {
		label = "napi thread total"
	}
	fmt.Fprintf(w, "  %-20s %s%s%s\n", label, col(c.KthreadPPS, "pkt/s"), col(r.Drops["cpumap_kmem_alloc"], "drop/s"), col(c.KthreadSchedPerSec, "sched"))
	if s.XDP.RemoteAction != "disabled" {
		fmt.Fprintf(w, "    %-18s %s%s%s\n", "xdp_stats", col(c.XDPPassPPS, "pass/s"), col(c.XDPDropPPS, "drop/s"), col(c.XDPRedirectPPS, "redir/s"))
	}
}

// writeCpumapCosts explains the cpumap result with the model's costs: the
// remote delivery mode's per-call and per-packet parts, each side's CPU time
// per packet and the rate it allows, and which side limits.
func writeCpumapCosts(w io.Writer, s *scenarios.Spec, r *host.Result) {
	c := r.Cpumap
	if a := s.XDP.RemoteAction; a == "drop" || a == "redirect" {
		fmt.Fprintf(w, "  %-20s none: the cpumap program returns XDP_%s for every frame (%.1f ns/pkt), no skb is built\n",
			"remote delivery", strings.ToUpper(a), costOf(s, "cpumap_bpf_prog_run").Pkt)
	} else {
		fmt.Fprintf(w, "  %-20s %s\n", "remote delivery", deliveryText(s, c))
	}
	each := ""
	if len(c.CPUs) > 1 {
		each = " each"
	}
	fmt.Fprintf(w, "  %-20s RX CPU %s %.0f%% busy, %.0f ns/pkt (max %s); remote CPU %s %.0f%% busy, %.0f ns/pkt (max %s%s)\n",
		"saturation", rxCPUs(r), 100*c.RxBusy, c.RxNSPerPkt, mpps(c.RxNSPerPkt), joinInts(c.CPUs), 100*c.RemoteBusy, c.RemoteNSPerPkt, mpps(c.RemoteNSPerPkt), each)
	why := map[string]string{
		"remote": "the remote CPU limits: its ring fills and the RX CPU drops at enqueue",
		"rx":     "the RX CPU limits: it cannot take more frames off the NIC ring",
		"qsize": fmt.Sprintf("the cpumap ring (qsize %d) overflows before the remote CPU saturates: its kthread sleeps between xdp_do_flush wake-ups (%s sched/s)",
			s.Cpumap.QSize, groupThousands(int64(c.KthreadSchedPerSec))),
		"none": "neither CPU is saturated",
	}[c.Limit]
	if c.Limit == "remote" && c.DropPPS == 0 && r.TCP != nil {
		why = "the remote CPU limits: it is saturated, and the TCP window keeps its ring from overflowing (no enqueue drops)"
	}
	fmt.Fprintf(w, "  %-20s %s\n", "limit: "+c.Limit, why)
	if u := r.UDP; u != nil && u.RcvbufErrors > 0 {
		fmt.Fprintf(w, "  %-20s the reader limits delivery: it reads %s/s and the socket overflows (RcvbufErrors %s/s)\n",
			"", groupThousands(int64(u.InDatagrams)), groupThousands(int64(u.RcvbufErrors)))
	}
}

// deliveryText states the per-call and per-packet stack costs of the mode.
func deliveryText(s *scenarios.Spec, c *host.CpumapResult) string {
	p, err := hw.Load(s.HW, s.Costs)
	if err != nil {
		return c.Delivery
	}
	cost := func(n string) hw.Cost { v, _ := p.CostOf(n); return v }
	rx, ip := cost("netif_receive_skb"), cost("ip_rcv")
	calls := rx.Call + ip.Call
	b := c.KthreadBatchAvg
	t := deliveryModeText(s, c, cost, rx, ip, calls, b)
	if s.Stack.RawDrop {
		t += fmt.Sprintf("; the raw-table rule drops UDP at PREROUTING for %.0f ns instead of ip_rcv's %.0f ns per packet and the UDP layer",
			cost("iptables_raw_drop").Pkt, ip.Pkt)
	}
	return t
}

func deliveryModeText(s *scenarios.Spec, c *host.CpumapResult, cost func(string) hw.Cost, rx, ip hw.Cost, calls, b float64) string {
	switch c.Delivery {
	case "single":
		return fmt.Sprintf("single: netif_receive_skb_core per packet (no RPS) pays every per-call part: netif_receive_skb %.0f+%.0f, ip_rcv %.0f+%.0f ns = %.0f ns call overhead per packet",
			rx.Call, rx.Pkt, ip.Call, ip.Pkt, calls)
	case "list":
		per := calls
		if b > 0 {
			per = calls / b
		}
		return fmt.Sprintf("list: netif_receive_skb_list per batch of %.1f: per-call parts (netif_receive_skb %.0f, ip_list_rcv %.0f ns) once per batch = %.1f ns/pkt instead of %.0f in single; per-packet parts %.0f+%.0f ns unchanged",
			b, rx.Call, ip.Call, per, calls, rx.Pkt, ip.Pkt)
	case "gro":
		g := cost("dev_gro_receive")
		return fmt.Sprintf("gro: GRO node in the kthread: dev_gro_receive %.0f ns/pkt + software checksum (no csum from xdp_frame) for non-mergeable UDP, then gro_normal lists of %d (list per-call parts amortised), flush every %d pkts or on empty ring",
			g.Pkt, s.GRO.NormalBatch, 64)
	case "napi":
		return fmt.Sprintf("napi: threaded NAPI (weight %d) with napi_gro_receive and napi_complete_done; GRO attempt %.0f ns/pkt, gro_normal lists of %d", s.NAPI.Weight, cost("dev_gro_receive").Pkt, s.GRO.NormalBatch)
	case "backlog":
		return fmt.Sprintf("backlog: skb built on the RX CPU (kmem_cache_alloc_bulk + __xdp_build_skb_from_frame), enqueue_to_backlog %.0f ns/pkt + IPI; process_backlog on the target with per-packet netif_receive_skb core", cost("enqueue_to_backlog").Pkt)
	}
	return c.Delivery
}

// costOf returns a cost of the scenario's profile (zero if missing).
func costOf(s *scenarios.Spec, name string) hw.Cost {
	p, err := hw.Load(s.HW, s.Costs)
	if err != nil {
		return hw.Cost{}
	}
	c, _ := p.CostOf(name)
	return c
}

func mpps(nsPerPkt float64) string {
	if nsPerPkt <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f Mpps", 1e3/nsPerPkt)
}

func rxCPUs(r *host.Result) string {
	var ids []int
	for i, v := range r.PerCPURx {
		if v > 0 {
			ids = append(ids, i)
		}
	}
	return joinInts(ids)
}

func joinInts(v []int) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}
