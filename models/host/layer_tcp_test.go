package host

import (
	"math"
	"testing"
	"time"

	"github.com/rxsim/rxsim/scenarios"
)

// tcpRun builds and runs a TCP scenario and checks the TCP invariants:
// segment conservation through the host ledger, segments pushed by the
// senders = offered to the NIC + still on the wire or in the RSS demux,
// bytes received in order = bytes read + bytes still in the sockets, and
// every ACK the host sent reached the sender model.
func tcpRun(t testing.TB, name string, sets ...string) (*Host, *Result) {
	t.Helper()
	h, r := buildRun(t, name, sets...) // segment conservation through the ledger
	var x *TCPExt
	for _, e := range h.Ext {
		if e, ok := e.(*TCPExt); ok {
			x = e
		}
	}
	if x == nil {
		t.Fatalf("%s: no TCP layer", name)
	}
	if pushed, seen := x.Wire.Pushed, h.Ledger.Offered+uint64(x.Wire.InFlight()+h.Demux.Buffered()); pushed != seen {
		t.Errorf("%s %v: wire pushed %d segments, NIC offered + wire + demux %d", name, sets, pushed, seen)
	}
	var rcv uint64
	for _, sk := range x.TCP.Sockets() {
		rcv += uint64(sk.RcvNxt())
	}
	if read, q := x.TCP.Stats.BytesRead, x.TCP.SocketBytes(); rcv != read+q {
		t.Errorf("%s %v: byte conservation: rcv_nxt sum %d != read %d + queued %d", name, sets, rcv, read, q)
	}
	if segs := x.TCP.Stats.Segs; segs != h.Ledger.Delivered[0] {
		t.Errorf("%s %v: tcp queued %d segments, ledger delivered to sockets %d", name, sets, segs, h.Ledger.Delivered[0])
	}
	if x.Stream != nil && x.Stream.Stats.Acks != x.TCP.Stats.Acks() {
		t.Errorf("%s %v: host sent %d ACKs, sender got %d", name, sets, x.TCP.Stats.Acks(), x.Stream.Stats.Acks)
	}
	if x.RR != nil {
		if x.RR.Stats.Transactions != x.TCP.Stats.Responses {
			t.Errorf("%s %v: %d responses sent, %d transactions completed", name, sets, x.TCP.Stats.Responses, x.RR.Stats.Transactions)
		}
		if n := uint64(len(x.RR.Flows())); x.RR.Stats.Requests != x.RR.Stats.Transactions+n {
			t.Errorf("%s %v: closed loop: %d requests != %d transactions + %d outstanding", name, sets, x.RR.Stats.Requests, x.RR.Stats.Transactions, n)
		}
	}
	return h, r
}

const lineRate10G = 9.415 // Gbit/s at MSS 1448 (kernel-rx-path.md §1)

func busy(r *Result, cpu int) float64 { return r.CPU[cpu].Busy }

// TestTCPStreamGRO: GRO on reaches line rate with the receiver far from
// CPU-bound and about one ACK per super-skb. GRO off, with netserver on its
// own CPU, the softirq delivers faster than netserver reads, so netserver
// holds the socket (lock_sock) when most skbs arrive: they go to the socket
// backlog, coalesced there (tcp_add_backlog), and netserver runs
// tcp_v4_do_rcv and sends the ACKs from release_sock ("trapped in
// __release_sock", commit 4f693b55c3d2). With netserver on the RX CPU the
// receive queue grows during each poll, __tcp_ack_snd_check sees a window
// that would not grow, and the ACKs come one per read from tcp_cleanup_rbuf
// (as on the validation machine). A receiver that is slow enough (the same
// CPU at 0.7 GHz, or a 1200 ns XDP program in front of the stack with
// netserver on the RX CPU) limits the stream below line rate.
func TestTCPStreamGRO(t *testing.T) {
	const d = `duration="40ms"`
	cases := []struct {
		name    string
		sets    []string
		minGbps float64
		maxGbps float64
		check   func(t *testing.T, r *Result)
	}{
		{"GRO on, reader on CPU 1", []string{d}, 0.999 * lineRate10G, 1.001 * lineRate10G, func(t *testing.T, r *Result) {
			if busy(r, 0) > 0.5 {
				t.Errorf("RX CPU %.0f%% busy, want far from CPU-bound", 100*busy(r, 0))
			}
			if r.GRO.MergedPerSuperSkb < 10 {
				t.Errorf("%.1f segs per super-skb, want GRO merging", r.GRO.MergedPerSuperSkb)
			}
			if r.TCP.SegsPerAck < 10 {
				t.Errorf("%.1f segs per ACK, want about one ACK per super-skb", r.TCP.SegsPerAck)
			}
		}},
		{"GRO off, reader on CPU 1", []string{d, "nic.gro=false"}, 0.999 * lineRate10G, 1.001 * lineRate10G, func(t *testing.T, r *Result) {
			tr := r.TCP
			if tr.BackloggedPerSec < 0.8*tr.SkbsPerSec {
				t.Errorf("%.0f of %.0f skbs/s to the socket backlog, want most", tr.BackloggedPerSec, tr.SkbsPerSec)
			}
			// one ACK per coalesced backlog skb, sent by netserver
			if tr.SegsPerAck < 3 || tr.SegsPerAck > backlogMax {
				t.Errorf("%.2f segs per ACK, want one per coalesced backlog skb (3..%d)", tr.SegsPerAck, backlogMax)
			}
			if tr.AcksBacklog < 0.5**r.AcksPerSec {
				t.Errorf("%.0f of %.0f ACKs/s from the backlog, want most", tr.AcksBacklog, *r.AcksPerSec)
			}
			// netserver sleeps only when it has caught up; each wake-up
			// finds CPU 1 idle and pays the idle exit (670 ns in the profile)
			var exit int64
			for _, f := range r.Funcs {
				if f.CPU == 1 && f.Func == "idle_exit" {
					exit = f.NS
				}
			}
			if perWake := float64(exit) / r.SimSeconds / tr.WakeupsPerSec; perWake < 600 || perWake > 671 {
				t.Errorf("idle exit %.0f ns per wake-up on the reader's CPU, want 670 for nearly every one", perWake)
			}
		}},
		{"GRO off, reader on the RX CPU", []string{d, "nic.gro=false", "app.cpus=[0]"}, 0.999 * lineRate10G, 1.001 * lineRate10G, func(t *testing.T, r *Result) {
			if b := busy(r, 0); b < 0.3 || b > 0.9 {
				t.Errorf("RX CPU %.1f%% busy, want busy but not CPU-bound", 100*b)
			}
			if r.TCP.AcksApp < 0.8**r.AcksPerSec || math.Abs(r.TCP.AcksApp-r.TCP.ReadsPerSec) > 0.05*r.TCP.ReadsPerSec {
				t.Errorf("%.0f of %.0f ACKs/s from tcp_cleanup_rbuf for %.0f reads/s, want one per read", r.TCP.AcksApp, *r.AcksPerSec, r.TCP.ReadsPerSec)
			}
		}},
		{"GRO off, reader on the RX CPU, 1200 ns XDP_PASS program", []string{d, "nic.gro=false", "app.cpus=[0]", `xdp.program="pass"`, "xdp.cost_ns=1200"}, 0, 0.9 * lineRate10G, func(t *testing.T, r *Result) {
			if busy(r, 0) < 0.99 {
				t.Errorf("RX CPU %.1f%% busy, want CPU-bound", 100*busy(r, 0))
			}
		}},
		{"GRO on, reader on the RX CPU", []string{d, "app.cpus=[0]"}, 0.999 * lineRate10G, 1.001 * lineRate10G, nil},
		// Every cost x5.1: the RX CPU (which also frees the skbs netserver
		// consumed, skb_attempt_defer_free) saturates and limits the
		// stream; GRO on still fits.
		{"GRO off, reader on CPU 1, CPU at 0.7 GHz", []string{d, "nic.gro=false", "cpu_ghz=0.7"}, 0, 0.9 * lineRate10G, func(t *testing.T, r *Result) {
			if busy(r, 0) < 0.99 {
				t.Errorf("RX CPU %.1f%% busy, want saturated", 100*busy(r, 0))
			}
		}},
		{"GRO on, reader on CPU 1, CPU at 0.7 GHz", []string{d, "cpu_ghz=0.7"}, 0.999 * lineRate10G, 1.002 * lineRate10G, func(t *testing.T, r *Result) {
			if busy(r, 0) > 0.97 {
				t.Errorf("RX CPU %.1f%% busy, want below CPU-bound", 100*busy(r, 0))
			}
		}},
	}
	res := map[string]*Result{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, r := tcpRun(t, "tcp-stream-gro", c.sets...)
			res[c.name] = r
			if r.GoodputGbps < c.minGbps || r.GoodputGbps > c.maxGbps {
				t.Errorf("goodput %.3f Gbit/s, want %.3f..%.3f", r.GoodputGbps, c.minGbps, c.maxGbps)
			}
			if len(r.Drops) != 0 {
				t.Errorf("drops %v, want none (the window bounds what is in flight)", r.Drops)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
	on, off := res["GRO on, reader on CPU 1"], res["GRO off, reader on CPU 1"]
	if on != nil && off != nil {
		if on.CPUTotalPercent >= 0.7*off.CPUTotalPercent {
			t.Errorf("same throughput: CPU %.1f%% with GRO, %.1f%% without; want GRO to save more than 30%%", on.CPUTotalPercent, off.CPUTotalPercent)
		}
		if *on.AcksPerSec >= *off.AcksPerSec/3 {
			t.Errorf("ACKs/s %.0f with GRO, %.0f without; want far fewer with GRO", *on.AcksPerSec, *off.AcksPerSec)
		}
	}
}

// backlogMax is the most segments a coalesced backlog skb holds
// (MAX_SKB_FRAGS + 1).
const backlogMax = 18

// TestGRONormalBatch: with GRO off every segment is a GRO_NORMAL skb, so the
// gro_normal list is delivered every gro_normal_batch skbs (and at poll
// end): lists per second fall as the batch grows, and batch 0 and 1 both
// deliver each skb alone.
func TestGRONormalBatch(t *testing.T) {
	prevLists := math.Inf(1)
	for _, b := range []string{"1", "4", "8", "16"} {
		_, r := tcpRun(t, "tcp-stream-gro", `duration="20ms"`, "nic.gro=false", "gro.normal_batch="+b)
		if r.GRO.ListsPerSec >= prevLists {
			t.Errorf("batch %s: %.0f lists/s, not fewer than with the smaller batch (%.0f)", b, r.GRO.ListsPerSec, prevLists)
		}
		if b == "1" && math.Abs(r.GRO.SkbsPerList-1) > 1e-9 {
			t.Errorf("batch 1: %.2f skbs per list, want 1", r.GRO.SkbsPerList)
		}
		prevLists = r.GRO.ListsPerSec
	}
	_, r0 := tcpRun(t, "tcp-stream-gro", `duration="20ms"`, "nic.gro=false", "gro.normal_batch=0")
	_, r1 := tcpRun(t, "tcp-stream-gro", `duration="20ms"`, "nic.gro=false", "gro.normal_batch=1")
	if canon(t, r0) != canon(t, r1) {
		t.Errorf("gro_normal_batch 0 and 1 differ; both deliver each skb alone")
	}
}

// TestTCPRR: the closed loop completes transactions, and Little's law ties
// the rate to the cycle time: flows = rate x (mean latency + the client's
// remote delay, which netperf's latency does not include).
func TestTCPRR(t *testing.T) {
	_, r := tcpRun(t, "tcp-rr", `duration="20ms"`)
	if r.TransactionsPerSec <= 0 || r.LatencyUS == nil {
		t.Fatalf("no transactions: %+v", r)
	}
	little := r.TransactionsPerSec * (r.LatencyUS.Mean + 10) / 1e6
	if math.Abs(little-100) > 2 {
		t.Errorf("rate %.0f/s x mean latency %.1f us = %.1f flows in flight, want 100", r.TransactionsPerSec, r.LatencyUS.Mean, little)
	}
	if r.LatencyUS.P50 > r.LatencyUS.P90 || r.LatencyUS.P90 > r.LatencyUS.P99 {
		t.Errorf("percentiles out of order: %+v", r.LatencyUS)
	}
	if *r.AcksPerSec != 0 {
		t.Errorf("%.0f pure ACKs/s: 1-byte requests are acknowledged by the responses", *r.AcksPerSec)
	}
	// One flow: latency-bound, not CPU-bound: the latency is at least the
	// two 2 us wire delays plus two 67 B frames (72.8 ns each), and one
	// transaction is in flight.
	_, r1 := tcpRun(t, "tcp-rr", `duration="20ms"`, "traffic.flows=1")
	if inFlight := r1.TransactionsPerSec * (r1.LatencyUS.Mean + 10) / 1e6; r1.LatencyUS.Mean < 4.145 || math.Abs(inFlight-1) > 0.01 {
		t.Errorf("one flow: %.0f tps, mean %.2f us (%.3f in flight); want >= 4.15 us and 1 in flight", r1.TransactionsPerSec, r1.LatencyUS.Mean, inFlight)
	}
	if busy(r1, 1) > 0.5 {
		t.Errorf("one flow: server CPU %.0f%% busy", 100*busy(r1, 1))
	}
}

// TestTCPDeterminism: same seed, same result; streams and batch knobs work
// through --set.
func TestTCPDeterminism(t *testing.T) {
	for _, sets := range [][]string{
		{`duration="15ms"`, "traffic.streams=4", "nic.queues=2", "nic.irq_affinity=[0,1]", "cpus=3", "app.cpus=[2]"},
		{`duration="15ms"`, "traffic.psh=true", "gro.normal_batch=16"},
	} {
		_, a := tcpRun(t, "tcp-stream-gro", sets...)
		_, b := tcpRun(t, "tcp-stream-gro", sets...)
		if canon(t, a) != canon(t, b) {
			t.Errorf("%v: two runs with the same seed differ", sets)
		}
	}
	_, a := tcpRun(t, "tcp-rr", `duration="10ms"`)
	_, b := tcpRun(t, "tcp-rr", `duration="10ms"`)
	if canon(t, a) != canon(t, b) {
		t.Errorf("tcp-rr: two runs with the same seed differ")
	}
}

// BenchmarkTCPStreamGRO reports simulated segments per wall-second for the
// tcp-stream-gro scenario (GRO on, one stream at line rate).
func BenchmarkTCPStreamGRO(b *testing.B) {
	for _, gro := range []string{"true", "false"} {
		b.Run("gro="+gro, func(b *testing.B) {
			s, err := scenarios.Load("tcp-stream-gro", `duration="50ms"`, "nic.gro="+gro)
			if err != nil {
				b.Fatal(err)
			}
			var segs uint64
			var wall time.Duration
			var simNS int64
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				h, err := Build(s, s.Seed, Layers()...)
				if err != nil {
					b.Fatal(err)
				}
				h.Run()
				wall += time.Since(t0)
				segs += h.Ledger.Offered
				simNS += (s.Duration.Duration + s.Warmup.Duration).Nanoseconds()
			}
			b.ReportMetric(float64(segs)/wall.Seconds(), "simsegs/s")
			b.ReportMetric(float64(simNS)/1e9/wall.Seconds(), "sim-s/wall-s")
		})
	}
}

// TestCpumapTCPStream: the delivery mode changes the figures through the
// mechanisms. cpumap skbs have no checksum status. With GRO in the kthread
// (gro) or threaded NAPI (napi) GRO checksums each segment as it merges it,
// the remote CPU merges ~30-40 segments per skb, netserver reads
// super-skbs, and the 40G stream stays within 10% of line rate. With
// per-skb delivery (single, list, backlog) tcp_v4_rcv's path checksums
// every segment (tcp_checksum_complete) on top of the per-skb stack. In
// single and list the remote CPU also builds the skbs, saturates without
// enqueue drops (the window holds) and limits the stream below the GRO
// modes' rate; backlog builds the skbs on the RX CPU and the remote CPU
// keeps up. The per-skb skbs arrive faster than netserver reads:
// netserver holds the socket when nearly every one arrives, so they are
// coalesced in the socket backlog and netserver runs tcp_v4_do_rcv and the
// ACKs, and its CPU is at least 70% busy. The per-skb modes cost more CPU
// per Gbit/s (netperf's service demand).
func TestCpumapTCPStream(t *testing.T) {
	const line40 = 4 * lineRate10G
	total, gbps := map[string]float64{}, map[string]float64{}
	for _, c := range []struct {
		mode              string
		merged, saturates bool
	}{
		{"single", false, true}, {"list", false, true}, {"gro", true, false}, {"napi", true, false}, {"backlog", false, false},
	} {
		t.Run(c.mode, func(t *testing.T) {
			_, r := tcpRun(t, "cpumap-tcp-stream", `duration="20ms"`, "cpumap.delivery="+c.mode)
			total[c.mode], gbps[c.mode] = r.CPUTotalPercent/r.GoodputGbps, r.GoodputGbps
			if r.GoodputGbps > 1.001*line40 || (c.merged && r.GoodputGbps < 0.9*line40) {
				t.Errorf("goodput %.2f Gbit/s, want at most line rate %.2f (GRO modes: within 10%%)", r.GoodputGbps, line40)
			}
			if merged := r.GRO != nil && r.GRO.MergedPerSuperSkb > 10; merged != c.merged {
				t.Errorf("GRO merging %v (%+v), want %v", merged, r.GRO, c.merged)
			}
			// Every skb of a per-skb mode is checksummed by TCP; GRO
			// validated the segments of the merged modes.
			if want := map[bool]float64{false: r.TCP.SkbsPerSec, true: 0}[c.merged]; r.TCP.CsumSkbsPerSec != want {
				t.Errorf("%.0f skbs/s checksummed by TCP, want %.0f", r.TCP.CsumSkbsPerSec, want)
			}
			if limited := r.Cpumap.Limit == "remote"; limited != c.saturates {
				t.Errorf("limit %q (remote CPU %.1f%% busy), want the remote CPU to limit: %v", r.Cpumap.Limit, 100*r.Cpumap.RemoteBusy, c.saturates)
			}
			backlogged := r.TCP.BackloggedPerSec / r.TCP.SkbsPerSec
			switch {
			case c.merged && busy(r, 2) > 0.7:
				t.Errorf("netserver's CPU %.1f%% busy, want well below saturation with super-skbs", 100*busy(r, 2))
			case !c.merged && (backlogged < 0.8 || busy(r, 2) < 0.7):
				t.Errorf("%.0f%% of skbs to the socket backlog, netserver's CPU %.1f%% busy; want most and at least 70%% busy", 100*backlogged, 100*busy(r, 2))
			}
			// backlog's bursts, with an autotuned window of megabytes,
			// overflow a ring now and then: the sender goes back and
			// stays within 10% of line rate
			switch {
			case c.mode == "backlog" && r.GoodputGbps < 0.9*line40:
				t.Errorf("goodput %.2f Gbit/s with drops %v, want within 10%% of line rate", r.GoodputGbps, r.Drops)
			case c.mode != "backlog" && len(r.Drops) != 0:
				t.Errorf("drops %v", r.Drops)
			}
		})
	}
	for _, m := range []string{"single", "list", "backlog"} {
		for _, g := range []string{"gro", "napi"} {
			if total[m] > 0 && total[g] > 0 && total[g] >= total[m] {
				t.Errorf("CPU %.2f%% per Gbit/s with %s, %.2f%% with %s; want GRO to cost less", total[g], g, total[m], m)
			}
			if m != "backlog" && gbps[m] > 0 && gbps[g] > 0 && gbps[m] >= gbps[g] {
				t.Errorf("%.2f Gbit/s with %s, %.2f with %s; want the GRO mode faster than a saturated per-skb mode", gbps[m], m, gbps[g], g)
			}
		}
	}
}

// TestTCPLossRecovery: an overloaded receiver with a 64-descriptor ring
// drops segments (rx_missed); the receiver holds what follows a hole in
// its out-of-order queue and SACKs it, the senders recover with SACK
// (retransmitting about what was lost, not the windows after it), and the
// stream keeps about half its throughput. Segments, bytes and ACKs stay
// conserved (tcpRun), the out-of-order queue included.
func TestTCPLossRecovery(t *testing.T) {
	_, r := tcpRun(t, "tcp-stream-gro", `duration="30ms"`, "traffic.streams=4", "nic.gro=false", "app.cpus=[0]", "nic.ring_size=64",
		`xdp.program="pass"`, "xdp.cost_ns=1200")
	tr := r.TCP
	if r.Drops["rx_missed"] == 0 || tr.OfoQueued == 0 || tr.Recoveries == 0 || tr.Retransmits == 0 {
		t.Fatalf("want ring drops, segments held out of order, recoveries and retransmissions: drops %v tcp %+v", r.Drops, tr)
	}
	// SACK: the senders resend about what was lost, not the windows after it
	if lost := r.Drops["rx_missed"]; tr.Retransmits > 3*lost {
		t.Errorf("%.0f segments/s retransmitted for %.0f lost/s, want about one each", tr.Retransmits, lost)
	}
	if r.GoodputGbps < 0.4*lineRate10G {
		t.Errorf("goodput %.2f Gbit/s: recovery collapsed", r.GoodputGbps)
	}
}

// TestGROBucketOverflowCpumap: cpumap-built skbs carry no RX hash, so every
// flow shares GRO bucket 0 and its MAX_GRO_SKBS (8) slots: 16 streams
// overflow it (gro_flush_oldest), while the NIC's NAPI GRO node spreads the
// same 16 flows over the 8 buckets by their RSS hash and does not
// overflow. The sender sends a stream's whole window back to back, so the
// streams interleave on the wire only when each window is small: a 128 KiB
// receive buffer per socket (about two TSO bursts).
func TestGROBucketOverflowCpumap(t *testing.T) {
	const rcvbuf = "stack.rcvbuf=131072"
	_, c := tcpRun(t, "cpumap-tcp-stream", `duration="20ms"`, "traffic.streams=16", "cpumap.delivery=gro", rcvbuf)
	if c.GRO.Flushes["overflow"] == 0 {
		t.Errorf("cpumap GRO, 16 streams: flushes %v, want bucket-0 overflows", c.GRO.Flushes)
	}
	_, n := tcpRun(t, "tcp-stream-gro", `duration="20ms"`, "traffic.streams=16", rcvbuf)
	if n.GRO.Flushes["overflow"] != 0 {
		t.Errorf("NIC GRO, 16 streams: %d overflows, want none", n.GRO.Flushes["overflow"])
	}
}

// TestTCPPacedSameThroughput: paced at 400 kpps (traffic.rate) the stream
// runs at 400k x 1448 x 8 = 4.634 Gbit/s with or without GRO, with the
// reader on the RX CPU; GRO costs that CPU much less.
func TestTCPPacedSameThroughput(t *testing.T) {
	var cpu [2]float64
	for i, g := range []string{"true", "false"} {
		_, r := tcpRun(t, "tcp-stream-gro", `duration="30ms"`, "traffic.rate=400kpps", "app.cpus=[0]", "nic.gro="+g)
		// goodput counts what netserver read; with GRO off it reads ~50
		// segments per call, and one read at an edge of the 30 ms weighs
		// 0.02 Gbit/s
		if math.Abs(r.GoodputGbps-4.634) > 0.03 {
			t.Errorf("gro=%s: goodput %.3f Gbit/s, want 4.634", g, r.GoodputGbps)
		}
		cpu[i] = r.CPUTotalPercent
	}
	if cpu[0] >= 0.7*cpu[1] {
		t.Errorf("CPU %.1f%% with GRO, %.1f%% without, at the same throughput; want GRO to save more than 30%%", cpu[0], cpu[1])
	}
}

// TestTCPDeferFree: skb_attempt_defer_free with netserver on CPU 1. With
// skb_defer_max 128 (the default) every skb netserver consumes was built on
// the RX CPU, so CPU 0's net_rx_action frees it and netserver pays only the
// push; with 0 (before v5.19), or with netserver on the RX CPU, netserver
// frees them itself. In every case each RX buffer handed up by the driver
// is in a socket queue, on a socket backlog, held by GRO, on a defer list,
// or back in its RX queue.
func TestTCPDeferFree(t *testing.T) {
	const d = `duration="20ms"`
	cases := []struct {
		name     string
		sets     []string
		deferred bool
		freeCPU  int // the CPU that frees the skbs
	}{
		{"default, reader on CPU 1", []string{d, "nic.gro=false"}, true, 0},
		{"skb_defer_max 0", []string{d, "nic.gro=false", "stack.skb_defer_max=0"}, false, 1},
		{"reader on the RX CPU", []string{d, "nic.gro=false", "app.cpus=[0]"}, false, 0},
		{"GRO on", []string{d}, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, r := tcpRun(t, "tcp-stream-gro", c.sets...)
			fn := map[string][2]int64{}
			for _, f := range r.Funcs {
				if f.CPU < 2 {
					v := fn[f.Func]
					v[f.CPU] = f.NS
					fn[f.Func] = v
				}
			}
			tr := r.TCP
			if got := tr.DeferredFreesPerSec > 0; got != c.deferred {
				t.Fatalf("%.0f skb frees/s deferred, want deferral %v", tr.DeferredFreesPerSec, c.deferred)
			}
			free, push := fn["skb_release_data"], fn["skb_attempt_defer_free"]
			// every skb consumed is freed, 111.9 ns per skb and 23.5 per
			// segment buffer (the profile's skb_release_data), on one CPU
			if free[1-c.freeCPU] != 0 || free[c.freeCPU] == 0 {
				t.Errorf("skb_release_data %v ns by CPU, want all on CPU %d", free, c.freeCPU)
			}
			if c.deferred {
				want := (111.9*tr.DeferredFreesPerSec + 23.5*tr.SegmentsPerSec) * r.SimSeconds
				if got := float64(free[0]); math.Abs(got-want) > 0.01*want || push[0] != 0 || push[1] == 0 {
					t.Errorf("frees %.0f ns on CPU 0 (want %.0f), push %v ns; want the pushes on CPU 1", got, want, push)
				}
			} else if push != [2]int64{} {
				t.Errorf("push %v ns, want none", push)
			}
			var x *TCPExt
			var st *StackExt
			for _, e := range h.Ext {
				switch e := e.(type) {
				case *TCPExt:
					x = e
				case *StackExt:
					st = e
				}
			}
			held := int(x.TCP.SocketSegs()) + x.TCP.Queued()
			for _, dr := range st.Drivers {
				held += dr.Queued()
			}
			for _, sn := range h.Softnet {
				held += sn.DeferredBuffers()
			}
			if in := h.Queues[0].Inflight; in != held {
				t.Errorf("RX queue has %d buffers handed away, %d held by sockets, backlogs, GRO and defer lists", in, held)
			}
		})
	}
}

// TestTCPAutotune: netserver's socket starts at tcp_rmem[1] and receive-
// buffer autotuning grows it to megabytes at 10G (the validation VM's
// 6.18 receivers reached 7-17 MB, validate/README.md), never past
// tcp_rmem[2]; SO_RCVBUF (stack.rcvbuf) or tcp_moderate_rcvbuf=0 keeps
// the size. The stream reaches line rate in each case.
func TestTCPAutotune(t *testing.T) {
	const d = `duration="20ms"`
	for _, c := range []struct {
		name     string
		sets     []string
		min, max int
		tuned    bool
	}{
		{"GRO on", []string{d}, 1 << 20, 32 << 20, true},
		{"GRO off", []string{d, "nic.gro=false"}, 1 << 20, 32 << 20, true},
		{"tcp_rmem[2] 1 MB", []string{d, "stack.tcp_rmem_max=1048576"}, 1 << 20, 1 << 20, true},
		{"SO_RCVBUF", []string{d, "stack.rcvbuf=425984"}, 425984, 425984, false},
		{"tcp_moderate_rcvbuf=0", []string{d, "stack.tcp_moderate_rcvbuf=false"}, 131072, 131072, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, r := tcpRun(t, "tcp-stream-gro", c.sets...)
			tr := r.TCP
			if tr.RcvbufBytes < c.min || tr.RcvbufBytes > c.max || tr.Autotuned != c.tuned {
				t.Errorf("rcvbuf %d B (autotuned %v), want %d..%d (%v)", tr.RcvbufBytes, tr.Autotuned, c.min, c.max, c.tuned)
			}
			if c.tuned && tr.RcvRTTus <= 0 {
				t.Errorf("no receiver RTT estimate")
			}
			if r.GoodputGbps < 0.999*lineRate10G {
				t.Errorf("goodput %.3f Gbit/s, want line rate", r.GoodputGbps)
			}
		})
	}
}

// TestTCPRecoveryNoStall: across ring sizes, clocks, GRO and stream
// counts, losses never leave a stream stalled (recovery, RACK and the
// recovery timer always find the holes before the 200 ms RTO), and the
// TCP invariants hold (tcpRun).
func TestTCPRecoveryNoStall(t *testing.T) {
	for _, ring := range []string{"64", "512"} {
		for _, ghz := range []string{"0.7", "1.0", "1.5"} {
			for _, gro := range []string{"true", "false"} {
				for _, streams := range []string{"1", "4"} {
					sets := []string{`duration="40ms"`, "nic.ring_size=" + ring, "cpu_ghz=" + ghz, "nic.gro=" + gro, "traffic.streams=" + streams}
					_, r := tcpRun(t, "tcp-stream-gro", sets...)
					if r.GoodputGbps < 1 || r.TCP.RTOs > 0 {
						t.Errorf("%v: goodput %.2f Gbit/s, %d RTOs, drops %v: stalled", sets, r.GoodputGbps, r.TCP.RTOs, r.Drops)
					}
				}
			}
		}
	}
}
