package host

import "testing"

// BenchmarkCpumapUDP runs cpumap-udp-ixgbe (line-rate 64 B flood, redirect
// to one remote CPU, UDP to a closed port) in each delivery mode and reports
// simulated packets (offered to the NIC) per wall-second.
func BenchmarkCpumapUDP(b *testing.B) {
	for _, d := range []string{"single", "list", "gro", "napi", "backlog"} {
		b.Run("delivery="+d, func(b *testing.B) {
			benchScenario(b, "cpumap-udp-ixgbe", `duration="50ms"`, `warmup="0s"`, `cpumap.delivery="`+d+`"`)
		})
	}
}
