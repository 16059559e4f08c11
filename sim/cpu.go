package sim

import (
	"math/bits"
	"math/rand/v2"
)

// Class is a CPU execution class. Lower values have higher priority.
type Class uint8

// The execution classes, highest priority first.
const (
	HardIRQ     Class = iota // hard interrupt handlers: not preemptible
	SoftIRQ                  // softirq at IRQ exit or bh enable: preempts threads
	ThreadClass              // kernel and user threads under the fair scheduler
	numClasses
)

// String returns the class name used in reports (hardirq, softirq, thread).
func (c Class) String() string {
	switch c {
	case HardIRQ:
		return "hardirq"
	case SoftIRQ:
		return "softirq"
	}
	return "thread"
}

// Task is schedulable work: a hard-IRQ handler, the softirq context of a CPU,
// or the body of a thread. The CPU calls Run to start a step; the task does
// its work, charging every cost to w; the step lasts w.Total() plus the time
// taken by higher classes that preempt it. Done is called when the step ends
// and reports whether the task has more work (a thread stays runnable, the
// softirq stays pending); false puts a thread to sleep.
type Task interface {
	Run(now Time, w *Work)
	Done(now Time) bool
}

// Atomic is implemented by a thread task that cannot be switched out at
// the end of some of its steps: a kthread inside a section with bottom
// halves disabled, such as ksoftirqd inside net_rx_action, reaches a
// preemption point only when the section ends (cond_resched). A switch
// that falls due meanwhile waits for the first step after which Atomic
// reports false.
type Atomic interface {
	Atomic() bool
}

func atomicNow(t Task) bool {
	a, ok := t.(Atomic)
	return ok && a.Atomic()
}

// Thread is a schedulable thread bound to one CPU.
type Thread struct {
	Name  string // e.g. "ksoftirqd/0", "cpumap/1/map:1"
	Label string // accounting label: "ksoftirqd", "kthread", "napi", "app"
	task  Task
	cpu   *CPU
	id    int

	runnable bool
	queued   bool
	vruntime Time
	woken    bool // woken since it last ran
	// idleWoken: woken on an idle CPU, its next step pays the idle exit
	idleWoken bool
	// Wakeups counts transitions from sleeping to runnable.
	Wakeups uint64
	// Scheds counts the times the thread went to sleep or was switched out.
	Scheds uint64
}

// Runnable reports whether the thread is runnable (running or waiting to run).
func (t *Thread) Runnable() bool { return t.runnable }

// CPU returns the CPU the thread is bound to.
func (t *Thread) CPU() *CPU { return t.cpu }

// Sched is the fair scheduler's tunables.
type Sched struct {
	// BaseSlice is how long a thread runs before another runnable thread gets
	// the CPU (sysctl_sched_base_slice, 0.75 ms since v6.6 EEVDF; CFS's
	// sched_min_granularity has the same value).
	BaseSlice Time
	// WakeupCredit limits how far behind min_vruntime a waking thread is
	// placed (CFS place_entity; half the 6 ms sched_latency).
	WakeupCredit Time
	// WakeupGran is CFS's sysctl_sched_wakeup_granularity (1 ms): with
	// EEVDF off, a woken thread preempts only when it is more than this
	// behind the current one. 0 takes BaseSlice.
	WakeupGran Time
	// IRQTime is CONFIG_IRQ_TIME_ACCOUNTING: hard-IRQ and softirq time is
	// kept out of the interrupted thread's runtime. Without it (the Kconfig
	// default) update_rq_clock_task advances clock_task by the whole
	// interval, so update_curr charges the thread that was current for the
	// interrupts and softirqs that ran on top of it: its vruntime and its
	// slice grow by them.
	IRQTime bool
	// EEVDF selects v6.6+'s wake-up preemption (check_preempt_wakeup_fair
	// with pick_eevdf): the woken thread preempts at the current thread's
	// next preemption point when it is eligible (vruntime at or below the
	// queue's average) and the current one is not, whatever the gap. Off is
	// CFS's rule: only a woken thread more than WakeupGran behind the
	// current one preempts it.
	EEVDF bool
}

// DefaultSched returns the kernel's defaults as written in
// kernel/sched/fair.c, before the CPU-count scaling (ScaledSched).
func DefaultSched() Sched {
	return Sched{BaseSlice: 750 * Microsecond, WakeupCredit: 3 * Millisecond, WakeupGran: Millisecond, EEVDF: true}
}

// ScaledSched returns DefaultSched with the tunables scaled for ncpus
// CPUs as the kernel does at boot (update_sysctl with the default
// SCHED_TUNABLESCALING_LOG: factor 1 + ilog2(min(ncpus, 8))): base slice,
// wake-up granularity and the sleeper credit (half of sched_latency).
func ScaledSched(ncpus int) Sched {
	f := Time(bits.Len(uint(min(max(ncpus, 1), 8)))) // 1 + ilog2(n)
	s := DefaultSched()
	s.BaseSlice *= f
	s.WakeupCredit *= f
	s.WakeupGran *= f
	return s
}

type slot struct {
	task      Task
	thread    *Thread
	label     int
	remaining Time // valid while frozen
	endAt     Time // valid while running
	active    bool
	frozen    bool
}

// CPU is one simulated CPU.
type CPU struct {
	ID    int
	eng   *Engine
	acct  *Account
	sched Sched

	irqs     []Task
	soft     Task
	softPend bool
	softRun  bool
	softHit  bool // raised while its step ran

	threads  []*Thread
	runq     []*Thread
	current  *Thread
	sliceRun Time
	resched  bool
	lastWake Time

	slots [numClasses]slot
	run   Class // class of the running slot, numClasses when idle
	gen   int64
	work  Work
	// inTask is set while a task's Run or Done is called: work it raises
	// (RaiseIRQ, RaiseSoftirq, Wake) is dispatched when the call returns,
	// not inside it.
	inTask bool

	noise *CostNoise
	rng   *rand.Rand
	// idleWake delays wake-ups on an idle CPU (SetIdleWakeLatency);
	// idleCost is charged to the woken thread's first step (SetIdleWakeCost).
	idleWake Time
	idleCost Time
	idleFn   FuncID
	// debt is work owed to the next step of each class (Owe).
	debt [numClasses][]owed
	// switchCost is charged to switchFn when a thread step follows a step
	// of another thread (SetSwitchCost); lastThread ran the last one.
	switchCost Time
	switchFn   FuncID
	lastThread *Thread
	// Switches counts context switches between threads.
	Switches uint64
	// yieldOn enables Work.Yield; steppers run the softirq and thread
	// steps on coroutines then (yield.go).
	yieldOn  bool
	steppers [numClasses]*stepper
}

// owed is one charge of Owe.
type owed struct {
	fn FuncID
	d  Time
}

// Owe charges d to fn in the next step of class cl on this CPU. It is for
// work that belongs inside a step that has already been charged: a step is
// atomic, so what a model finds out afterwards that the step did (a reader
// on another CPU woken by data the step queued ahead of the reader's clock)
// is paid by the next step of the same class. CPU time is conserved; it is
// shifted by at most one step.
func (c *CPU) Owe(cl Class, fn FuncID, d Time) {
	if d > 0 {
		c.debt[cl] = append(c.debt[cl], owed{fn, d})
	}
}

// NewCPU returns CPU id driven by eng, charging its work to acct.
func NewCPU(id int, eng *Engine, acct *Account, sched Sched) *CPU {
	c := &CPU{ID: id, eng: eng, acct: acct, sched: sched, run: numClasses, lastWake: -1}
	return c
}

// SetNoise makes the CPU's costs vary: in every step, each kernel function
// charged is scaled by one factor drawn from rng with that function's cv
// and distribution (n). A nil n, or cv 0 everywhere, is exact.
func (c *CPU) SetNoise(n *CostNoise, rng *rand.Rand) { c.noise, c.rng = n, rng }

// Engine returns the engine driving the CPU.
func (c *CPU) Engine() *Engine { return c.eng }

// Account returns the CPU time accounting the CPU charges.
func (c *CPU) Account() *Account { return c.acct }

// SetSoftirq installs the task run in the softirq class (net_rx_action and
// the restart loop of __do_softirq).
func (c *CPU) SetSoftirq(t Task) { c.soft = t }

// NewThread creates a sleeping thread on this CPU.
func (c *CPU) NewThread(name, label string, t Task) *Thread {
	th := &Thread{Name: name, Label: label, task: t, cpu: c, id: len(c.threads)}
	c.threads = append(c.threads, th)
	c.acct.label(label)
	return th
}

// Threads returns the CPU's threads in creation order.
func (c *CPU) Threads() []*Thread { return c.threads }

// Running returns the class now executing, and false when the CPU is idle.
func (c *CPU) Running() (Class, bool) { return c.run, c.run < numClasses }

// InSoftirq reports whether the softirq class is executing or frozen under a hard IRQ.
func (c *CPU) InSoftirq() bool { return c.slots[SoftIRQ].active }

// SoftirqPending reports whether a softirq is raised and not yet completed.
func (c *CPU) SoftirqPending() bool { return c.softPend }

// LastWake returns the time a thread on this CPU was last woken (-1 if never).
func (c *CPU) LastWake() Time { return c.lastWake }

// RunnableThreads returns how many threads are runnable.
func (c *CPU) RunnableThreads() int {
	n := len(c.runq)
	if c.current != nil && c.current.runnable {
		n++
	}
	return n
}

// NeedResched reports, from inside a thread step that has charged pending
// so far, whether the fair scheduler will switch the thread out when the
// step ends (need_resched): another thread is runnable, and a wake-up
// preemption is due or the slice will be used up. A task that is Atomic
// and sees it can leave its section, so that the switch happens.
func (c *CPU) NeedResched(pending Time) bool {
	return len(c.runq) > 0 && (c.resched || c.sliceRun+pending >= c.sched.BaseSlice)
}

// RaiseIRQ queues a hard-IRQ handler; it runs before anything else.
func (c *CPU) RaiseIRQ(t Task) {
	c.irqs = append(c.irqs, t)
	c.dispatch(c.eng.now)
}

// RaiseSoftirq marks the softirq pending; it runs when no hard IRQ is
// running, preempting threads.
func (c *CPU) RaiseSoftirq() {
	if c.softRun {
		c.softHit = true
		return
	}
	if !c.softPend {
		c.softPend = true
		c.dispatch(c.eng.now)
	}
}

// Wake makes a sleeping thread runnable.
func (c *CPU) Wake(t *Thread) {
	if t.runnable {
		return
	}
	t.runnable = true
	t.woken = true
	t.Wakeups++
	c.lastWake = c.eng.now
	if (c.idleWake > 0 || c.idleCost > 0) && c.idle() {
		t.idleWoken = c.idleCost > 0
		if c.idleWake > 0 {
			// TASK_RUNNING at once (further wake-ups are no-ops), on the
			// CPU only when the halted vCPU runs again
			c.eng.Schedule(c.eng.now+c.idleWake, (*idleWaker)(t), 0)
			return
		}
	}
	c.place(t)
}

// SetIdleWakeLatency makes a thread woken while this CPU is idle wait d
// before it is queued: a halted vCPU of a virtual machine runs again only
// after the host has delivered the IPI and scheduled it. 0 (the default)
// is bare metal: the wake-up is immediate.
func (c *CPU) SetIdleWakeLatency(d Time) { c.idleWake = d }

// SetIdleWakeCost charges d to fn at the start of the first step of a
// thread woken while this CPU was idle (leaving the idle loop; in a VM the
// exit from HLT and the injected IPI). 0 (the default) charges nothing.
func (c *CPU) SetIdleWakeCost(d Time, fn FuncID) { c.idleCost, c.idleFn = d, fn }

// SetSwitchCost makes a thread's step that follows a step of another thread
// on this CPU pay d to fn: __schedule and __switch_to from one task to
// another. Returning to the same thread after interrupts or idle is not a
// switch (the idle exit has its own cost, SetIdleWakeCost).
func (c *CPU) SetSwitchCost(d Time, fn FuncID) { c.switchCost, c.switchFn = d, fn }

// idle reports whether nothing runs, is frozen or is ready on the CPU.
func (c *CPU) idle() bool { return !c.inTask && c.run >= numClasses && c.ready() == numClasses }

type idleWaker Thread

// Fire implements Handler: the woken thread reaches its CPU's run queue.
func (w *idleWaker) Fire(now Time, _ int64) {
	t := (*Thread)(w)
	if t.runnable && !t.queued && t.cpu.current != t {
		t.cpu.place(t)
	}
}

// place puts a woken thread on the run queue (CFS place_entity and
// wake-up preemption) and dispatches.
func (c *CPU) place(t *Thread) {
	if minV := c.minVruntime(); t.vruntime < minV-c.sched.WakeupCredit {
		t.vruntime = minV - c.sched.WakeupCredit
	}
	if cur := c.current; cur != nil && cur != t && cur.runnable {
		if c.sched.EEVDF {
			if avg := c.avgVruntime(t); t.vruntime <= avg && cur.vruntime > avg {
				c.resched = true
			}
		} else if t.vruntime+c.wakeupGran() < cur.vruntime {
			c.resched = true
		}
	}
	c.enqueue(t)
	c.dispatch(c.eng.now)
}

func (c *CPU) enqueue(t *Thread) {
	if !t.queued && t != c.current {
		t.queued = true
		c.runq = append(c.runq, t)
	}
}

func (c *CPU) wakeupGran() Time {
	if c.sched.WakeupGran > 0 {
		return c.sched.WakeupGran
	}
	return c.sched.BaseSlice
}

// avgVruntime is EEVDF's avg_vruntime with woken thread t queued: the mean
// vruntime of the current thread, the run queue and t (all nice 0).
func (c *CPU) avgVruntime(t *Thread) Time {
	sum, n := t.vruntime, Time(1)
	if c.current != nil && c.current.runnable {
		sum, n = sum+c.current.vruntime, n+1
	}
	for _, q := range c.runq {
		sum, n = sum+q.vruntime, n+1
	}
	return sum / n
}

func (c *CPU) minVruntime() Time {
	m := Never
	if c.current != nil && c.current.runnable {
		m = c.current.vruntime
	}
	for _, t := range c.runq {
		if t.vruntime < m {
			m = t.vruntime
		}
	}
	if m == Never {
		m = 0
		for _, t := range c.threads {
			if t.vruntime > m {
				m = t.vruntime
			}
		}
	}
	return m
}

// pickThread removes and returns the runnable thread with the least vruntime
// (ties: the lowest creation index).
func (c *CPU) pickThread() *Thread {
	best := -1
	for i, t := range c.runq {
		if best < 0 || t.vruntime < c.runq[best].vruntime ||
			(t.vruntime == c.runq[best].vruntime && t.id < c.runq[best].id) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	t := c.runq[best]
	c.runq = append(c.runq[:best], c.runq[best+1:]...)
	t.queued = false
	return t
}

// Fire implements Handler: the running step completes.
func (c *CPU) Fire(now Time, gen int64) {
	if gen != c.gen || c.run >= numClasses {
		return
	}
	cl := c.run
	s := &c.slots[cl]
	s.active = false
	c.run = numClasses
	c.inTask = true
	switch cl {
	case HardIRQ:
		s.task.Done(now)
	case SoftIRQ:
		c.softRun = false
		if c.resuming(SoftIRQ) {
			c.softPend = true // the rest of the step runs next
			break
		}
		more := s.task.Done(now)
		c.softPend = more || c.softHit
		c.softHit = false
	case ThreadClass:
		if c.resuming(ThreadClass) {
			break // the thread keeps the CPU for the rest of its step
		}
		t := s.thread
		if !t.task.Done(now) {
			t.runnable = false
			t.Scheds++
			c.current = nil
			c.sliceRun = 0
		} else if len(c.runq) > 0 && (c.resched || c.sliceRun >= c.sched.BaseSlice) && !atomicNow(t.task) {
			c.resched = false
			t.Scheds++
			c.enqueue2(t)
		}
	}
	c.inTask = false
	c.dispatch(now)
}

func (c *CPU) enqueue2(t *Thread) {
	c.current = nil
	c.sliceRun = 0
	t.queued = true
	c.runq = append(c.runq, t)
}

// dispatch makes the CPU run the highest-priority ready work.
func (c *CPU) dispatch(now Time) {
	if c.inTask {
		return // the caller dispatches when the task returns
	}
	want := c.ready()
	if c.run < numClasses {
		if want >= c.run {
			return
		}
		s := &c.slots[c.run]
		s.remaining = s.endAt - now
		s.frozen = true
		c.gen++
		c.run = numClasses
	}
	for cl := Class(0); cl < numClasses; cl++ {
		if c.slots[cl].frozen {
			if cl <= want {
				c.resume(cl, now)
				return
			}
		}
		if cl == want {
			c.start(cl, now)
			return
		}
	}
}

// ready returns the highest class with work, numClasses if none.
func (c *CPU) ready() Class {
	switch {
	case len(c.irqs) > 0 || c.slots[HardIRQ].frozen:
		return HardIRQ
	case c.softPend && c.soft != nil || c.slots[SoftIRQ].frozen:
		return SoftIRQ
	case c.current != nil || len(c.runq) > 0 || c.slots[ThreadClass].frozen:
		return ThreadClass
	}
	return numClasses
}

func (c *CPU) resume(cl Class, now Time) {
	s := &c.slots[cl]
	s.frozen = false
	s.endAt = now + s.remaining
	c.run = cl
	c.gen++
	c.eng.Schedule(s.endAt, c, c.gen)
}

// entryCharges adds to the step about to run what it pays on entry: work
// owed to its class (Owe), and for a thread the context switch from another
// thread and the idle exit.
func (c *CPU) entryCharges(cl Class, t *Thread) {
	for _, o := range c.debt[cl] {
		c.work.Add(o.fn, o.d)
	}
	c.debt[cl] = c.debt[cl][:0]
	if cl != ThreadClass {
		return
	}
	if c.lastThread != nil && c.lastThread != t {
		c.Switches++
		c.work.Add(c.switchFn, c.switchCost)
	}
	c.lastThread = t
	if t.idleWoken {
		t.idleWoken = false
		c.work.Add(c.idleFn, c.idleCost)
	}
}

func (c *CPU) start(cl Class, now Time) {
	s := &c.slots[cl]
	var label int
	switch cl {
	case HardIRQ:
		s.task = c.irqs[0]
		copy(c.irqs, c.irqs[1:])
		c.irqs = c.irqs[:len(c.irqs)-1]
		s.thread = nil
		label = labelHardIRQ
	case SoftIRQ:
		s.task = c.soft
		s.thread = nil
		c.softRun = true
		if !c.resuming(SoftIRQ) {
			c.softHit = false
		}
		label = labelSoftIRQ
	case ThreadClass:
		if c.current == nil {
			c.current = c.pickThread()
			c.sliceRun = 0
		}
		t := c.current
		t.woken = false
		s.task = t.task
		s.thread = t
		label = c.acct.label(t.Label)
	}
	c.work.reset(now)
	c.work.class = cl
	c.entryCharges(cl, s.thread)
	c.inTask = true
	c.runStep(cl, s.task, now)
	c.inTask = false
	if c.noise != nil && c.work.total > 0 {
		c.work.scaleEach(c.noise, c.rng)
	}
	d := c.work.total
	if cl == ThreadClass {
		s.thread.vruntime += d
		c.sliceRun += d
	} else if c.current != nil && c.current.runnable && !c.sched.IRQTime {
		// update_curr: clock_task includes the interrupt time
		c.current.vruntime += d
		c.sliceRun += d
	}
	c.acct.charge(c.ID, label, &c.work, now)
	s.active = true
	s.endAt = now + d
	c.run = cl
	c.gen++
	c.eng.Schedule(s.endAt, c, c.gen)
	// Work raised by Run: a higher class preempts the step just started.
	c.dispatch(now)
}
