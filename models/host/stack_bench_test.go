package host

import (
	"testing"

	"github.com/rxsim/rxsim/scenarios"
)

// BenchmarkCpumapUDP runs cpumap-udp-ixgbe (line-rate 64 B flood, redirect
// to one remote CPU, UDP to a closed port) in each delivery mode and reports
// simulated packets (offered to the NIC) per wall-second.
func BenchmarkCpumapUDP(b *testing.B) {
	for _, d := range []string{"single", "list", "gro", "napi", "backlog"} {
		b.Run("delivery="+d, func(b *testing.B) {
			s, err := scenarios.Load("cpumap-udp-ixgbe", `duration="50ms"`, `warmup="0s"`, `cpumap.delivery="`+d+`"`)
			if err != nil {
				b.Fatal(err)
			}
			var pkts uint64
			var simSec float64
			b.ReportAllocs()
			for b.Loop() {
				h, err := Build(s, 1, Layers()...)
				if err != nil {
					b.Fatal(err)
				}
				r := h.Run()
				pkts += r.Ledger.Offered
				simSec += r.SimSeconds
			}
			el := b.Elapsed().Seconds()
			b.ReportMetric(float64(pkts)/el, "simpkts/s")
			b.ReportMetric(simSec/el, "sim-s/wall-s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
