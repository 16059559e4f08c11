package validate

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestTCPRR measures one second of TCP_RR between the namespaces, with
// and without SO_BUSY_POLL on the servers. Every flow makes progress; the
// busy-polling servers take the requests themselves (TcpExt
// BusyPollRxPackets near the transaction rate), the others none.
func TestTCPRR(t *testing.T) {
	requireBPF(t)
	for _, c := range []struct {
		flows, busy int
	}{{1, 0}, {1, 50}, {4, 50}} {
		r, err := MeasureTCPRR(context.Background(), TCPRROptions{Flows: c.flows, ClientCPU: 0, ServerCPU: 1,
			BusyPollUS: c.busy, XDP: true, Warmup: 300 * time.Millisecond, Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if r.TransactionsPerSec < 1000 || r.PerFlowMin <= 0 || len(r.CPU) < 2 {
			t.Fatalf("flows %d busy %d: %+v", c.flows, c.busy, r)
		}
		busy := r.BusyPollRxPackets / r.TransactionsPerSec
		if (c.busy == 0 && busy != 0) || (c.busy > 0 && busy < 0.5) {
			t.Errorf("flows %d busy %d: busy polls took %.0f pkt/s at %.0f transactions/s", c.flows, c.busy, r.BusyPollRxPackets, r.TransactionsPerSec)
		}
	}
}

// TestTCPRRUsage: bad flow counts and busy-poll values are usage errors
// before anything is built.
func TestTCPRRUsage(t *testing.T) {
	for _, args := range [][]string{{"--flows", "0"}, {"--flows", "1000"}, {"--busy-poll", "-1"}, {"--duration", "0s"}} {
		if err := tcpRRCLI(io.Discard, io.Discard, args); ExitCode(err) != ExitFailOption {
			t.Errorf("%v: err %v (exit %d), want a usage error", args, err, ExitCode(err))
		}
	}
}
