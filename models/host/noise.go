package host

import (
	"fmt"

	"github.com/rxsim/rxsim/sim"
)

// buildNoise gives every CPU the scenario's cost noise (noise.profile and
// noise.cost_cv), each CPU drawing from its own stream "noise/cpuN". The
// noise table is built after every layer has registered its functions, so
// each function known to the profile gets its own cv and distribution.
func (h *Host) buildNoise() error {
	n, err := h.CostNoise()
	if err != nil || n == nil {
		return err
	}
	for i, c := range h.CPUs {
		c.SetNoise(n, h.Streams.Get(fmt.Sprintf("noise/cpu%d", i)))
	}
	return nil
}

// CostNoise returns the per-function noise table of the host's scenario and
// profile, or nil when the scenario asks for exact costs.
func (h *Host) CostNoise() (*sim.CostNoise, error) {
	nz := h.Spec.Noise
	if !nz.Profile && nz.CostCV <= 0 {
		return nil, nil
	}
	p := h.Profile
	defDist, err := sim.ParseDist(p.Noise.Dist)
	if err != nil {
		return nil, fmt.Errorf("cost profile %s: noise.dist: %w", p.CostName, err)
	}
	defCV := 0.0
	if nz.Profile {
		defCV = p.Noise.CV
	}
	if nz.CostCV > 0 {
		defCV = nz.CostCV
	}
	n := sim.NewCostNoise(defCV, defDist)
	for id := 0; id < h.Funcs.Len(); id++ {
		c, ok := p.Costs[h.Funcs.Name(sim.FuncID(id))]
		if !ok {
			continue
		}
		d := defDist
		if c.Dist != "" {
			if d, err = sim.ParseDist(c.Dist); err != nil {
				return nil, fmt.Errorf("cost profile %s: costs.%s.dist: %w", p.CostName, h.Funcs.Name(sim.FuncID(id)), err)
			}
		}
		cv := defCV
		if nz.Profile && c.CV != nil && nz.CostCV <= 0 {
			cv = *c.CV
		}
		n.Set(sim.FuncID(id), cv, d)
	}
	return n, nil
}

// timerJitter returns the kernel-timer expiry jitter of the scenario
// (noise.timer_jitter) on the host's stream "noise/timers", or nil. All
// timers share the stream; their expiries are drawn in event order, which
// is deterministic.
func (h *Host) timerJitter() *sim.Jitter {
	m := h.Spec.Noise.TimerJitter.Duration
	if m <= 0 {
		return nil
	}
	if h.jitter == nil {
		h.jitter = sim.NewJitter(sim.Time(m.Nanoseconds()), h.Streams.Get("noise/timers"))
	}
	return h.jitter
}
