package sim

// Handler receives events. Arg is the value given to Schedule; handlers use it
// to tell their events apart and to ignore stale ones (a generation number).
type Handler interface {
	Fire(now Time, arg int64)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(now Time, arg int64)

// Fire implements Handler.
func (f HandlerFunc) Fire(now Time, arg int64) { f(now, arg) }

type event struct {
	at  Time
	seq uint64
	h   Handler
	arg int64
}

func (a *event) less(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Engine is the discrete-event core: a clock and a queue of pending events.
// It is not safe for concurrent use; parallel replications use one Engine each.
type Engine struct {
	now    Time
	seq    uint64
	heap   []event
	fired  uint64
	stopAt Time
}

// NewEngine returns an engine at time 0 with room for capacity pending events.
func NewEngine(capacity int) *Engine {
	return &Engine{heap: make([]event, 0, capacity), stopAt: Never}
}

// Now returns the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Fired returns the number of events delivered so far.
func (e *Engine) Fired() uint64 { return e.fired }

// NextAt returns the time of the earliest pending event (Never if none).
func (e *Engine) NextAt() Time {
	if len(e.heap) == 0 {
		return Never
	}
	return e.heap[0].at
}

// Pending returns the number of events in the queue.
func (e *Engine) Pending() int { return len(e.heap) }

// Schedule queues h to fire at time at with arg. Events at the same time fire
// in the order they were scheduled. Scheduling in the past fires at Now.
func (e *Engine) Schedule(at Time, h Handler, arg int64) {
	if at < e.now {
		at = e.now
	}
	e.seq++
	e.heap = append(e.heap, event{at: at, seq: e.seq, h: h, arg: arg})
	e.up(len(e.heap) - 1)
}

// After queues h to fire d after Now.
func (e *Engine) After(d Duration, h Handler, arg int64) { e.Schedule(e.now+d, h, arg) }

// Stop makes Run return before delivering any event later than t.
func (e *Engine) Stop(t Time) { e.stopAt = t }

// Run delivers events in order until the queue is empty or the next event is
// later than until; the clock is then set to until (if it is not Never).
func (e *Engine) Run(until Time) {
	e.stopAt = until
	for len(e.heap) > 0 {
		top := e.heap[0]
		if top.at > e.stopAt {
			break
		}
		e.pop()
		e.now = top.at
		e.fired++
		top.h.Fire(top.at, top.arg)
	}
	if e.stopAt != Never && e.now < e.stopAt {
		e.now = e.stopAt
	}
}

// Step delivers the next event, if any, and reports whether it did.
func (e *Engine) Step() bool {
	if len(e.heap) == 0 {
		return false
	}
	top := e.heap[0]
	e.pop()
	e.now = top.at
	e.fired++
	top.h.Fire(top.at, top.arg)
	return true
}

func (e *Engine) pop() {
	n := len(e.heap) - 1
	e.heap[0] = e.heap[n]
	e.heap[n] = event{}
	e.heap = e.heap[:n]
	if n > 0 {
		e.down(0)
	}
}

func (e *Engine) up(i int) {
	h := e.heap
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (e *Engine) down(i int) {
	h := e.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
