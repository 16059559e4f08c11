package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/scenarios"
)

// writeNetperf prints the TCP figures the way netperf prints them (receiver
// side, CPU utilisation with -c but summed over the CPUs rather than
// averaged), then the ACK and GRO lines. Nothing is printed without TCP.
func writeNetperf(w io.Writer, s *scenarios.Spec, r *host.Result) {
	t := r.TCP
	if t == nil {
		return
	}
	fmt.Fprintln(w)
	switch s.Traffic.Kind {
	case "tcp_rr":
		fmt.Fprintf(w, "netperf TCP_RR (flows %d, receiver side)\n", s.Traffic.Flows)
		fmt.Fprintf(w, "%-8s %-8s %-8s %-8s %-12s %-9s %s\n", "Socket", "Request", "Resp.", "Elapsed", "Trans.", "CPU", "Service")
		fmt.Fprintf(w, "%-8s %-8s %-8s %-8s %-12s %-9s %s\n", "Size", "Size", "Size", "Time", "Rate", "util", "Demand")
		fmt.Fprintf(w, "%-8s %-8s %-8s %-8s %-12s %-9s %s\n", "bytes", "bytes", "bytes", "secs.", "per sec", "% (sum)", "us/Tr")
		fmt.Fprintf(w, "%-8d %-8d %-8d %-8.2f %-12.2f %-9.1f %.3f\n", s.Stack.Rcvbuf, s.Traffic.ReqSize, s.Traffic.RespSize,
			r.SimSeconds, r.TransactionsPerSec, r.CPUTotalPercent, t.ServiceDemand)
		if l := r.LatencyUS; l != nil {
			fmt.Fprintf(w, "P50_LATENCY %.1f us  P90_LATENCY %.1f us  P99_LATENCY %.1f us  MEAN_LATENCY %.1f us (client send to response received)\n",
				l.P50, l.P90, l.P99, l.Mean)
		}
	default:
		fmt.Fprintf(w, "netperf TCP_STREAM (streams %d, receiver side)\n", s.Traffic.Streams)
		fmt.Fprintf(w, "%-8s %-8s %-8s %-12s %-9s %s\n", "Recv", "Message", "Elapsed", "Throughput", "CPU", "Service")
		fmt.Fprintf(w, "%-8s %-8s %-8s %-12s %-9s %s\n", "Socket", "Size", "Time", "10^6bits/s", "util", "Demand")
		fmt.Fprintf(w, "%-8s %-8s %-8s %-12s %-9s %s\n", "bytes", "bytes", "secs.", "", "% (sum)", "us/KB")
		fmt.Fprintf(w, "%-8d %-8d %-8.2f %-12.2f %-9.1f %.3f\n", t.RcvbufBytes, 128<<10, r.SimSeconds,
			r.GoodputGbps*1e3, r.CPUTotalPercent, t.ServiceDemand)
		line := float64(s.Traffic.MSS) / float64(s.Traffic.MSS+traffic.TCPFrameOverhead+24) * 10 * lineFactor(s)
		fmt.Fprintf(w, "throughput %.3f Gbit/s (line rate at MSS %d: %.3f Gbit/s)\n", r.GoodputGbps, s.Traffic.MSS, line)
		fmt.Fprintf(w, "limit: %s\n", streamLimit(s, r, line))
	}
	fmt.Fprintf(w, "tcp: %s segs/s in %s skbs/s (%.1f segs/skb), %s skbs/s to the socket backlog (%s coalesced), %s coalesced in the receive queue; acks %s/s (rcv %s, backlog %s, recvmsg %s, delack %s, dup %s; %.1f segs/ack)",
		groupThousands(int64(t.SegmentsPerSec)), groupThousands(int64(t.SkbsPerSec)), t.SegsPerSkb, groupThousands(int64(t.BackloggedPerSec)), groupThousands(int64(t.BacklogCoalescePerSec)),
		groupThousands(int64(t.RcvCoalescePerSec)),
		groupThousands(int64(ptrOr(r.AcksPerSec))), groupThousands(int64(t.AcksSoftirq)), groupThousands(int64(t.AcksBacklog)),
		groupThousands(int64(t.AcksApp)), groupThousands(int64(t.AcksDelack)), groupThousands(int64(t.DupAcks)), t.SegsPerAck)
	if s.Traffic.Kind != "tcp_rr" {
		fmt.Fprintf(w, "; %s", rcvbufText(t))
	}
	if t.CsumSkbsPerSec > 0 {
		fmt.Fprintf(w, "; software checksum (no checksum status) %s skbs/s", groupThousands(int64(t.CsumSkbsPerSec)))
	}
	if t.DeferredFreesPerSec > 0 {
		fmt.Fprintf(w, "; skb frees deferred to the allocating CPU %s/s (kick IPIs %s/s)",
			groupThousands(int64(t.DeferredFreesPerSec)), groupThousands(int64(t.DeferKicksPerSec)))
	}
	if t.Retransmits > 0 || t.OfoQueued > 0 || t.DupDrops > 0 || t.RcvbufDrops > 0 || t.RTOs > 0 {
		fmt.Fprintf(w, "; recoveries %s/s retrans %s/s, out-of-order queued %s/s, duplicates dropped %s/s, rcvbuf drops %s/s, RTOs %d",
			groupThousands(int64(t.Recoveries)), groupThousands(int64(t.Retransmits)), groupThousands(int64(t.OfoQueued)),
			groupThousands(int64(t.DupDrops)), groupThousands(int64(t.RcvbufDrops)), t.RTOs)
	}
	fmt.Fprintln(w)
	if g := r.GRO; g != nil {
		var fl []string
		for _, k := range sortedKeys(g.Flushes) {
			fl = append(fl, fmt.Sprintf("%s %d", k, g.Flushes[k]))
		}
		if len(fl) == 0 {
			fl = append(fl, "none")
		}
		fmt.Fprintf(w, "gro: %.1f segs/super-skb, %.1f segs/skb to the stack, %s lists/s of %.1f skbs; flushes: %s\n",
			g.MergedPerSuperSkb, g.SegsPerSkb, groupThousands(int64(math.Round(g.ListsPerSec))), g.SkbsPerList, strings.Join(fl, ", "))
	}
}

// lineFactor is the link speed in units of 10 Gbit/s (1 for ixgbe, 4 for
// a 40G i40e), from the profile's name as the spec carries it; the wire adds
// 24 B per frame (FCS, preamble, IFG; kernel-rx-path.md §1).
// streamLimit names what holds a TCP stream back: the line, a saturated
// CPU (with what runs on it), losses, the sender's pacing, or else the
// receive window the receiver advertises.
func streamLimit(s *scenarios.Spec, r *host.Result, line float64) string {
	if r.GoodputGbps >= 0.995*line {
		return "line rate"
	}
	var sat []string
	for _, c := range r.CPU {
		if c.Busy < 0.97 {
			continue
		}
		var parts []string
		for _, k := range sortedKeys(c.Classes) {
			if v := c.Classes[k]; v >= 0.01 {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*v))
			}
		}
		sat = append(sat, fmt.Sprintf("CPU %d (%s)", c.ID, strings.Join(parts, ", ")))
	}
	t := r.TCP
	switch {
	case len(sat) > 0:
		return "saturated " + strings.Join(sat, "; ") + "; the window holds the sender back"
	case t.Retransmits > 0 || t.DupDrops > 0 || t.RcvbufDrops > 0:
		return "losses: the senders recover with SACK and halve their window"
	case s.Traffic.Rate != "" && s.Traffic.Rate != "line":
		return "the sender's pacing (traffic.rate " + s.Traffic.Rate + ")"
	}
	return fmt.Sprintf("the receive window (%s): no CPU is saturated and the sender waits for ACKs", rcvbufText(r.TCP))
}

func lineFactor(s *scenarios.Spec) float64 {
	if s.HW == "i40e" {
		return 4
	}
	return 1
}

func ptrOr(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// rcvbufText describes the receive buffer: its size at the end, and
// whether autotuning set it (with the RTT estimate it sized by).
func rcvbufText(t *host.TCPResult) string {
	if !t.Autotuned {
		return fmt.Sprintf("rcvbuf %s B, fixed (SO_RCVBUF or tcp_moderate_rcvbuf=0)", groupThousands(int64(t.RcvbufBytes)))
	}
	return fmt.Sprintf("rcvbuf %s B, autotuned (rcv_rtt %.0f us)", groupThousands(int64(t.RcvbufBytes)), t.RcvRTTus)
}
