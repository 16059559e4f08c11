package validate

import (
	"context"
	"io"
	"math"
	"testing"
	"time"
)

// TestTCPStream measures one second of a TCP stream into the veth pair with
// XDP_PASS, GRO off and on. The counters agree with each other: with GRO
// off every XDP frame is one TCP skb; the payload read matches the frames'
// MSS; with GRO on skbs carry many segments; with GRO off the socket
// backlog coalesces skbs (TcpExt TCPBacklogCoalesce). With threaded NAPI on
// the reader's CPU the receive path leaves the sender's CPU: the reader's
// CPU is the busier one. With 1 frame in 100 dropped by the XDP program,
// the receiver's out-of-order queue holds what follows each hole and the
// sender recovers with SACK, resending about what was dropped.
func TestTCPStream(t *testing.T) {
	requireBPF(t)
	for _, c := range []struct {
		gro, threaded bool
		dropEvery     uint32
		minSegsPerSkb float64
	}{{false, false, 0, 0.98}, {true, false, 0, 5}, {false, true, 0, 0.98}, {false, false, 100, 0.95}} {
		r, err := MeasureTCPStream(context.Background(), TCPStreamOptions{XDP: true, GRO: c.gro, DropEvery: c.dropEvery,
			SenderCPU: 0, ReaderCPU: 1, Threaded: c.threaded, ThreadedCPU: 1, Warmup: 500 * time.Millisecond, Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if r.SegmentsPerSec < 10_000 || r.AcksPerSec <= 0 || r.ReadsPerSec <= 0 {
			t.Fatalf("gro %v: %+v", c.gro, r)
		}
		spk := r.SegmentsPerSec / r.SkbsPerSec
		if spk < c.minSegsPerSkb || (!c.gro && spk > 1.02) {
			t.Errorf("gro %v: %.2f segments per skb", c.gro, spk)
		}
		// Payload read against the frames' payload (MSS 1448 with timestamps):
		// the sink's bytes lag the wire by what is queued, a few percent.
		wire := r.SegmentsPerSec * 1448 * 8 / 1e9
		if math.Abs(r.GoodputGbps-wire)/wire > 0.05 {
			t.Errorf("gro %v: goodput %.3f Gbit/s, frames carry %.3f", c.gro, r.GoodputGbps, wire)
		}
		if len(r.CPU) < 2 {
			t.Errorf("cpu shares %+v", r.CPU)
		}
		// the receiver's autotuning state was read from the live socket
		if r.Rcv == nil || r.Rcv.Rcvbuf <= 0 || r.Rcv.RcvSpace == 0 {
			t.Errorf("receiver state %+v, want sk_rcvbuf and rcv_space", r.Rcv)
		}
		// GRO off, the reader on the other CPU holds the socket when many
		// skbs arrive: they are coalesced in the socket backlog (the model's
		// tcp_add_backlog), and the ACKs are far fewer than one per two
		// segments.
		if c.dropEvery > 0 {
			drops := r.SegmentsPerSec / float64(c.dropEvery)
			if r.OfoQueuePerSec <= 0 || r.SackRecoveryPerSec <= 0 || math.Abs(r.RetransPerSec-drops)/drops > 0.3 {
				t.Errorf("1 in %d dropped: out-of-order queue %.0f/s, SACK recoveries %.0f/s, retransmissions %.0f/s for %.0f drops/s; want SACK recovery resending about the drops",
					c.dropEvery, r.OfoQueuePerSec, r.SackRecoveryPerSec, r.RetransPerSec, drops)
			}
			continue
		}
		if c.threaded {
			// kernel time, as other processes may load both CPUs
			if k := func(c CPUShare) float64 { return c.System + c.SoftIRQ }; len(r.CPU) >= 2 && k(r.CPU[1]) <= k(r.CPU[0]) {
				t.Errorf("threaded NAPI on CPU 1: CPU 1 sys+softirq %.1f%%, CPU 0 (sender) %.1f%%; want CPU 1 the busier",
					100*k(r.CPU[1]), 100*k(r.CPU[0]))
			}
			continue
		}
		if !c.gro && (r.BacklogCoalescePerSec < 0.05*r.SkbsPerSec || r.SegmentsPerSec/r.AcksPerSec < 3) {
			t.Errorf("gro off: %.0f of %.0f skbs/s coalesced in the backlog, %.1f segs/ACK; want many, and more than 3",
				r.BacklogCoalescePerSec, r.SkbsPerSec, r.SegmentsPerSec/r.AcksPerSec)
		}
	}
}

// TestTCPStreamUsage: threaded NAPI without veth NAPI, a CPU that does not
// exist and a bad duration are usage errors before anything is built.
func TestTCPStreamUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--xdp=false", "--threaded-cpu", "1"},
		{"--drop-every", "1"},
		{"--xdp=false", "--drop-every", "100"},
		{"--threaded-cpu", "4096"},
		{"--duration", "0s"},
	} {
		if err := tcpStreamCLI(io.Discard, io.Discard, args); ExitCode(err) != ExitFailOption {
			t.Errorf("%v: err %v (exit %d), want a usage error", args, err, ExitCode(err))
		}
	}
}
