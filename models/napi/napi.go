package napi

import (
	"github.com/rxsim/rxsim/sim"
)

// Defaults from net/core/hotdata.c and include/linux/netdevice.h (kernel-rx-path.md §5.1).
const (
	NAPIPollWeight    = 64   // NAPI_POLL_WEIGHT
	NetdevBudget      = 300  // net.core.netdev_budget
	MaxSoftirqRestart = 10   // MAX_SOFTIRQ_RESTART (kernel/softirq.c)
	MaxSoftirqTimeMS  = 2    // MAX_SOFTIRQ_TIME = msecs_to_jiffies(2)
	NetdevMaxBacklog  = 1000 // net.core.netdev_max_backlog
)

// Poller is a driver's NAPI poll function (ixgbe_poll, i40e_napi_poll,
// process_backlog, veth_poll). It processes up to budget packets, charging
// w, and returns the work done. When it returns less than budget it must
// call NAPI.CompleteDone (as drivers do) before returning.
type Poller interface {
	Poll(n *NAPI, w *sim.Work, budget int) int
}

// GROFlusher is the GRO state of a NAPI (napi->gro): flushed at
// napi_complete_done and on repoll. Nil when GRO is not modelled.
type GROFlusher interface {
	// FlushAll flushes every held packet and delivers the gro_normal list
	// (napi_complete_done without timeout).
	FlushAll(w *sim.Work)
	// FlushOld flushes packets held since before the current jiffy and
	// delivers the gro_normal list (repoll: gro_flush_normal(gro, HZ >= 1000)).
	FlushOld(w *sim.Work, jiffy sim.Time, all bool)
	// Held reports whether packets are held (timeout applies only then).
	Held() bool
	// NormalList delivers the gro_normal list alone (gro_normal_list:
	// napi_busy_loop after each poll, busy_poll_stop before a reschedule).
	NormalList(w *sim.Work)
}

// Config is a NAPI instance's configuration.
type Config struct {
	Name   string
	Weight int
	// GROFlushTimeout (ns) and DeferHardIRQs are the per-device sysfs knobs.
	GROFlushTimeout sim.Time
	DeferHardIRQs   int
	// TimerJitter delays the napi_watchdog hrtimer's expiry (nil = exact).
	TimerJitter *sim.Jitter
}

// NAPI is one struct napi_struct.
type NAPI struct {
	cfg     Config
	poller  Poller
	GRO     GROFlusher
	softnet *Softnet
	// home is the softnet of the NAPI's IRQ CPU; softnet differs from it
	// while a busy poller's reschedule has put the NAPI on the poller's
	// CPU (busy_poll_stop's __napi_schedule), until it completes.
	home *Softnet
	// OnPollCPU, if set, is told the CPU that runs the NAPI's polls when
	// it changes (a busy poller on another CPU, and back): the driver's
	// skb build and XDP run on the polling CPU.
	OnPollCPU func(cpu int)
	pollCPU   int
	// pollSN is the softnet of the CPU that runs (or last ran) the polls:
	// a __napi_schedule from inside a poll, and the watchdog hrtimer the
	// poll arms (HRTIMER_MODE_REL_PINNED), act on that CPU; timerSN is
	// where the armed watchdog fires.
	pollSN, timerSN *Softnet
	thread          *sim.Thread
	costs           *Costs

	sched  bool
	missed bool
	// inBusy is NAPI_STATE_IN_BUSY_POLL: a busy poller owns the NAPI
	// (BusyLoop), and napi_complete_done leaves it scheduled.
	inBusy bool
	// preferBusy is NAPI_STATE_PREFER_BUSY_POLL: a busy poller with
	// SO_PREFER_BUSY_POLL found the NAPI scheduled; its softirq poll
	// completes it after a full poll instead of repolling, so the poller
	// can take it (cleared when the NAPI completes).
	preferBusy bool
	// onList is true while the NAPI is on a poll list.
	onList bool

	deferCount int
	timerGen   int64
	timerArmed bool

	// Stats.
	Polls      uint64
	Work       uint64
	FullPolls  uint64
	Completes  uint64
	Schedules  uint64
	TimerFires uint64
	// BusyPolls and BusyPackets count napi->poll calls by busy pollers
	// and the packets they took (LINUX_MIB_BUSYPOLLRXPACKETS).
	BusyPolls   uint64
	BusyPackets uint64
}

// New returns a NAPI polled by p, running in the softirq of sn (or in its
// own thread after SetThreaded).
func New(cfg Config, p Poller, sn *Softnet) *NAPI {
	if cfg.Weight <= 0 {
		cfg.Weight = NAPIPollWeight
	}
	return &NAPI{cfg: cfg, poller: p, softnet: sn, home: sn, costs: sn.costs, pollCPU: sn.cpu.ID, pollSN: sn, timerSN: sn}
}

// setPoller makes sn's CPU the one that polls the NAPI.
func (n *NAPI) setPoller(sn *Softnet) {
	n.pollSN = sn
	n.setPollCPU(sn.cpu.ID)
}

// setPollCPU records the CPU that runs the polls and tells OnPollCPU.
func (n *NAPI) setPollCPU(cpu int) {
	if cpu == n.pollCPU {
		return
	}
	n.pollCPU = cpu
	if n.OnPollCPU != nil {
		n.OnPollCPU(cpu)
	}
}

// release is the end of a scheduled period (SCHED cleared): the NAPI goes
// back to its IRQ CPU's softnet.
func (n *NAPI) release() {
	n.sched, n.preferBusy = false, false
	n.goHome()
}

// goHome makes the NAPI's own CPU (its softnet, or its thread's CPU) the
// one that schedules and polls it again.
func (n *NAPI) goHome() {
	n.softnet, n.pollSN = n.home, n.home
	n.setPollCPU(n.homeCPU())
}

// homeCPU is the CPU that polls the NAPI when no busy poller has it: its
// thread's, or its IRQ CPU's softirq.
func (n *NAPI) homeCPU() int {
	if n.thread != nil {
		return n.thread.CPU().ID
	}
	return n.home.cpu.ID
}

// Name returns the NAPI's name.
func (n *NAPI) Name() string { return n.cfg.Name }

// Weight returns the poll weight.
func (n *NAPI) Weight() int { return n.cfg.Weight }

// Softnet returns the softnet the NAPI is scheduled on.
func (n *NAPI) Softnet() *Softnet { return n.softnet }

// PollCPU returns the CPU that runs the NAPI's polls: its IRQ CPU's
// softirq, its thread's CPU, or a busy poller's (BusyLoop).
func (n *NAPI) PollCPU() int { return n.pollCPU }

// PollSoftnet returns the softnet of the CPU that runs (or last ran) the
// NAPI's poll: a driver's __napi_schedule from inside its poll (veth_poll's
// re-check of the ring) goes there.
func (n *NAPI) PollSoftnet() *Softnet { return n.pollSN }

// Scheduled reports NAPI_STATE_SCHED.
func (n *NAPI) Scheduled() bool { return n.sched }

// Thread returns the NAPI kthread (nil unless threaded).
func (n *NAPI) Thread() *sim.Thread { return n.thread }

// SetThreaded gives the NAPI its own kthread "napi/<name>" on cpu
// (/sys/class/net/DEV/threaded = 1).
func (n *NAPI) SetThreaded(cpu *sim.CPU) {
	n.thread = cpu.NewThread("napi/"+n.cfg.Name, "napi", &threadedPoll{n: n})
	n.pollCPU = cpu.ID
}

// Schedule is napi_schedule: set SCHED and put the NAPI on the poll list of
// its softnet (raising NET_RX), or wake its thread; if already scheduled,
// set MISSED so the poll runs again.
func (n *NAPI) Schedule() { n.ScheduleOn(n.home) }

// ScheduleOn is napi_schedule run on sn's CPU: __napi_schedule puts the
// NAPI on the poll list of the CPU it runs on (this_cpu's softnet_data),
// which then polls it until it completes. The IRQ and veth's transmit
// schedule on the NAPI's own CPU (Schedule); a poll that reschedules
// itself, on the CPU that polled.
func (n *NAPI) ScheduleOn(sn *Softnet) {
	if n.sched {
		n.missed = true
		return
	}
	n.sched = true
	n.Schedules++
	if n.thread != nil {
		n.thread.CPU().Wake(n.thread)
		return
	}
	if sn != n.home {
		n.softnet = sn
		n.setPoller(sn)
	}
	n.softnet.add(n)
}

// CompleteDone is napi_complete_done(n, work): returns false when the driver
// must not re-enable its IRQ (deferred hard IRQs with gro_flush_timeout, or
// MISSED set so the NAPI was rescheduled).
func (n *NAPI) CompleteDone(w *sim.Work, work int) bool {
	if n.inBusy {
		return false // the busy poller's busy_poll_stop completes it
	}
	w.Add(n.costs.fnComplete, n.costs.complete)
	n.Completes++
	var timeout sim.Time
	if work > 0 {
		if n.GRO != nil && n.GRO.Held() {
			timeout = n.cfg.GROFlushTimeout
		}
		n.deferCount = n.cfg.DeferHardIRQs
	}
	ret := true
	if n.deferCount > 0 {
		n.deferCount--
		timeout = n.cfg.GROFlushTimeout
		if timeout > 0 {
			ret = false
		}
	}
	if n.GRO != nil {
		if timeout > 0 {
			n.GRO.FlushOld(w, n.softnet.jiffyStart(w.Now()), false)
		} else {
			n.GRO.FlushAll(w)
		}
	}
	here := n.pollSN // the CPU running this poll
	n.release()
	if n.missed {
		n.missed = false
		n.ScheduleOn(here)
		return false
	}
	if timeout > 0 {
		n.armTimer(w.Now()+timeout, here)
	}
	return ret
}

// armTimer starts the napi_watchdog hrtimer on sn's CPU (pinned: it fires
// where it was armed).
func (n *NAPI) armTimer(at sim.Time, sn *Softnet) {
	n.timerGen++
	n.timerArmed = true
	n.timerSN = sn
	n.softnet.cpu.Engine().Schedule(at+n.cfg.TimerJitter.Delay(), (*napiTimer)(n), n.timerGen)
}

type napiTimer NAPI

// Fire implements sim.Handler: napi_watchdog schedules the NAPI with the
// device IRQ still masked.
func (t *napiTimer) Fire(now sim.Time, gen int64) {
	n := (*NAPI)(t)
	if gen != n.timerGen || !n.timerArmed {
		return
	}
	n.timerArmed = false
	n.TimerFires++
	if n.sched {
		return // napi_watchdog's test_and_set_bit(SCHED) fails: a busy poller (or the softirq) has it
	}
	n.preferBusy = false
	n.ScheduleOn(n.timerSN)
}

// poll runs one __napi_poll; it returns the work done and whether the NAPI
// must be repolled (work == weight).
func (n *NAPI) poll(w *sim.Work) (int, bool) {
	w.Add(n.costs.fnPoll, n.costs.poll)
	n.timerArmed = false // a poll supersedes a pending watchdog (hrtimer_cancel in napi_schedule_prep paths)
	work := n.poller.Poll(n, w, n.cfg.Weight)
	n.Polls++
	n.Work += uint64(work)
	if work < n.cfg.Weight {
		return work, false
	}
	n.FullPolls++
	if n.preferBusy {
		// __napi_poll: more work, but busy polling is preferred: complete
		// (the deferral keeps the IRQ masked and arms the watchdog), or
		// schedule again when no timeout is set
		if n.CompleteDone(w, work) {
			n.Schedule()
		}
		return work, false
	}
	if n.GRO != nil {
		n.GRO.FlushOld(w, n.softnet.jiffyStart(w.Now()), n.softnet.hz < 1000)
	}
	return work, true
}

type threadedPoll struct {
	n    *NAPI
	more bool
}

// Run implements sim.Task: one iteration of napi_threaded_poll_loop.
func (t *threadedPoll) Run(now sim.Time, w *sim.Work) {
	t.more = false
	if !t.n.sched {
		return
	}
	t.n.softnet.inThreaded = true
	_, repoll := t.n.poll(w)
	t.n.softnet.runEndHooks(w)
	// skb_defer_free_flush after the RPS IPIs, of this CPU's list: the
	// model reaches it only when the NAPI's softnet is the thread's CPU's
	// (a thread placed elsewhere leaves that CPU's list to its own
	// net_rx_action and to the kick IPIs)
	if t.n.thread.CPU() == t.n.softnet.cpu {
		t.n.softnet.flushDeferred(w)
	}
	t.n.softnet.inThreaded = false
	t.more = repoll
}

// Done implements sim.Task: poll again after a full poll, else sleep unless
// rescheduled.
func (t *threadedPoll) Done(now sim.Time) bool { return t.more || t.n.sched }
