package host

import (
	"testing"

	"github.com/rxsim/rxsim/scenarios"
)

// TestIRQJitter checks noise.irq_jitter: without it two seeds give the same
// exact figures; with it a seed is reproducible, seeds differ, and packets
// are conserved either way.
func TestIRQJitter(t *testing.T) {
	run := func(jitter string, seed uint64) *Result {
		t.Helper()
		s, err := scenarios.Load("xdp-drop-ixgbe", "traffic.rate=\"2Mpps\"", "nic.adaptive_itr=false",
			"nic.itr_usecs=20", "noise.irq_jitter="+jitter, `duration="5ms"`, `warmup="1ms"`)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Build(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		r := h.Run()
		if r.Ledger.Imbalance != 0 {
			t.Errorf("jitter %s seed %d: offered %d != delivered+dropped+queued (imbalance %d)",
				jitter, seed, r.Ledger.Offered, r.Ledger.Imbalance)
		}
		return r
	}
	tests := []struct {
		jitter    string
		sameSeeds bool // do seeds 1 and 2 give the same IRQ count?
	}{
		{"0.0", true},
		{"0.5", false},
	}
	for _, tt := range tests {
		a, a2, b := run(tt.jitter, 1), run(tt.jitter, 1), run(tt.jitter, 2)
		if a.IRQsPerSec != a2.IRQsPerSec || a.PktsPerPoll != a2.PktsPerPoll {
			t.Errorf("jitter %s: seed 1 not reproducible: %g vs %g irqs/s", tt.jitter, a.IRQsPerSec, a2.IRQsPerSec)
		}
		if same := a.IRQsPerSec == b.IRQsPerSec; same != tt.sameSeeds {
			t.Errorf("jitter %s: irqs/s seed 1 %g, seed 2 %g; same = %v, want %v", tt.jitter, a.IRQsPerSec, b.IRQsPerSec, same, tt.sameSeeds)
		}
	}
	// 20 us fixed ITR without jitter caps the rate at 50k irq/s; jitter
	// only delays interrupts, so it can only lower the rate.
	exact, jit := run("0.0", 1), run("0.5", 1)
	if exact.IRQsPerSec > 50000 || jit.IRQsPerSec >= exact.IRQsPerSec {
		t.Errorf("irqs/s exact %g (want <= 50000), jittered %g (want fewer)", exact.IRQsPerSec, jit.IRQsPerSec)
	}
}
