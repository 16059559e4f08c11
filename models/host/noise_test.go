package host

import (
	"fmt"
	"testing"

	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/sim"
)

// TestCostNoiseTable checks which cv and distribution each function gets
// from the scenario's noise settings and the cost profile.
func TestCostNoiseTable(t *testing.T) {
	type want struct {
		fn   string
		cv   float64
		dist sim.Dist
	}
	for _, c := range []struct {
		name string
		sets []string
		nil_ bool
		want []want
	}{
		{"off", nil, true, nil},
		{"profile", []string{"noise.profile=true"}, false, []want{
			{"napi_poll", 0.05, sim.DistLogNormal},      // the profile's [noise] default
			{"sock_def_readable", 0.3, sim.DistGamma},   // its own cv and dist
			{"not_in_profile", 0.05, sim.DistLogNormal}, // unknown functions get the default
		}},
		{"cost_cv overrides every cv, keeps the dist", []string{"noise.profile=true", "noise.cost_cv=0.1"}, false, []want{
			{"napi_poll", 0.1, sim.DistLogNormal},
			{"sock_def_readable", 0.1, sim.DistGamma},
		}},
		{"cost_cv alone", []string{"noise.cost_cv=0.02"}, false, []want{
			{"wake_up_process", 0.02, sim.DistGamma},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Load("cpumap-udp-ixgbe", c.sets...)
			if err != nil {
				t.Fatal(err)
			}
			h, err := Build(s, 1, Layers()...)
			if err != nil {
				t.Fatal(err)
			}
			n, err := h.CostNoise()
			if err != nil || (n == nil) != c.nil_ {
				t.Fatalf("CostNoise = %v, %v", n, err)
			}
			for _, w := range c.want {
				if cv, d := n.Of(h.Funcs.ID(w.fn)); cv != w.cv || d != w.dist {
					t.Errorf("%s: cv %v dist %v, want %v %v", w.fn, cv, d, w.cv, w.dist)
				}
			}
		})
	}
}

// TestProfileNoiseRuns checks that noise.profile makes replications differ
// by seed only, stay reproducible, and keep packets conserved.
func TestProfileNoiseRuns(t *testing.T) {
	sets := []string{`duration="5ms"`, `warmup="1ms"`, "noise.profile=true"}
	a := canon(t, run(t, "cpumap-udp-ixgbe", append(sets, "seed=2")...))
	if b := canon(t, run(t, "cpumap-udp-ixgbe", append(sets, "seed=2")...)); a != b {
		t.Error("seed 2 twice with profile noise differs")
	}
	if b := canon(t, run(t, "cpumap-udp-ixgbe", append(sets, "seed=3")...)); a == b {
		t.Error("seeds 2 and 3 with profile noise gave identical results")
	}
	exact := canon(t, run(t, "cpumap-udp-ixgbe", `duration="5ms"`, `warmup="1ms"`, "seed=2"))
	if exact == a {
		t.Error("profile noise changed nothing")
	}
}

// TestTimerJitter checks that noise.timer_jitter moves the gro_flush_timeout
// watchdog (busy-poll-like deferral) and the delayed-ACK timer, reproducibly.
func TestTimerJitter(t *testing.T) {
	base := []string{`duration="5ms"`, `warmup="1ms"`, `napi.gro_flush_timeout="20us"`, "napi.napi_defer_hard_irqs=2"}
	exact := canon(t, run(t, "tcp-rr", base...))
	j := append(base, `noise.timer_jitter="3us"`)
	a := canon(t, run(t, "tcp-rr", j...))
	if a == exact {
		t.Error("timer jitter changed nothing")
	}
	if b := canon(t, run(t, "tcp-rr", j...)); a != b {
		t.Error("timer jitter is not reproducible")
	}
}

// TestLatencyHistMerge checks the merge of two sparse histograms.
func TestLatencyHistMerge(t *testing.T) {
	a := &LatencyHist{UpperUS: []float64{1, 3, 5}, Counts: []uint64{1, 2, 3}}
	b := &LatencyHist{UpperUS: []float64{2, 3, 9}, Counts: []uint64{10, 20, 30}}
	got := a.Merge(b)
	want := &LatencyHist{UpperUS: []float64{1, 2, 3, 5, 9}, Counts: []uint64{1, 10, 22, 3, 30}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merge = %v, want %v", got, want)
	}
	var none *LatencyHist
	if none.Merge(a) != a || a.Merge(nil) != a {
		t.Error("merge with nil does not return the other side")
	}
}
