package host

import (
	"math"
	"testing"

	"github.com/rxsim/rxsim/scenarios"
)

// TestVethScenarios runs every veth scenario with every generator and
// checks conservation and the structural facts of validate-notes B: with
// live frames an inline NAPI polls 64 then 0 (32 per poll), with socket
// senders one packet per poll; threaded NAPI consumes on CPU 1 and the
// ring overflows with live frames; inline, CPU 1 receives nothing.
func TestVethScenarios(t *testing.T) {
	cases := []struct {
		scenario, gen string
		perPoll       float64 // 0: not checked
		rxCPU         int
		ringFull      bool
	}{
		{"veth-xdp-drop", "live", 32, 0, false},
		{"veth-xdp-drop", "afpacket", 1, 0, false},
		{"veth-xdp-drop", "udp", 1, 0, false},
		{"veth-threaded-napi-drop", "live", 64, 1, true},
		// threaded: entries gather during the kthread's wake-up latency
		{"veth-threaded-napi-drop", "afpacket", 0, 1, false},
		{"veth-threaded-napi-drop", "udp", 0, 1, false},
		{"veth-xdp-pass-udp", "live", 0, 0, false},
		{"veth-xdp-pass-udp", "afpacket", 1, 0, false},
		{"veth-cpumap-udp", "live", 0, 0, false},
		{"veth-cpumap-udp", "udp", 1, 0, false},
		{"veth-cpumap-udp-listener", "afpacket", 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.gen, func(t *testing.T) {
			s, err := scenarios.Load(c.scenario, "traffic.generator="+c.gen, `duration="2ms"`, `warmup="500us"`)
			if err != nil {
				t.Fatal(err)
			}
			h, err := Build(s, 1, Layers()...)
			if err != nil {
				t.Fatal(err)
			}
			r := h.Run()
			if r.Ledger.Imbalance != 0 {
				t.Fatalf("conservation: %+v", r.Ledger)
			}
			if r.RxPPS <= 0 || r.PerCPURx[c.rxCPU] != r.RxPPS {
				t.Errorf("rx %.0f pps, per CPU %v: want all on CPU %d", r.RxPPS, r.PerCPURx, c.rxCPU)
			}
			// one poll pair may straddle the start of the measured interval
			if c.perPoll > 0 && math.Abs(r.PktsPerPoll-c.perPoll) > 0.01*c.perPoll {
				t.Errorf("pkts/poll %.3f, want %g", r.PktsPerPoll, c.perPoll)
			}
			if got := r.Drops["veth_ring_full"] > 0; got != c.ringFull {
				t.Errorf("veth_ring_full %.0f/s, want drops: %v", r.Drops["veth_ring_full"], c.ringFull)
			}
		})
	}
}
