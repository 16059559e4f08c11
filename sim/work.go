package sim

import "math/rand/v2"

// FuncID names a kernel function (or other cost item) for cost attribution.
type FuncID int32

// Funcs interns function names into FuncIDs in registration order. One Funcs
// belongs to one simulated host; it is not global state.
type Funcs struct {
	names []string
	ids   map[string]FuncID
}

// NewFuncs returns an empty registry.
func NewFuncs() *Funcs { return &Funcs{ids: make(map[string]FuncID)} }

// ID returns the id of name, registering it if needed.
func (f *Funcs) ID(name string) FuncID {
	if id, ok := f.ids[name]; ok {
		return id
	}
	id := FuncID(len(f.names))
	f.names = append(f.names, name)
	f.ids[name] = id
	return id
}

// Name returns the name of id.
func (f *Funcs) Name(id FuncID) string { return f.names[id] }

// Len returns the number of registered names.
func (f *Funcs) Len() int { return len(f.names) }

// Work accumulates the cost of one step of a task, split by function. The
// step's duration is Total. Models charge each piece of work as they do it, so
// Now gives the step-local clock: the start plus what has been charged so far.
type Work struct {
	class   Class
	start   Time
	total   Time
	costs   []Time
	touched []FuncID
	// yield suspends the step (set while it runs on a coroutine).
	yield func()
}

func (w *Work) reset(start Time) {
	for _, id := range w.touched {
		w.costs[id] = 0
	}
	w.touched = w.touched[:0]
	w.start = start
	w.total = 0
}

// Add charges d nanoseconds to fn.
func (w *Work) Add(fn FuncID, d Time) {
	if d <= 0 {
		return
	}
	if int(fn) >= len(w.costs) {
		n := make([]Time, int(fn)+16)
		copy(n, w.costs)
		w.costs = n
	}
	if w.costs[fn] == 0 {
		w.touched = append(w.touched, fn)
	}
	w.costs[fn] += d
	w.total += d
}

// Total returns the cost charged so far.
func (w *Work) Total() Time { return w.total }

// Class returns the class of the step (HardIRQ, SoftIRQ or ThreadClass).
func (w *Work) Class() Class { return w.class }

// Start returns the time the step started.
func (w *Work) Start() Time { return w.start }

// Now returns the step-local clock: Start plus Total.
func (w *Work) Now() Time { return w.start + w.total }

// scaleEach multiplies each function's charge by its own noise factor
// (per-step, per-function cost noise), drawn in the order the functions
// were first charged.
func (w *Work) scaleEach(n *CostNoise, rng *rand.Rand) {
	w.total = 0
	for _, id := range w.touched {
		c := Time(float64(w.costs[id]) * n.Factor(id, rng))
		w.costs[id] = c
		w.total += c
	}
}
