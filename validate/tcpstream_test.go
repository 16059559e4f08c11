package validate

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestTCPStream measures one second of a TCP stream into the veth pair with
// XDP_PASS, GRO off and on. The counters agree with each other: with GRO
// off every XDP frame is one TCP skb; the payload read matches the frames'
// MSS; with GRO on skbs carry many segments; with GRO off the socket
// backlog coalesces skbs (TcpExt TCPBacklogCoalesce).
func TestTCPStream(t *testing.T) {
	requireBPF(t)
	for _, c := range []struct {
		gro           bool
		minSegsPerSkb float64
	}{{false, 0.98}, {true, 5}} {
		r, err := MeasureTCPStream(context.Background(), TCPStreamOptions{XDP: true, GRO: c.gro,
			SenderCPU: 0, ReaderCPU: 1, Warmup: 500 * time.Millisecond, Duration: time.Second})
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
		// GRO off, the reader on the other CPU holds the socket when many
		// skbs arrive: they are coalesced in the socket backlog (the model's
		// tcp_add_backlog), and the ACKs are far fewer than one per two
		// segments.
		if !c.gro && (r.BacklogCoalescePerSec < 0.05*r.SkbsPerSec || r.SegmentsPerSec/r.AcksPerSec < 3) {
			t.Errorf("gro off: %.0f of %.0f skbs/s coalesced in the backlog, %.1f segs/ACK; want many, and more than 3",
				r.BacklogCoalescePerSec, r.SkbsPerSec, r.SegmentsPerSec/r.AcksPerSec)
		}
	}
}
