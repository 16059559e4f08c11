package sim

// Accounting labels that always exist.
const (
	labelHardIRQ = 0
	labelSoftIRQ = 1
)

// Account is CPU time accounting for one host: busy time per CPU per label
// (hardirq, softirq, and one label per kind of thread), and per CPU per
// function. Only the part of a step inside [From, To) is counted (To 0: no
// end): a step that straddles an edge is counted pro rata, so busy time
// never exceeds the interval.
type Account struct {
	From, To Time
	labels   []string
	// Busy[cpu][label] in ns.
	Busy [][]Time
	// ByFunc[cpu][func] in ns.
	ByFunc [][]Time
}

// NewAccount returns accounting for ncpu CPUs.
func NewAccount(ncpu int) *Account {
	a := &Account{labels: []string{"hardirq", "softirq"}}
	a.Busy = make([][]Time, ncpu)
	a.ByFunc = make([][]Time, ncpu)
	return a
}

// Labels returns the accounting labels in registration order.
func (a *Account) Labels() []string { return a.labels }

func (a *Account) label(name string) int {
	for i, l := range a.labels {
		if l == name {
			return i
		}
	}
	a.labels = append(a.labels, name)
	return len(a.labels) - 1
}

// charge counts the step w that runs from now for w.total.
func (a *Account) charge(cpu, label int, w *Work, now Time) {
	in := a.inside(now, w.total)
	if in <= 0 {
		return
	}
	part := func(d Time) Time {
		if in == w.total {
			return d
		}
		return Time(int64(d) * int64(in) / int64(w.total))
	}
	b := a.Busy[cpu]
	for len(b) <= label {
		b = append(b, 0)
	}
	b[label] += in
	a.Busy[cpu] = b
	f := a.ByFunc[cpu]
	for _, id := range w.touched {
		for int(id) >= len(f) {
			f = append(f, 0)
		}
		f[id] += part(w.costs[id])
	}
	a.ByFunc[cpu] = f
}

// inside returns how much of [now, now+d) lies in [From, To).
func (a *Account) inside(now, d Time) Time {
	start, end := max(now, a.From), now+d
	if a.To > 0 {
		end = min(end, a.To)
	}
	return max(end-start, 0)
}

// BusyOf returns the busy time of cpu under label.
func (a *Account) BusyOf(cpu int, label string) Time {
	for i, l := range a.labels {
		if l == label && i < len(a.Busy[cpu]) {
			return a.Busy[cpu][i]
		}
	}
	return 0
}

// FuncTime returns the time charged to fn on cpu (0 if none was).
func (a *Account) FuncTime(cpu int, fn FuncID) Time {
	if cpu < 0 || cpu >= len(a.ByFunc) || int(fn) < 0 || int(fn) >= len(a.ByFunc[cpu]) {
		return 0
	}
	return a.ByFunc[cpu][fn]
}
