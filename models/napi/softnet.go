package napi

import (
	"github.com/rxsim/rxsim/sim"
	"strconv"
)

// Costs are the costs the NAPI layer charges (from the hw cost profile).
type Costs struct {
	fnRxAction, fnPoll, fnComplete, fnTick sim.FuncID
	rxAction, poll, complete, tick         sim.Time
}

// NewCosts registers the NAPI functions in funcs with their per-call costs
// in ns: net_rx_action, __napi_poll, napi_complete_done, the timer tick.
func NewCosts(funcs *sim.Funcs, rxAction, poll, complete, tick float64) *Costs {
	return &Costs{
		fnRxAction: funcs.ID("net_rx_action"), rxAction: sim.Time(rxAction),
		fnPoll: funcs.ID("napi_poll"), poll: sim.Time(poll),
		fnComplete: funcs.ID("napi_complete_done"), complete: sim.Time(complete),
		fnTick: funcs.ID("timer_tick"), tick: sim.Time(tick),
	}
}

// SoftnetConfig configures one CPU's softnet_data and softirq behaviour.
type SoftnetConfig struct {
	Budget int
	// BudgetUsecs is netdev_budget_usecs; 0 = 2 jiffies.
	BudgetUsecs int
	HZ          int
	// KsoftirqdDefer is the v4.9-v6.4 behaviour: while ksoftirqd is runnable,
	// softirqs raised at IRQ exit are left to it.
	KsoftirqdDefer bool
	// Tick runs the scheduler tick (a hard IRQ at HZ) while the CPU is busy.
	Tick bool
}

// Softnet is one CPU's struct softnet_data with its NET_RX softirq and
// ksoftirqd.
type Softnet struct {
	cfg   SoftnetConfig
	cpu   *sim.CPU
	costs *Costs
	hz    int
	jiffy sim.Time

	// list is sd->poll_list; during an invocation, local is net_rx_action's
	// private list (spliced from list at the start) and repoll holds the
	// NAPIs that used their full weight. New schedules go to list.
	list   []*NAPI
	local  []*NAPI
	repoll []*NAPI

	// current net_rx_action invocation
	inAction   bool
	inThreaded bool // a threaded NAPI poll of this softnet is running
	budget     int
	timeLimit  int64 // jiffies
	cur        *NAPI
	curWork    int
	curRepoll  bool
	endOfRound bool
	// __do_softirq restart state
	doActive   bool
	doStart    sim.Time
	restarts   int
	wakeAtDo   sim.Time
	ksoftirqd  *sim.Thread
	inKsoft    bool
	ksoftState *ksoftTask

	endHooks []func(w *sim.Work)
	defers   *deferList

	// Defer counts the skb frees other CPUs deferred to this one.
	Defer DeferStats

	// Stats (softnet_stat and more).
	Processed   uint64 // packets handed to the stack on this CPU (updated by the stack)
	Dropped     uint64 // backlog drops (updated by the backlog model)
	TimeSqueeze uint64
	ReceivedRPS uint64
	RxActions   uint64
	KsoftWakes  uint64
	Ticks       uint64
	tickGen     int64
}

// NewSoftnet returns the softnet of cpu and installs its softirq handler.
func NewSoftnet(cfg SoftnetConfig, cpu *sim.CPU, costs *Costs) *Softnet {
	if cfg.Budget <= 0 {
		cfg.Budget = NetdevBudget
	}
	if cfg.HZ <= 0 {
		cfg.HZ = 1000
	}
	s := &Softnet{cfg: cfg, cpu: cpu, costs: costs, hz: cfg.HZ, jiffy: sim.Second / sim.Time(cfg.HZ)}
	cpu.SetSoftirq(&softirqTask{s: s})
	s.ksoftState = &ksoftTask{s: s}
	s.ksoftirqd = cpu.NewThread("ksoftirqd/"+strconv.Itoa(cpu.ID), "ksoftirqd", s.ksoftState)
	if cfg.Tick {
		cpu.Engine().Schedule(s.jiffy, (*tickTimer)(s), 0)
	}
	return s
}

// CPU returns the softnet's CPU.
func (s *Softnet) CPU() *sim.CPU { return s.cpu }

// Ksoftirqd returns the CPU's ksoftirqd thread.
func (s *Softnet) Ksoftirqd() *sim.Thread { return s.ksoftirqd }

// Jiffies returns the jiffy count at t.
func (s *Softnet) Jiffies(t sim.Time) int64 { return int64(t / s.jiffy) }

// Jiffy returns the length of a jiffy.
func (s *Softnet) Jiffy() sim.Time { return s.jiffy }

func (s *Softnet) jiffyStart(t sim.Time) sim.Time { return t - t%s.jiffy }

// maxSoftirqJiffies is MAX_SOFTIRQ_TIME = msecs_to_jiffies(2) (rounded up).
func (s *Softnet) maxSoftirqJiffies() int64 {
	return int64((MaxSoftirqTimeMS*s.hz + 999) / 1000)
}

// AddEndHook registers work done at the end of every net_rx_action (and
// after each threaded NAPI poll): net_rps_action_and_irq_enable sends RPS
// IPIs there.
func (s *Softnet) AddEndHook(f func(w *sim.Work)) { s.endHooks = append(s.endHooks, f) }

func (s *Softnet) runEndHooks(w *sim.Work) {
	for _, f := range s.endHooks {
		f(w)
	}
}

// InRxAction reports whether net_rx_action or a threaded NAPI poll is
// running for this softnet (sd->in_net_rx_action ||
// sd->in_napi_threaded_poll): napi_schedule_rps then leaves the RPS IPIs to
// its end instead of raising NET_RX.
func (s *Softnet) InRxAction() bool { return s.inAction || s.inThreaded }

// PollListLen returns the number of NAPIs on the poll list.
func (s *Softnet) PollListLen() int { return len(s.list) }

// add is ____napi_schedule: append to the poll list and raise NET_RX.
func (s *Softnet) add(n *NAPI) {
	if !n.onList {
		n.onList = true
		s.list = append(s.list, n)
	}
	s.cpu.RaiseSoftirq()
}

func (s *Softnet) pop() *NAPI {
	n := s.local[0]
	copy(s.local, s.local[1:])
	s.local = s.local[:len(s.local)-1]
	n.onList = false
	return n
}

// splice moves sd->poll_list to the invocation's local list
// (list_splice_init(&sd->poll_list, &list)).
func (s *Softnet) splice() {
	s.local = append(s.local, s.list...)
	clear(s.list)
	s.list = s.list[:0]
}

// more is the top of net_rx_action's loop: poll on while the local list
// has entries; when it is empty and nothing waits for a repoll, take the
// NAPIs scheduled meanwhile ("goto start"); otherwise stop. A repolled
// NAPI is thus polled at most once per invocation (net/core/dev.c since
// v3.19, kernel-rx-path.md §5.2).
func (s *Softnet) more() bool {
	if len(s.local) > 0 {
		return true
	}
	if len(s.repoll) == 0 && len(s.list) > 0 {
		s.splice()
		return true
	}
	return false
}

// step runs one unit of net_rx_action: the start of an invocation (with
// its first poll) or the next poll. s.endOfRound reports whether the
// invocation ended.
func (s *Softnet) step(w *sim.Work) {
	if !s.inAction {
		s.inAction = true
		s.RxActions++
		s.budget = s.cfg.Budget
		usecs := s.cfg.BudgetUsecs
		lim := int64(2)
		if usecs > 0 {
			lim = int64((sim.Time(usecs)*sim.Microsecond + s.jiffy - 1) / s.jiffy)
		}
		s.timeLimit = s.Jiffies(w.Now()) + lim
		w.Add(s.costs.fnRxAction, s.costs.rxAction)
		s.splice()
	}
	s.cur = nil
	s.endOfRound = true
	s.flushDeferred(w) // skb_defer_free_flush at the top of the loop
	if s.more() {
		n := s.pop()
		if n.sched {
			work, repoll := n.poll(w)
			s.budget -= work
			if repoll {
				s.repoll = append(s.repoll, n)
				n.onList = true
			}
		}
		// budget <= 0 || time_after_eq(jiffies, time_limit): time_squeeze++
		// and break, whether or not anything is left.
		if s.budget <= 0 || s.Jiffies(w.Now()) >= s.timeLimit {
			s.TimeSqueeze++
		} else {
			s.endOfRound = !s.more()
		}
	}
	if s.endOfRound {
		s.runEndHooks(w)
	}
}

// finish ends an invocation: sd->poll_list becomes the rest of the local
// list, then the NAPIs scheduled meanwhile, then the repolled ones
// (list_splice_tail_init + list_splice_tail + list_splice); it reports
// whether NET_RX is raised again.
func (s *Softnet) finish() bool {
	s.inAction = false
	s.local = append(s.local, s.list...)
	s.local = append(s.local, s.repoll...)
	clear(s.repoll)
	s.repoll = s.repoll[:0]
	clear(s.list)
	s.list, s.local = s.local, s.list[:0]
	return len(s.list) > 0
}

// softirqTask is the softirq class of the CPU: __do_softirq running NET_RX.
type softirqTask struct {
	s    *Softnet
	idle bool
}

// Run implements sim.Task.
func (t *softirqTask) Run(now sim.Time, w *sim.Work) {
	s := t.s
	t.idle = false
	if !s.doActive {
		// invoke_softirq: with "let ksoftirqd do its job" (v4.9-v6.4) softirqs
		// wait while ksoftirqd is runnable; ksoftirqd inside __do_softirq has
		// bottom halves disabled, so nothing runs inline then either.
		if s.inKsoft || s.cfg.KsoftirqdDefer && s.ksoftirqd.Runnable() {
			t.idle = true
			return
		}
		s.doActive = true
		s.doStart = now
		s.restarts = 0
		s.wakeAtDo = s.cpu.LastWake()
	}
	s.step(w)
}

// Done implements sim.Task: continue the invocation; at its end apply the
// __do_softirq restart rule, handing off to ksoftirqd when it is exceeded.
func (t *softirqTask) Done(now sim.Time) bool {
	s := t.s
	if t.idle {
		return false
	}
	if !s.endOfRound {
		return true
	}
	if !s.finish() {
		s.doActive = false
		return false
	}
	// NET_RX pending again: restart while within MAX_SOFTIRQ_TIME and
	// MAX_SOFTIRQ_RESTART and no woken thread waits to run (need_resched).
	s.restarts++
	needResched := s.cpu.LastWake() > s.wakeAtDo && s.cpu.RunnableThreads() > 0
	// time_before(jiffies, end), end = jiffies at the start +
	// MAX_SOFTIRQ_TIME: the window is counted in jiffies, as in the kernel.
	if s.Jiffies(now) < s.Jiffies(s.doStart)+s.maxSoftirqJiffies() && s.restarts < MaxSoftirqRestart && !needResched {
		return true
	}
	s.doActive = false
	s.KsoftWakes++
	s.cpu.Wake(s.ksoftirqd)
	return false
}

// ksoftTask is ksoftirqd: run_ksoftirqd processes pending softirqs in
// thread context until none are pending.
type ksoftTask struct {
	s    *Softnet
	busy bool
}

// Run implements sim.Task.
func (k *ksoftTask) Run(now sim.Time, w *sim.Work) {
	s := k.s
	k.busy = false
	if s.inAction && !s.inKsoft {
		return // the softirq class holds the current invocation
	}
	if !s.inAction && len(s.list) == 0 {
		return
	}
	s.inKsoft = true
	k.busy = true
	s.step(w)
}

// Atomic implements sim.Atomic: inside a net_rx_action invocation
// ksoftirqd runs with bottom halves disabled (__do_softirq), so a thread
// woken meanwhile gets the CPU only when the invocation ends; the
// scheduler sees ksoftirqd's need_resched between invocations, where
// __do_softirq stops restarting and run_ksoftirqd calls cond_resched.
func (k *ksoftTask) Atomic() bool { return k.busy && !k.s.endOfRound }

// Done implements sim.Task.
func (k *ksoftTask) Done(now sim.Time) bool {
	s := k.s
	if !k.busy {
		return len(s.list) > 0 && !s.inAction
	}
	if !s.endOfRound {
		return true
	}
	s.inKsoft = false
	return s.finish()
}

type tickTimer Softnet

// Fire implements sim.Handler: the scheduler tick, a hard IRQ on busy CPUs
// (NOHZ idle CPUs take none); softirqs pending at its exit run.
func (t *tickTimer) Fire(now sim.Time, _ int64) {
	s := (*Softnet)(t)
	if _, busy := s.cpu.Running(); busy {
		s.Ticks++
		s.cpu.RaiseIRQ((*tickIRQ)(s))
	}
	s.cpu.Engine().Schedule(now+s.jiffy, t, 0)
}

type tickIRQ Softnet

// Run implements sim.Task.
func (t *tickIRQ) Run(now sim.Time, w *sim.Work) {
	s := (*Softnet)(t)
	w.Add(s.costs.fnTick, s.costs.tick)
}

// Done implements sim.Task: at irq_exit, pending softirqs run.
func (t *tickIRQ) Done(now sim.Time) bool {
	s := (*Softnet)(t)
	if len(s.list) > 0 {
		s.cpu.RaiseSoftirq()
	}
	return false
}
