package scenarios_test

import (
	"fmt"

	"github.com/rxsim/rxsim/scenarios"
)

// Load a built-in scenario with two --set overrides; fields the scenario
// does not set come from the kernel defaults and the hw profile.
func ExampleLoad() {
	s, err := scenarios.Load("xdp-drop-ixgbe", "traffic.threads=1", "nic.ring_size=1024")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.HW, s.CPUs, s.Duration)
	fmt.Println("ring", s.NIC.RingSize, "irq_affinity", s.NIC.IRQAffinity, "budget", s.NAPI.Budget)
	fmt.Println("xdp", s.XDP.Program, "pktgen threads", s.Traffic.Threads, "rate", s.Traffic.Rate)

	_, err = scenarios.Load("xdp-drop-ixgbe", "nic.ring_size=8192")
	fmt.Println(err)
	// Output:
	// xdp-drop-ixgbe ixgbe 2 100ms
	// ring 1024 irq_affinity [0] budget 300
	// xdp drop pktgen threads 1 rate line
	// scenario builtin:xdp-drop-ixgbe: nic.ring_size: 8192 out of range, expected 64..4096 (ring_max of hw profile ixgbe) (from --set nic.ring_size=8192)
}
