package xdp

import (
	"fmt"
	"math/rand/v2"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Verdict is an XDP action.
type Verdict uint8

// XDP actions (enum xdp_action).
const (
	Aborted Verdict = iota
	Drop
	Pass
	TX
	Redirect
	numVerdicts
)

// ParseVerdict reads "drop", "pass", "tx", "redirect" or "aborted".
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "aborted":
		return Aborted, nil
	case "drop":
		return Drop, nil
	case "pass":
		return Pass, nil
	case "tx":
		return TX, nil
	case "redirect":
		return Redirect, nil
	}
	return 0, fmt.Errorf("xdp: unknown verdict %q", s)
}

func (v Verdict) String() string {
	return [...]string{"aborted", "drop", "pass", "tx", "redirect"}[v]
}

// Rule chooses the verdict of each packet.
type Rule interface {
	Verdict(p pkt.Packet) Verdict
}

// All gives every packet the same verdict.
type All struct{ V Verdict }

// Verdict implements Rule.
func (a All) Verdict(pkt.Packet) Verdict { return a.V }

// ByFlow gives flow i the verdict Vs[i % len(Vs)].
type ByFlow struct{ Vs []Verdict }

// Verdict implements Rule.
func (f ByFlow) Verdict(p pkt.Packet) Verdict { return f.Vs[int(p.Flow)%len(f.Vs)] }

// ByFraction gives a random Fractions[i] share of packets Vs[i], drawn from
// a seeded stream.
type ByFraction struct {
	Fractions []float64
	Vs        []Verdict
	Rng       *rand.Rand
}

// Verdict implements Rule.
func (f ByFraction) Verdict(pkt.Packet) Verdict {
	u := f.Rng.Float64()
	for i, fr := range f.Fractions {
		if u < fr {
			return f.Vs[i]
		}
		u -= fr
	}
	return f.Vs[len(f.Vs)-1]
}

// CPUSelector is the redirect-cpu program's choice of target CPU index
// (into the program's CPU list).
type CPUSelector interface {
	Select(p pkt.Packet) int
}

// NoTouch always picks the first CPU (xdp-bench -p no-touch / touch).
type NoTouch struct{}

// Select implements CPUSelector.
func (NoTouch) Select(pkt.Packet) int { return 0 }

// RoundRobin cycles through N CPUs packet by packet (-p round-robin).
type RoundRobin struct {
	N    int
	next int
}

// Select implements CPUSelector.
func (r *RoundRobin) Select(pkt.Packet) int {
	i := r.next
	r.next++
	if r.next == r.N {
		r.next = 0
	}
	return i
}

// L4Hash picks by flow hash (-p l4-hash: jhash of the addresses and ports).
type L4Hash struct{ N int }

// Select implements CPUSelector.
func (h L4Hash) Select(p pkt.Packet) int {
	x := p.Flow*0x9e3779b1 ^ 0x5bd1e995
	x ^= x >> 15
	return int(x % uint32(h.N))
}

// Program is an attached XDP program: a rule, a per-packet cost and, for
// redirect-cpu, the CPU list and selector.
type Program struct {
	Name string
	Rule Rule
	// Cost is the program's per-packet run time in ns.
	Cost   sim.Time
	fnProg sim.FuncID
	CPUs   []int
	Select CPUSelector
	// Counts per verdict.
	Counts [numVerdicts]uint64
}

// NewProgram returns a program; funcs registers bpf_prog_run_xdp.
func NewProgram(name string, rule Rule, costNS float64, funcs *sim.Funcs) *Program {
	return &Program{Name: name, Rule: rule, Cost: sim.Time(costNS), fnProg: funcs.ID("bpf_prog_run_xdp")}
}

// Run runs the program on p, charging its cost, and returns the verdict and
// (for Redirect) the target CPU.
func (pr *Program) Run(w *sim.Work, p pkt.Packet) (Verdict, int) {
	w.Add(pr.fnProg, pr.Cost)
	var v Verdict
	if a, ok := pr.Rule.(All); ok {
		v = a.V // the common case, without an interface call
	} else {
		v = pr.Rule.Verdict(p)
	}
	pr.Counts[v]++
	if v == Redirect && len(pr.CPUs) > 0 {
		return v, pr.CPUs[pr.Select.Select(p)]
	}
	return v, -1
}
