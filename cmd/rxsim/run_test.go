package main

import (
	"strings"
	"testing"
)

// TestRunReports keeps the text report of `rxsim run` for one scenario of
// each model family as a golden file (go test -update rewrites them): the
// xdp-bench block, the netperf lines, the GRO and TCP counters, softnet_stat,
// CPU% and the conservation line. A report that changes is a model change
// to explain in the commit.
func TestRunReports(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"run-xdp-drop-ixgbe.golden", []string{"xdp-drop-ixgbe"}},
		{"run-cpumap-udp-ixgbe.golden", []string{"cpumap-udp-ixgbe"}},
		{"run-tcp-stream-gro-off.golden", []string{"tcp-stream-gro", "--set", "nic.gro=false"}},
		{"run-tcp-stream-gro-2ghz.golden", []string{"tcp-stream-gro", "--set", "nic.gro=false", "--set", "cpu_ghz=2.0"}},
		{"run-tcp-rr.golden", []string{"tcp-rr"}},
		{"run-xdp-redirect-devmap.golden", []string{"xdp-redirect-devmap"}},
		{"run-tcp-rr-busy-poll.golden", []string{"tcp-rr", "--set", "traffic.flows=1", "--set", "stack.busy_read=50", "--set", "stack.prefer_busy_poll=true",
			"--set", "napi.napi_defer_hard_irqs=2", "--set", `napi.gro_flush_timeout="200us"`}},
		{"run-cpumap-tcp-stream-napi.golden", []string{"cpumap-tcp-stream", "--set", "cpumap.delivery=napi"}},
	} {
		t.Run(strings.TrimSuffix(c.golden, ".golden"), func(t *testing.T) {
			args := append([]string{"run"}, c.args...)
			args = append(args, "--duration", "10ms", "--set", `warmup="5ms"`)
			checkGolden(t, c.golden, []byte(rxsim(t, args...)))
		})
	}
}
