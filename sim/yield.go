package sim

import (
	"errors"
	"iter"
)

// A step that yields (Work.Yield) ends where it is and goes on in the next
// step of the same class, which resumes it. This lets a model make a point
// in the middle of a long step, where what other CPUs did before that time
// must be visible, into a step boundary: the engine runs every event before
// it first. The steps of a CPU with yields enabled (SetYield) run on one
// coroutine per class; a yielded step costs nothing extra.

// stepper runs the steps of one class of a CPU on a coroutine.
type stepper struct {
	next func() (bool, bool)
	stop func()
	// task and now are the step to start; w is the CPU's Work.
	task    Task
	now     Time
	w       *Work
	eng     *Engine
	yield   func(bool) bool
	pause   func() // s.suspend, bound once
	running bool   // a step is suspended in the middle
}

// SetYield makes Work.Yield effective in the softirq and thread steps of
// this CPU (without it Yield does nothing). Close releases the coroutines.
func (c *CPU) SetYield(on bool) { c.yieldOn = on }

// Finish runs the rest of every suspended step at once, without yields and
// without charging it (it lies past the end of the run), so that what the
// step was carrying (packets of a list half delivered) reaches its
// destination and is counted. The CPU must not run afterwards.
func (c *CPU) Finish() {
	for _, s := range c.steppers {
		if s == nil || !s.running {
			continue
		}
		c.work.reset(c.eng.now)
		c.inTask = true
		s.next() // c.work.yield is nil: further Yields do nothing
		c.inTask = false
		s.running = false
	}
}

// Close stops the CPU's coroutines (a step still suspended is abandoned).
// The CPU must not run afterwards.
func (c *CPU) Close() {
	for i, s := range c.steppers {
		if s != nil {
			s.stop()
			c.steppers[i] = nil
		}
	}
}

// Yield ends the step here when its CPU has yields enabled: the rest of the
// task's Run continues in the next step of the same class, which starts
// when this one ends. Hard-IRQ steps never yield. A thread that yields keeps
// its CPU: it is not switched out at the boundary (softirq work in
// ksoftirqd or a kthread runs with bottom halves and preemption off).
func (w *Work) Yield() {
	if w.yield != nil {
		w.yield()
	}
}

// runStep runs (or resumes) the step of class cl; resuming(cl) then
// reports whether it yielded.
func (c *CPU) runStep(cl Class, t Task, now Time) {
	if !c.yieldOn || cl == HardIRQ {
		t.Run(now, &c.work)
		return
	}
	s := c.steppers[cl]
	if s == nil {
		s = &stepper{w: &c.work, eng: c.eng}
		s.pause = s.suspend
		s.next, s.stop = iter.Pull(s.loop)
		c.steppers[cl] = s
	}
	if !s.running {
		s.task, s.now = t, now
	}
	c.work.yield = s.pause
	s.running, _ = s.next()
	c.work.yield = nil
}

// resuming reports whether the step of class cl is suspended in the
// middle: the next step of the class resumes it.
func (c *CPU) resuming(cl Class) bool {
	s := c.steppers[cl]
	return s != nil && s.running
}

// loop is the coroutine: it runs one step per resume, yielding true when
// the step suspends in the middle and false when it ends.
func (s *stepper) loop(yield func(bool) bool) {
	defer func() {
		if r := recover(); r != nil && r != errStopped {
			panic(r)
		}
	}()
	s.yield = yield
	for {
		s.task.Run(s.now, s.w)
		if !yield(false) {
			return
		}
	}
}

// suspend yields unless no event is due by the step's clock: then nothing
// can happen in between, and the step goes on as if it had yielded.
func (s *stepper) suspend() {
	if s.eng.NextAt() > s.w.Now() {
		return
	}
	if !s.yield(true) {
		panic(errStopped)
	}
}

var errStopped = errors.New("sim: CPU closed with a step suspended")
