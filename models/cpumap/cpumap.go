package cpumap

import (
	"fmt"

	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// Kernel constants (kernel/bpf/cpumap.c, kernel-rx-path.md §6.2, §6.4).
const (
	// CPUMapBulkSize is CPU_MAP_BULK_SIZE: frames per bulk queue ("one
	// cacheline on 64-bit").
	CPUMapBulkSize = 8
	// CPUMapBatch is CPUMAP_BATCH: frames the kthread dequeues per iteration.
	CPUMapBatch = 8
	// MaxQSize is the largest qsize cpu_map_update_elem accepts (16384).
	MaxQSize = 16384
	// GROFlushPackets is the cpumap GRO flush period (NAPI_POLL_WEIGHT).
	GROFlushPackets = 64
)

// Delivery is how the remote CPU hands frames to the stack.
type Delivery uint8

// Delivery modes.
const (
	// Single is per-packet netif_receive_skb_core in the kthread (v4.15-v5.12;
	// it bypasses RPS).
	Single Delivery = iota
	// List is netif_receive_skb_list per batch of <= 8 (v5.13-v6.14).
	List
	// GRO is a standalone GRO node in the kthread, flushed every 64 packets
	// (old only) and when the ring is empty (all), v6.15+.
	GRO
	// NAPI replaces the kthread by a threaded NAPI (Bianconi's 2024 RFC):
	// budget, napi_gro_receive, napi_complete_done.
	NAPI
	// Backlog hands skbs to the target CPU's backlog NAPI (enqueue_to_backlog
	// + IPI); the skb must then be built on the RX CPU, as enqueue_to_backlog
	// takes an skb.
	Backlog
)

var deliveryNames = [...]string{"single", "list", "gro", "napi", "backlog"}

// String returns the mode's scenario name (cpumap.delivery).
func (d Delivery) String() string { return deliveryNames[d] }

// ParseDelivery reads a delivery mode name.
func ParseDelivery(s string) (Delivery, error) {
	for i, n := range deliveryNames {
		if n == s {
			return Delivery(i), nil
		}
	}
	return 0, fmt.Errorf("cpumap: unknown delivery %q", s)
}

// RemoteAction is the verdict of the optional cpumap XDP program
// (BPF_XDP_CPUMAP, xdp-bench --remote-action).
type RemoteAction uint8

// Remote actions.
const (
	RemoteDisabled RemoteAction = iota
	RemotePass
	RemoteDrop
	RemoteRedirect
)

// ParseRemoteAction reads disabled, pass, drop or redirect.
func ParseRemoteAction(s string) (RemoteAction, error) {
	switch s {
	case "disabled", "":
		return RemoteDisabled, nil
	case "pass":
		return RemotePass, nil
	case "drop":
		return RemoteDrop, nil
	case "redirect":
		return RemoteRedirect, nil
	}
	return 0, fmt.Errorf("cpumap: unknown remote action %q", s)
}

// Receiver is the stack on the remote CPU: netif_receive_skb_core per skb
// (single delivery: no RPS) and netif_receive_skb_list per batch (RPS
// applies), as models/stack.Stack implements them.
type Receiver interface {
	ReceiveCore(w *sim.Work, cpu int, p pkt.Packet)
	ReceiveList(w *sim.Work, cpu int, skbs []pkt.Packet)
}

// BacklogEnqueuer is enqueue_to_backlog (models/backlog.Set implements it).
type BacklogEnqueuer interface {
	Enqueue(w *sim.Work, from, to int, p pkt.Packet) bool
}

// Releaser returns buffers to their RX queue when a frame is freed.
type Releaser func(queue uint16, n int)

// Config configures the map's entries.
type Config struct {
	QSize    int
	BulkSize int
	Batch    int
	Delivery Delivery
	Remote   RemoteAction
	// GRO is the ingress device's GRO configuration, used by the gro and
	// napi modes (GRO off: skbs go up in gro_normal_batch lists).
	GRO gro.Config
	// Jiffy is 1/HZ (GRO flush ages).
	Jiffy sim.Duration
	// NAPIWeight is the threaded NAPI's budget in napi mode.
	NAPIWeight int
}

// Costs are the cpumap cost items in ns (from the hw cost profile).
type Costs struct {
	BqFlushCall, BqFlushPkt   float64 // bq_flush_to_queue: producer_lock per flush, __ptr_ring_produce per frame
	WakeSleeping, WakeRunning float64 // wake_up_process of a sleeping / running kthread
	ReturnFrame               float64 // xdp_return_frame(_rx_napi) per frame
	KthreadCall, KthreadPkt   float64 // cpu_map_kthread_run per iteration / per frame consumed
	ProgPkt                   float64 // cpumap XDP program per frame
	Redirect, Flush           float64 // remote XDP_REDIRECT per frame, xdp_do_flush per iteration
	AllocCall, AllocPkt       float64 // kmem_cache_alloc_bulk / napi_skb_cache_get_bulk
	BuildPkt                  float64 // __xdp_build_skb_from_frame
	GRO                       gro.Costs
}

// EntryStats are an entry's counters, named after the tracepoints that
// xdp-bench reads (kernel-rx-path.md §6.7, §10.1).
type EntryStats struct {
	// xdp_cpumap_enqueue: frames enqueued, dropped (ring full), and flush
	// events with processed > 0 (bulk-avg = Enqueued / EnqueueEvents).
	Enqueued, EnqueueDrops, EnqueueEvents uint64
	// Flushes counts bq_flush_to_queue calls, MidPollFlushes those from a
	// full bulk queue, Wakes the wake_up_process calls at xdp_do_flush and
	// WakesSleeping those that found the kthread asleep.
	Flushes, MidPollFlushes, Wakes, WakesSleeping uint64
	// xdp_cpumap_kthread: frames dequeued, iterations, iterations with
	// sched (slept or rescheduled), kmem_alloc_drops.
	Processed, Iterations, Sched, KmemDrops uint64
	// xdp_stats of the cpumap program.
	Pass, Drop, Redirect uint64
}

type bulkQueue struct {
	q      []pkt.Packet
	n      int
	segs   int
	onList bool
}

// Entry is one cpumap entry (struct bpf_cpu_map_entry): its ptr_ring, the
// bulk queue of each RX CPU, and the consumer (kthread or threaded NAPI) on
// its CPU.
type Entry struct {
	m   *Map
	CPU int
	// Ring is the entry's ptr_ring (nil in backlog mode).
	Ring *PtrRing
	bq   []bulkQueue
	// Thread is the kthread "cpumap/<cpu>/map:<id>" (nil in napi and
	// backlog modes); NAPI the threaded NAPI of napi mode.
	Thread *sim.Thread
	NAPI   *napi.NAPI
	// GRO is the entry's GRO node (gro and napi modes).
	GRO        *gro.Engine
	frames     []pkt.Packet
	lastScheds uint64
	ran        bool // the consumer has run (it starts asleep: the first iteration counts sched)
	packets    int  // since the last GRO flush

	Stats EntryStats
}

// Map is a BPF_MAP_TYPE_CPUMAP: xdp.Redirector for the RX CPUs.
type Map struct {
	cfg     Config
	costs   Costs
	entries []*Entry // by target CPU
	list    []*Entry // in creation order
	flush   [][]*Entry
	cpus    []*sim.CPU
	softnet []*napi.Softnet
	recv    Receiver
	backlog BacklogEnqueuer
	led     *pkt.Ledger
	rel     Releaser

	fnBq, fnWake, fnRet, fnKthread, fnProg, fnRedir, fnFlush, fnAlloc, fnBuild sim.FuncID
	cBqCall, cBqPkt, cWakeS, cWakeR, cRet, cKCall, cKPkt, cProg                sim.Time
	cRedir, cFlush, cAllocCall, cAllocPkt, cBuild                              sim.Time
}

var (
	_ xdp.Redirector = (*Map)(nil)
	_ pkt.Queuer     = (*Map)(nil)
)

func ns(x float64) sim.Time { return sim.Time(x + 0.5) }

// New returns an empty map for a host with cpus and their softnets. recv is
// the stack; bl is needed by the backlog mode only; rel may be nil.
func New(cfg Config, c Costs, funcs *sim.Funcs, cpus []*sim.CPU, softnet []*napi.Softnet,
	recv Receiver, bl BacklogEnqueuer, led *pkt.Ledger, rel Releaser) *Map {
	if cfg.BulkSize <= 0 {
		cfg.BulkSize = CPUMapBulkSize
	}
	if cfg.Batch <= 0 {
		cfg.Batch = CPUMapBatch
	}
	if cfg.NAPIWeight <= 0 {
		cfg.NAPIWeight = napi.NAPIPollWeight
	}
	if rel == nil {
		rel = func(uint16, int) {}
	}
	m := &Map{cfg: cfg, costs: c, cpus: cpus, softnet: softnet, recv: recv, backlog: bl, led: led, rel: rel,
		entries: make([]*Entry, len(cpus)), flush: make([][]*Entry, len(cpus)),
		fnBq: funcs.ID("bq_flush_to_queue"), fnWake: funcs.ID("wake_up_process"), fnRet: funcs.ID("xdp_return_frame"),
		fnKthread: funcs.ID("cpu_map_kthread_run"), fnProg: funcs.ID("cpumap_bpf_prog_run"),
		fnRedir: funcs.ID("xdp_do_redirect"), fnFlush: funcs.ID("xdp_do_flush"),
		fnAlloc: funcs.ID("kmem_cache_alloc_bulk"), fnBuild: funcs.ID("__xdp_build_skb_from_frame"),
		cBqCall: ns(c.BqFlushCall), cBqPkt: ns(c.BqFlushPkt), cWakeS: ns(c.WakeSleeping), cWakeR: ns(c.WakeRunning),
		cRet: ns(c.ReturnFrame), cKCall: ns(c.KthreadCall), cKPkt: ns(c.KthreadPkt), cProg: ns(c.ProgPkt),
		cRedir: ns(c.Redirect), cFlush: ns(c.Flush), cAllocCall: ns(c.AllocCall), cAllocPkt: ns(c.AllocPkt),
		cBuild: ns(c.BuildPkt),
	}
	if m.cfg.Delivery == NAPI && m.cfg.Batch > m.cfg.NAPIWeight {
		m.cfg.Batch = m.cfg.NAPIWeight
	}
	return m
}

// Config returns the map's configuration.
func (m *Map) Config() Config { return m.cfg }

// Add creates the entry for target CPU cpu (cpu_map_update_elem with
// qsize) with its consumer, and returns it.
func (m *Map) Add(cpu int, funcs *sim.Funcs) *Entry {
	e := &Entry{m: m, CPU: cpu, bq: make([]bulkQueue, len(m.cpus)), frames: make([]pkt.Packet, m.cfg.Batch)}
	for i := range e.bq {
		e.bq[i].q = make([]pkt.Packet, m.cfg.BulkSize)
	}
	if m.cfg.Delivery != Backlog {
		e.Ring = NewPtrRing(m.cfg.QSize)
	}
	switch m.cfg.Delivery {
	case GRO, NAPI:
		e.GRO = gro.New(m.cfg.GRO, m.costs.GRO, funcs, e)
	}
	switch m.cfg.Delivery {
	case Single, List, GRO:
		e.Thread = m.cpus[cpu].NewThread(fmt.Sprintf("cpumap/%d/map:1", cpu), "kthread", (*kthread)(e))
	case NAPI:
		e.NAPI = napi.New(napi.Config{Name: fmt.Sprintf("cpumap-%d", cpu), Weight: m.cfg.NAPIWeight}, e, m.softnet[cpu])
		e.NAPI.GRO = &stack.NAPIGRO{E: e.GRO, Jiffy: m.cfg.Jiffy}
		e.NAPI.SetThreaded(m.cpus[cpu])
	}
	m.entries[cpu] = e
	m.list = append(m.list, e)
	return e
}

// Entries returns the entries in creation order.
func (m *Map) Entries() []*Entry { return m.list }

// Queued implements pkt.Queuer: frames in bulk queues, rings and GRO nodes.
func (m *Map) Queued() int {
	n := 0
	for _, e := range m.list {
		for i := range e.bq {
			n += e.bq[i].segs
		}
		if e.Ring != nil {
			n += e.Ring.Queued()
		}
		if e.GRO != nil {
			n += e.GRO.Queued()
		}
	}
	return n
}

// Enqueue implements xdp.Redirector: cpu_map_enqueue -> bq_enqueue. A full
// bulk queue is flushed to the ring first (a mid-poll flush, no wake-up).
func (m *Map) Enqueue(w *sim.Work, rxCPU, target int, p pkt.Packet) {
	var e *Entry
	if target >= 0 && target < len(m.entries) {
		e = m.entries[target]
	}
	if e == nil { // no entry: xdp_do_redirect fails, the driver drops the frame
		w.Add(m.fnRet, m.cRet)
		m.led.Drop(pkt.XDPAborted, p.WireSegs())
		m.rel(p.Queue, p.WireSegs())
		return
	}
	bq := &e.bq[rxCPU]
	if bq.n == len(bq.q) {
		e.Stats.MidPollFlushes++
		m.flushBq(w, e, rxCPU)
	}
	bq.q[bq.n] = p
	bq.n++
	bq.segs += p.WireSegs()
	if !bq.onList {
		bq.onList = true
		m.flush[rxCPU] = append(m.flush[rxCPU], e)
	}
}

// Flush implements xdp.Redirector: __cpu_map_flush at xdp_do_flush, the
// only point that wakes the consumer.
func (m *Map) Flush(w *sim.Work, rxCPU int) {
	l := m.flush[rxCPU]
	for i, e := range l {
		m.flushBq(w, e, rxCPU)
		e.bq[rxCPU].onList = false
		m.wake(w, e)
		l[i] = nil
	}
	m.flush[rxCPU] = l[:0]
}

// flushBq is bq_flush_to_queue: produce every frame under producer_lock;
// ring full drops the frame (xdp_return_frame_rx_napi); one
// xdp_cpumap_enqueue event per flush.
func (m *Map) flushBq(w *sim.Work, e *Entry, rxCPU int) {
	bq := &e.bq[rxCPU]
	n := bq.n
	if n == 0 {
		return
	}
	e.Stats.Flushes++
	w.Add(m.fnBq, m.cBqCall+sim.Time(n)*m.cBqPkt)
	drops := 0
	if m.cfg.Delivery == Backlog {
		w.Add(m.fnAlloc, m.cAllocCall+sim.Time(n)*m.cAllocPkt)
	}
	if m.cfg.Delivery == Backlog {
		for i := 0; i < n; i++ {
			p := bq.q[i]
			w.Add(m.fnBuild, m.cBuild)
			p.CsumOK, p.Hash, p.AllocCPU = false, 0, uint16(rxCPU)
			m.backlog.Enqueue(w, rxCPU, e.CPU, p) // drops are the backlog's
		}
	} else {
		// Dropped frames go back to their RX queue
		// (xdp_return_frame_rx_napi); the releases of consecutive frames
		// of one queue are summed.
		dropSegs, relQ, relN := 0, uint16(0), 0
		for i := 0; i < n; i++ {
			p := &bq.q[i]
			if e.Ring.Produce(*p) {
				continue
			}
			drops++
			segs := p.WireSegs()
			dropSegs += segs
			if relN > 0 && p.Queue != relQ {
				m.rel(relQ, relN)
				relN = 0
			}
			relQ = p.Queue
			relN += segs
		}
		if drops > 0 {
			w.Add(m.fnRet, sim.Time(drops)*m.cRet)
			m.led.Drop(pkt.CpumapEnqueue, dropSegs)
			m.rel(relQ, relN)
		}
	}
	bq.n, bq.segs = 0, 0
	e.Stats.Enqueued += uint64(n - drops)
	e.Stats.EnqueueDrops += uint64(drops)
	if n-drops > 0 {
		e.Stats.EnqueueEvents++
	}
}

// wake is wake_up_process(kthread) (napi_schedule in napi mode).
func (m *Map) wake(w *sim.Work, e *Entry) {
	var th *sim.Thread
	switch {
	case e.Thread != nil:
		th = e.Thread
	case e.NAPI != nil:
		th = e.NAPI.Thread()
	default:
		return // backlog mode: enqueue_to_backlog scheduled the target
	}
	e.Stats.Wakes++
	if th.Runnable() {
		w.Add(m.fnWake, m.cWakeR)
	} else {
		e.Stats.WakesSleeping++
		w.Add(m.fnWake, m.cWakeS)
	}
	if e.NAPI != nil {
		e.NAPI.Schedule()
		return
	}
	th.CPU().Wake(th)
}
