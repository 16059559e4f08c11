package modeltest

import (
	"fmt"
	"testing"

	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// NAPICosts are the per-call costs (ns) of the NAPI layer in a harness.
type NAPICosts struct {
	RxAction, Poll, Complete, Tick float64
}

// Config configures a Harness.
type Config struct {
	CPUs    int
	Softnet napi.SoftnetConfig
	NAPI    NAPICosts
	// Sched is the CPUs' fair scheduler (nil: sim.DefaultSched).
	Sched *sim.Sched
}

// Harness is an engine with CPUs, their softnet_data and a packet ledger,
// to which tests add NIC RX queues.
type Harness struct {
	Eng     *sim.Engine
	Acct    *sim.Account
	Funcs   *sim.Funcs
	CPUs    []*sim.CPU
	Softnet []*napi.Softnet
	Costs   *napi.Costs
	Led     pkt.Ledger
	Queues  []*nic.Queue
	Feeds   []*Feed
	// ITRs are the queues' interrupt moderation states, by queue.
	ITRs []*nic.ITR
}

// New returns a harness with cfg.CPUs CPUs (at least 1) and no noise.
func New(cfg Config) *Harness {
	n := max(cfg.CPUs, 1)
	h := &Harness{Eng: sim.NewEngine(64), Acct: sim.NewAccount(n), Funcs: sim.NewFuncs()}
	h.Costs = napi.NewCosts(h.Funcs, cfg.NAPI.RxAction, cfg.NAPI.Poll, cfg.NAPI.Complete, cfg.NAPI.Tick)
	sched := sim.DefaultSched()
	if cfg.Sched != nil {
		sched = *cfg.Sched
	}
	for i := 0; i < n; i++ {
		c := sim.NewCPU(i, h.Eng, h.Acct, sched)
		h.CPUs = append(h.CPUs, c)
		h.Softnet = append(h.Softnet, napi.NewSoftnet(cfg.Softnet, c, h.Costs))
	}
	return h
}

// QueueConfig describes one RX queue added to a harness.
type QueueConfig struct {
	CPU  int // IRQ (and softirq) CPU
	Pkts []pkt.Packet
	// Feed, if set, feeds the ring instead of Pkts (e.g. an RSS demux
	// queue); it is not listed in Harness.Feeds.
	Feed     nic.Feed
	RingSize int // default 512
	// RefillBatch defaults to 16 (ixgbe).
	RefillBatch int
	Driver      string // default ixgbe
	ITRUsecs    int    // fixed ITR (or start value when Adaptive)
	Adaptive    bool
	Gbps        float64 // default 10
	MaxPPS      float64
	Costs       nic.Costs
	// Prog is the XDP program (nil: every packet goes to the stack, which
	// is not modelled: delivered as "stack").
	Prog     *xdp.Program
	XDPCosts xdp.Costs
	NAPI     napi.Config
	// ThreadCPU >= 0 with Threaded makes the NAPI threaded on that CPU.
	Threaded  bool
	ThreadCPU int
}

// AddQueue builds a queue fed by qc.Pkts and returns it; call Start (or
// Harness.Start) to enable its interrupt.
func (h *Harness) AddQueue(qc QueueConfig) *nic.Queue {
	if qc.RingSize == 0 {
		qc.RingSize = 512
	}
	if qc.RefillBatch == 0 {
		qc.RefillBatch = 16
	}
	if qc.Driver == "" {
		qc.Driver = "ixgbe"
	}
	if qc.Gbps == 0 {
		qc.Gbps = 10
	}
	i := len(h.Queues)
	f := NewFeed(qc.Pkts)
	var feed nic.Feed = f
	if qc.Feed != nil {
		feed = qc.Feed
	}
	ring := nic.NewRxRing(qc.RingSize, feed, &h.Led, qc.MaxPPS)
	hook := xdp.NewHook(qc.Prog, qc.CPU, qc.XDPCosts, &h.Led, h.Funcs)
	itr := nic.NewITR(qc.Driver, qc.Adaptive, qc.ITRUsecs, qc.Gbps)
	q := nic.NewQueue(nic.QueueConfig{Index: i, Driver: qc.Driver, RefillBatch: qc.RefillBatch, ITR: itr},
		ring, hook, h.CPUs[qc.CPU], qc.Costs, h.Funcs)
	if qc.NAPI.Name == "" {
		qc.NAPI.Name = fmt.Sprintf("%s-rx-%d", qc.Driver, i)
	}
	q.NAPI = napi.New(qc.NAPI, q, h.Softnet[qc.CPU])
	if qc.Threaded {
		q.NAPI.SetThreaded(h.CPUs[qc.ThreadCPU])
	}
	h.Queues = append(h.Queues, q)
	h.Feeds = append(h.Feeds, f)
	h.ITRs = append(h.ITRs, itr)
	return q
}

// Start enables every queue's interrupt (device up).
func (h *Harness) Start() {
	for _, q := range h.Queues {
		q.Start()
	}
}

// Run advances the simulation to until.
func (h *Harness) Run(until sim.Time) { h.Eng.Run(until) }

// Queued returns the packets held in the rings (pulled from the feeds but
// not yet cleaned); packets still in a feed have not been offered.
func (h *Harness) Queued() int {
	n := 0
	for _, q := range h.Queues {
		n += q.Ring.Queued()
	}
	return n
}

// Check runs Conservation over the harness ledger, the rings and extra
// queuers (models a test wires behind the queues).
func (h *Harness) Check(t testing.TB, extra ...pkt.Queuer) {
	t.Helper()
	qs := append([]pkt.Queuer{queuerFunc(h.Queued)}, extra...)
	Conservation(t, &h.Led, qs...)
}

type queuerFunc func() int

func (f queuerFunc) Queued() int { return f() }

// Busy returns cpu's CPU time under an accounting label ("hardirq",
// "softirq", "ksoftirqd", "napi", ...).
func (h *Harness) Busy(cpu int, label string) sim.Time { return h.Acct.BusyOf(cpu, label) }

// Drop returns a program giving every packet XDP_DROP with a per-packet
// cost of costNS.
func (h *Harness) Drop(costNS float64) *xdp.Program {
	return xdp.NewProgram("drop", xdp.All{V: xdp.Drop}, costNS, h.Funcs)
}
