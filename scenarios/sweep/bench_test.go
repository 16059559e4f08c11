package sweep

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
)

// realSim runs the host model (the same thing rxsim's simulate does).
func realSim(s *scenarios.Spec, seed uint64) (Outcome, error) {
	h, err := host.Build(s, seed, host.Layers()...)
	if err != nil {
		return Outcome{}, err
	}
	return OutcomeOf(h.Run()), nil
}

// BenchmarkSweepWorkers runs the same 32-run sweep (4 points x 8 reps of
// an XDP_DROP flood, 10 ms simulated each) with 1, 2 and 4 workers and
// reports runs/s and simulated packets per wall second. The ratio of the
// workers=2 and workers=1 runs/s is the sweep's parallel speed-up. GOGC
// is 400, as rxsim sweep and compare set it (cmd/rxsim sweepGCPercent):
//
//	go test ./scenarios/sweep -run '^$' -bench SweepWorkers -benchtime 3x
func BenchmarkSweepWorkers(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	plan := Plan{Scenario: "xdp-drop-ixgbe", Sets: []string{`duration="10ms"`, `warmup="1ms"`, "noise.cost_cv=0.05"},
		Params: []Param{{"traffic.rate", []string{`"6Mpps"`, `"9Mpps"`, `"12Mpps"`, `"line"`}}}, Reps: 8, Seed: 1}
	specs, err := plan.Specs()
	if err != nil {
		b.Fatal(err)
	}
	labels := make([]string, len(specs))
	for _, w := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			var pkts float64
			for i := 0; i < b.N; i++ {
				runs, err := Execute(labels, specs, plan.Jobs(), Options{Workers: w, Sim: realSim})
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range runs {
					pkts += r.Metrics["rx_pps"] * 0.010
				}
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N*len(plan.Jobs()))/sec, "runs/s")
			b.ReportMetric(pkts/sec, "simpkts/s")
		})
	}
}
