package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
)

// Options configure one validation run. Zero values are filled by
// (*Options).Defaults; Run calls it.
type Options struct {
	// Config is the name of the configuration (a built-in one, see
	// Configs, or a free label); it is reported as "scenario".
	Config string `json:"scenario"`
	// Iface attaches to a real interface and only measures.
	Iface string `json:"iface,omitempty"`
	// Force allows an Iface with an XDP program or the default route.
	Force bool `json:"force,omitempty"`

	Program      Program      `json:"program"`
	Mode         ProgramMode  `json:"program_mode,omitempty"`
	CPUs         []int        `json:"cpus,omitempty"`
	Qsize        int          `json:"qsize,omitempty"`
	RemoteAction RemoteAction `json:"remote_action,omitempty"`
	XDPMode      string       `json:"xdp_mode"` // native or skb

	Gen GenOptions  `json:"generator"`
	Net NetSettings `json:"net"`

	// Listener reads UDP port 9 in the receiving namespace with a
	// blocking recv on ListenerCPU.
	Listener    bool `json:"listener"`
	ListenerCPU int  `json:"listener_cpu"`
	// BusyPollUS sets SO_BUSY_POLL on the listener's socket (µs; 0 =
	// none): its recv busy-polls the receiving veth's NAPI before it
	// sleeps (the model's stack.busy_read).
	BusyPollUS int `json:"busy_poll_us,omitempty"`

	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	Reps     int           `json:"reps"`

	// Probe adds a separate run with the raw tracepoints attached for the
	// internals (polls, bulk sizes, kthread schedules).
	Probe         bool          `json:"probe"`
	ProbeDuration time.Duration `json:"probe_duration_ns"`

	// Reference interleaves a short XDP_DROP live-frames run before every
	// repetition and flags repetitions whose reference is below
	// SlowFactor*RefPPS as slow.
	Reference  bool    `json:"reference"`
	RefPPS     float64 `json:"ref_pps"`
	SlowFactor float64 `json:"slow_factor"`
	// RetrySlow repeats a slow repetition up to this many times; the slow
	// one stays in the result, marked retried, and out of the medians.
	RetrySlow int `json:"retry_slow"`

	// Progress, if set, receives xdp-bench lines every second.
	Progress io.Writer `json:"-"`
	Extended bool      `json:"-"`
	// ExtendedToggle, if set, overrides Extended while running: xdp-bench
	// switches between terse and extended output on SIGQUIT.
	ExtendedToggle *atomic.Bool `json:"-"`
	// StartLine, if set with Progress, prints xdp-bench's start-up line
	// once the first harness exists.
	StartLine bool `json:"-"`
}

// Defaults used by validate.
const (
	DefaultDuration = 3 * time.Second
	DefaultWarmup   = 1 * time.Second
	DefaultReps     = 3
	DefaultQsize    = 192
	// DefaultRefPPS is the fixed XDP_DROP live-frames reference of this
	// kind of machine (2 vCPU AMD EPYC Firecracker VM, kernel 6.18), as
	// rxsim's live generator reaches it: 6.8-7.1 Mpps in normal periods
	// when it was measured. (An earlier study with very long BPF_PROG_RUN
	// calls saw up to 23 Mpps on another host of the kind.) Override with
	// --ref-pps on other machines.
	DefaultRefPPS     = 7.0e6
	DefaultSlowFactor = 0.85
)

// Defaults fills zero values.
func (o *Options) Defaults() {
	if o.Program == "" {
		o.Program = ProgDrop
	}
	if o.XDPMode == "" {
		o.XDPMode = "native"
	}
	if o.Program == ProgRedirectCPU {
		if o.Mode == "" {
			o.Mode = ModeL4Hash
		}
		if o.Qsize == 0 {
			o.Qsize = DefaultQsize
		}
		if o.RemoteAction == "" {
			o.RemoteAction = RemoteDisabled
		}
	}
	if o.Gen.Kind == "" {
		o.Gen.Kind = GenLive
	}
	if o.Gen.PktSize == 0 {
		o.Gen.PktSize = 60
	}
	if o.Gen.Flows == 0 {
		o.Gen.Flows = 1
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	if o.Reps == 0 {
		o.Reps = DefaultReps
	}
	if o.ProbeDuration == 0 {
		o.ProbeDuration = min(o.Duration, 2*time.Second)
	}
	if o.RefPPS == 0 {
		o.RefPPS = DefaultRefPPS
	}
	if o.SlowFactor == 0 {
		o.SlowFactor = DefaultSlowFactor
	}
	if o.RetrySlow < 0 {
		o.RetrySlow = 0
	}
	if o.Config == "" {
		o.Config = fmt.Sprintf("veth-%s-%s", o.Program, o.Gen.Kind)
		if o.Iface != "" {
			o.Config = o.Iface + "-" + string(o.Program)
		}
	}
}

// Check validates the options without touching the system.
func (o *Options) Check() error {
	ncpu := runtime.NumCPU()
	switch o.Program {
	case ProgDrop, ProgPass, ProgTx, ProgRedirectCPU:
	default:
		return usageErr("unknown --program %q (want drop, pass, tx or redirect-cpu)", o.Program)
	}
	switch o.XDPMode {
	case "native", "skb":
	default:
		return usageErr("unknown --xdp-mode %q (want native or skb)", o.XDPMode)
	}
	if o.Program == ProgRedirectCPU {
		if len(o.CPUs) == 0 {
			return usageErr("redirect-cpu needs at least one --cpu")
		}
		for _, c := range o.CPUs {
			if c < 0 || c >= ncpu {
				return usageErr("--cpu %d not in 0..%d", c, ncpu-1)
			}
		}
		if o.Qsize < 1 || o.Qsize > 16384 {
			return usageErr("--qsize %d not in 1..16384", o.Qsize)
		}
		switch o.Mode {
		case ModeNoTouch, ModeRoundRobin, ModeL4Hash:
		default:
			return usageErr("unknown --program-mode %q (want no-touch, round-robin or l4-hash)", o.Mode)
		}
		switch o.RemoteAction {
		case RemoteDisabled, RemoteDrop, RemotePass:
		default:
			return usageErr("unknown --remote-action %q (want disabled, drop or pass)", o.RemoteAction)
		}
	} else if len(o.CPUs) > 0 || o.Qsize != 0 || (o.RemoteAction != "" && o.RemoteAction != RemoteDisabled) {
		return usageErr("--cpu, --qsize and --remote-action need --program redirect-cpu")
	}
	if o.Duration <= 0 || o.Duration > MaxDuration {
		return usageErr("--duration %v not in (0, %v]", o.Duration, MaxDuration)
	}
	if o.Warmup < 0 || o.Warmup > time.Minute {
		return usageErr("--warmup %v not in [0, 1m]", o.Warmup)
	}
	if o.Reps < 1 || o.Reps > 100 {
		return usageErr("--reps %d not in 1..100", o.Reps)
	}
	if o.BusyPollUS < 0 || (o.BusyPollUS > 0 && !o.Listener) {
		return usageErr("busy-poll %d: expected >= 0, and a listener to busy-poll", o.BusyPollUS)
	}
	if o.Listener && (o.ListenerCPU < 0 || o.ListenerCPU >= ncpu) {
		return usageErr("listener CPU %d not in 0..%d", o.ListenerCPU, ncpu-1)
	}
	if o.Net.Threaded && o.Net.ThreadedCPU >= ncpu {
		return usageErr("threaded NAPI CPU %d not in 0..%d", o.Net.ThreadedCPU, ncpu-1)
	}
	if o.Iface != "" {
		if len(o.Iface) > 15 {
			return usageErr("--iface %q: name too long", o.Iface)
		}
		return nil
	}
	g := o.Gen
	g.Duration = o.Warmup + o.Duration
	return g.check()
}

// Sample is one second of a run: rates from counter deltas divided by the
// measured period.
type Sample struct {
	Rep     int     `json:"rep"`
	T       float64 `json:"t"`        // seconds since measurement start (end of the period)
	Period  float64 `json:"period_s"` // measured period
	Probe   bool    `json:"probe,omitempty"`
	Offered float64 `json:"offered_pps"`
	// Rx counts every packet the XDP program saw.
	Rx        float64            `json:"rx_pps"`
	RxPerCPU  []float64          `json:"rx_pps_per_cpu"`
	Delivered float64            `json:"delivered_pps"`
	Drops     map[string]float64 `json:"drops"`
	// RedirectErr counts bpf_redirect_map failures.
	RedirectErr float64 `json:"redirect_err_pps,omitempty"`
	// Remote counts packets the cpumap entry program saw.
	Remote float64 `json:"remote_pps,omitempty"`
	// Tx counts XDP_TX'd packets arriving back on the sender.
	Tx      float64     `json:"tx_pps,omitempty"`
	Kthread float64     `json:"kthread_pps,omitempty"`
	Softnet SoftnetRate `json:"softnet"`
	UDP     UDPRate     `json:"udp"`
	CPU     []CPUBusy   `json:"cpu"`
	// EthtoolXDP is veth's rx_queue_0_xdp_packets rate (kernel counter).
	EthtoolXDP float64   `json:"ethtool_rx_xdp_pps"`
	LinkRx     float64   `json:"link_rx_pps"`
	LinkRxDrop float64   `json:"link_rx_dropped_pps"`
	SndTxDrop  float64   `json:"snd_tx_dropped_pps"`
	Polls      float64   `json:"polls_per_sec,omitempty"`         // probe
	AvgWork    float64   `json:"napi_avg_work,omitempty"`         // probe
	EnqPPS     float64   `json:"enqueue_pps,omitempty"`           // probe
	EnqDrop    float64   `json:"enqueue_drop_pps,omitempty"`      // probe
	BulkAvg    float64   `json:"bulk_avg,omitempty"`              // probe
	KthSched   float64   `json:"kthread_sched_per_sec,omitempty"` // probe
	KthEvents  float64   `json:"kthread_events_per_sec,omitempty"`
	EnqPerCPU  []EnqRate `json:"enqueue_per_cpu,omitempty"`
	NapiWork   []float64 `json:"napi_work_hist,omitempty"` // polls/s per work value 0..64
	FullBudget float64   `json:"full_budget_polls_per_sec,omitempty"`
}

// EnqRate is the cpumap enqueue rate from one CPU to another.
type EnqRate struct {
	From    int     `json:"from"`
	To      int     `json:"to"`
	PPS     float64 `json:"pps"`
	Drop    float64 `json:"drop_pps"`
	BulkAvg float64 `json:"bulk_avg"`
}

// SoftnetRate are softnet_stat rates summed over CPUs.
type SoftnetRate struct {
	Processed   float64 `json:"processed"`
	Dropped     float64 `json:"dropped"`
	TimeSqueeze float64 `json:"time_squeeze"`
	ReceivedRPS float64 `json:"received_rps"`
}

// UDPRate are /proc/net/snmp rates of the receiving namespace.
type UDPRate struct {
	InDatagrams  float64 `json:"in_datagrams"`
	NoPorts      float64 `json:"no_ports"`
	InErrors     float64 `json:"in_errors"`
	RcvbufErrors float64 `json:"rcvbuf_errors"`
	InCsumErrors float64 `json:"in_csum_errors"`
	TcpInSegs    float64 `json:"tcp_in_segs"`
}

// CPUBusy is one CPU's time by class as fractions of the period.
type CPUBusy struct {
	CPU     int     `json:"cpu"`
	HardIRQ float64 `json:"hardirq"`
	SoftIRQ float64 `json:"softirq"`
	Thread  float64 `json:"thread"` // user + nice + system
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	Idle    float64 `json:"idle"`
	Steal   float64 `json:"steal"`
}

// Rep is one repetition.
type Rep struct {
	Rep         int     `json:"rep"`
	Probe       bool    `json:"probe,omitempty"`
	Slow        bool    `json:"slow"`
	RefPPS      float64 `json:"ref_pps,omitempty"`       // reference run before this rep
	RefAfterPPS float64 `json:"ref_after_pps,omitempty"` // reference run after it
	// Retried marks a slow repetition that was measured again.
	Retried bool               `json:"retried,omitempty"`
	Median  map[string]float64 `json:"median"`
	Seconds int                `json:"seconds"`
	Start   time.Time          `json:"start"`
}

// Spread describes the variation of one metric.
type Spread struct {
	RepMin   float64 `json:"rep_min"`   // smallest per-rep median
	RepMax   float64 `json:"rep_max"`   // largest per-rep median
	RelRange float64 `json:"rel_range"` // (rep_max-rep_min)/median
	SecP10   float64 `json:"sec_p10"`   // over every second of counted reps
	SecP90   float64 `json:"sec_p90"`
}

// CPUMapResult summarises the cpumap.
type CPUMapResult struct {
	EnqueuePPS   float64 `json:"enqueue_pps"`
	DropPPS      float64 `json:"drop_pps"`
	BulkAvg      float64 `json:"bulk_avg"`
	KthreadPPS   float64 `json:"kthread_pps"`
	KthreadSched float64 `json:"kthread_sched_per_sec"`
}

// Machine describes the host.
type Machine struct {
	CPUModel string  `json:"cpu_model"`
	MHz      float64 `json:"mhz"`
	Kernel   string  `json:"kernel"`
	Cores    int     `json:"cores"`
	// LoadAvg is /proc/loadavg when the machine was described: other work
	// on the machine shows here (and as slow reference runs).
	LoadAvg string `json:"loadavg"`
	// KernelConfig is the kernel's build options that the scenarios'
	// [kernel] section models (nil: /proc/config.gz not readable).
	KernelConfig *KernelConfig `json:"kernel_config,omitempty"`
}

// Result is a validation run. Its top-level fields carry the names of
// `rxsim run --json`; values are medians over every second of the counted
// (non-slow) probe-free repetitions, except polls_per_sec, cpumap.bulk_avg
// and cpumap.kthread_sched_per_sec, which come from the probe run.
type Result struct {
	Scenario     string             `json:"scenario"`
	Seed         int64              `json:"seed"`        // 0: a real run
	SimSeconds   float64            `json:"sim_seconds"` // measured seconds (probe-free)
	OfferedPPS   float64            `json:"offered_pps"`
	RxPPS        float64            `json:"rx_pps"`
	Drops        map[string]float64 `json:"drops"`
	DeliveredPPS float64            `json:"delivered_pps"`
	PollsPerSec  float64            `json:"polls_per_sec"`
	TimeSqueeze  float64            `json:"time_squeeze"`
	CPU          []CPUBusy          `json:"cpu"`
	CPUMap       *CPUMapResult      `json:"cpumap,omitempty"`

	Iface     string             `json:"iface"`
	Driver    string             `json:"driver"`
	XDPMode   string             `json:"xdp_mode"`
	PerSecond []Sample           `json:"per_second"`
	Reps      []Rep              `json:"reps"`
	Median    map[string]float64 `json:"median"`
	Spread    map[string]Spread  `json:"spread"`
	Probe     *Sample            `json:"probe,omitempty"` // median second of the probe run
	Reference []float64          `json:"reference_pps,omitempty"`
	Machine   Machine            `json:"machine"`
	Settings  Options            `json:"settings"`
	Sources   map[string]string  `json:"sources"`
	Notes     []string           `json:"notes,omitempty"`
	Start     time.Time          `json:"start"`
}

// Run measures the configuration o: Reps probe-free repetitions (each after
// a reference run when o.Reference), then one probe run when o.Probe.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.Defaults()
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	Cleanup() // what a killed rxsim left
	res := &Result{Scenario: o.Config, Settings: o, Machine: ReadMachine(), Start: time.Now().UTC(), XDPMode: o.XDPMode,
		Sources: map[string]string{
			"rates":                        "probe-free runs (XDP per-CPU counters, softnet_stat, snmp, /proc/stat, link and ethtool stats)",
			"polls_per_sec":                "probe run (raw tracepoint napi_poll)",
			"cpumap.bulk_avg":              "probe run (raw tracepoint xdp_cpumap_enqueue)",
			"cpumap.kthread_sched_per_sec": "probe run (raw tracepoint xdp_cpumap_kthread)",
			"drops.cpumap_enqueue":         "probe-free: rx - redirect errors - packets reaching the kthread side (cpumap program count, else UDP snmp)",
		}}
	if o.XDPMode == "skb" {
		res.Notes = append(res.Notes, "generic (skb) XDP mode, as asked")
	}
	if o.Iface != "" {
		res.Notes = append(res.Notes, "external interface: traffic comes from outside; rxsim only attaches and measures")
	}
	// Reference runs bracket every repetition (the one after a repetition
	// is the one before the next); a repetition is slow when either is
	// below SlowFactor*RefPPS, and is then repeated up to RetrySlow times.
	useRef := o.Reference && o.Iface == ""
	ref := func() (float64, error) {
		v, err := referenceRun(ctx)
		if err != nil {
			return 0, fmt.Errorf("validate: reference run: %w", err)
		}
		res.Reference = append(res.Reference, v)
		return v, nil
	}
	var before float64
	if useRef {
		var err error
		if before, err = ref(); err != nil {
			return res, err
		}
	}
	attempt := 0
	for slot := 0; slot < o.Reps; slot++ {
		for try := 0; ; try++ {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			rep := Rep{Rep: attempt, Start: time.Now().UTC()}
			samples, hinfo, err := measureOnce(ctx, o, attempt, false, o.Duration)
			if err != nil {
				return res, err
			}
			attempt++
			res.Iface, res.Driver = hinfo.Rcv, hinfo.Driver
			rep.Seconds = len(samples)
			rep.Median = medians(samples)
			if useRef {
				after, err := ref()
				if err != nil {
					return res, err
				}
				rep.RefPPS, rep.RefAfterPPS = before, after
				rep.Slow = math.Min(before, after) < o.SlowFactor*o.RefPPS
				before = after
			}
			rep.Retried = rep.Slow && try < o.RetrySlow
			res.Reps = append(res.Reps, rep)
			res.PerSecond = append(res.PerSecond, samples...)
			if !rep.Retried {
				break
			}
		}
	}
	if o.Probe && ctx.Err() == nil {
		samples, _, err := measureOnce(ctx, o, -1, true, o.ProbeDuration)
		if err != nil {
			return res, err
		}
		for i := range samples {
			samples[i].Probe = true
		}
		if len(samples) > 0 {
			p := medianSample(samples)
			res.Probe = &p
		}
		res.PerSecond = append(res.PerSecond, samples...)
	}
	res.aggregate()
	return res, nil
}

// referenceRun is a short XDP_DROP live-frames run on its own harness.
func referenceRun(ctx context.Context) (float64, error) {
	ro := Options{Config: "reference", Program: ProgDrop, Gen: GenOptions{Kind: GenLive}, Duration: time.Second, Warmup: 300 * time.Millisecond, Reps: 1}
	ro.Defaults()
	s, _, err := measureOnce(ctx, ro, -2, false, time.Second)
	if err != nil {
		return 0, err
	}
	if len(s) == 0 {
		return 0, ctx.Err()
	}
	return s[len(s)-1].Rx, nil
}

// snapshot is every counter at one instant.
type snapshot struct {
	t        time.Time
	rx       []Counter
	remote   Counter
	sink     Counter
	redirErr Counter
	softnet  []SoftnetRow
	stat     []CPUTimes
	snmp     SNMP
	rcv, snd *netlink.LinkStatistics
	ethtool  map[string]uint64
	listener uint64
	sent     uint64
	probe    *ProbeCounts
}

type runState struct {
	o    Options
	h    *Harness
	x    *XDPObjects
	pr   *Probes
	lst  *Listener
	sent *atomic.Uint64
}

func (s *runState) snap() (*snapshot, error) {
	sn := &snapshot{t: time.Now()}
	var err error
	if _, sn.rx, err = ReadCounter(s.x.Counters, SlotRx); err != nil {
		return nil, err
	}
	sn.remote, _, _ = ReadCounter(s.x.Counters, SlotRemote)
	sn.sink, _, _ = ReadCounter(s.x.Counters, SlotSink)
	sn.redirErr, _, _ = ReadCounter(s.x.Counters, SlotRedirErr)
	if sn.softnet, err = readSoftnet(); err != nil {
		return nil, err
	}
	if sn.stat, err = readProcStat(); err != nil {
		return nil, err
	}
	if sn.snmp, err = s.h.SNMP(); err != nil {
		return nil, err
	}
	if sn.rcv, err = s.h.LinkStats(true); err != nil {
		return nil, err
	}
	if sn.snd, err = s.h.LinkStats(false); err != nil {
		return nil, err
	}
	sn.ethtool, _ = s.h.EthtoolStats()
	if s.lst != nil {
		sn.listener = s.lst.Read.Load()
	}
	sn.sent = s.sent.Load()
	if s.pr != nil {
		c, err := s.pr.Read()
		if err != nil {
			return nil, err
		}
		sn.probe = &c
	}
	return sn, nil
}

func rate(a, b uint64, dt float64) float64 {
	if b < a {
		return 0
	}
	return float64(b-a) / dt
}

func srate(a, b int64, dt float64) float64 {
	if b < a {
		return 0
	}
	return float64(b-a) / dt
}

// sample computes the rates between two snapshots.
func (s *runState) sample(a, b *snapshot, rep int, t float64) Sample {
	dt := b.t.Sub(a.t).Seconds()
	x := Sample{Rep: rep, T: t, Period: dt, Drops: map[string]float64{}}
	x.Offered = rate(a.sent, b.sent, dt)
	for i := range b.rx {
		r := rate(a.rx[i].Packets, b.rx[i].Packets, dt)
		x.RxPerCPU = append(x.RxPerCPU, r)
		x.Rx += r
	}
	x.Remote = rate(a.remote.Packets, b.remote.Packets, dt)
	x.Tx = rate(a.sink.Packets, b.sink.Packets, dt)
	x.RedirectErr = rate(a.redirErr.Packets, b.redirErr.Packets, dt)
	for i := range b.softnet {
		if i >= len(a.softnet) {
			break
		}
		x.Softnet.Processed += rate(a.softnet[i].Processed, b.softnet[i].Processed, dt)
		x.Softnet.Dropped += rate(a.softnet[i].Dropped, b.softnet[i].Dropped, dt)
		x.Softnet.TimeSqueeze += rate(a.softnet[i].TimeSqueeze, b.softnet[i].TimeSqueeze, dt)
		x.Softnet.ReceivedRPS += rate(a.softnet[i].ReceivedRPS, b.softnet[i].ReceivedRPS, dt)
	}
	u := func(f string) float64 { return srate(a.snmp.Get("Udp", f), b.snmp.Get("Udp", f), dt) }
	x.UDP = UDPRate{InDatagrams: u("InDatagrams"), NoPorts: u("NoPorts"), InErrors: u("InErrors"),
		RcvbufErrors: u("RcvbufErrors"), InCsumErrors: u("InCsumErrors"),
		TcpInSegs: srate(a.snmp.Get("Tcp", "InSegs"), b.snmp.Get("Tcp", "InSegs"), dt)}
	for i := range b.stat {
		if i >= len(a.stat) {
			break
		}
		p, q := a.stat[i], b.stat[i]
		tot := float64(q.Total() - p.Total())
		if tot <= 0 {
			tot = 1
		}
		f := func(x, y uint64) float64 { return float64(y-x) / tot }
		x.CPU = append(x.CPU, CPUBusy{CPU: q.CPU, HardIRQ: f(p.IRQ, q.IRQ), SoftIRQ: f(p.SoftIRQ, q.SoftIRQ),
			Thread: f(p.User+p.Nice+p.System, q.User+q.Nice+q.System), User: f(p.User+p.Nice, q.User+q.Nice),
			System: f(p.System, q.System), Idle: f(p.Idle+p.IOWait, q.Idle+q.IOWait), Steal: f(p.Steal, q.Steal)})
	}
	x.EthtoolXDP = rate(a.ethtool["rx_queue_0_xdp_packets"], b.ethtool["rx_queue_0_xdp_packets"], dt)
	x.LinkRx = rate(a.rcv.RxPackets, b.rcv.RxPackets, dt)
	x.LinkRxDrop = rate(a.rcv.RxDropped, b.rcv.RxDropped, dt)
	x.SndTxDrop = rate(a.snd.TxDropped, b.snd.TxDropped, dt)

	// Where packets went.
	udpIn := x.UDP.InDatagrams + x.UDP.NoPorts + x.UDP.InErrors
	if s.lst != nil {
		x.Delivered = rate(a.listener, b.listener, dt)
	} else {
		x.Delivered = x.UDP.InDatagrams
	}
	switch s.o.Program {
	case ProgDrop:
		x.Drops["xdp_drop"] = x.Rx
	case ProgRedirectCPU:
		side := udpIn
		if s.x.Remote != nil {
			side = x.Remote
			if s.o.RemoteAction == RemoteDrop {
				x.Drops["xdp_drop"] = x.Remote
			}
		}
		x.Kthread = side
		x.Drops["cpumap_enqueue"] = math.Max(0, x.Rx-x.RedirectErr-side)
		if x.RedirectErr > 0 {
			x.Drops["redirect_err"] = x.RedirectErr
		}
	}
	if ring := math.Max(x.SndTxDrop, x.LinkRxDrop); ring > 0 {
		x.Drops["ring_full"] = ring
	}
	if x.UDP.RcvbufErrors > 0 || s.lst != nil {
		x.Drops["rcvbuf"] = x.UDP.RcvbufErrors
	}
	if x.UDP.NoPorts > 0 {
		x.Drops["udp_noports"] = x.UDP.NoPorts
	}
	if x.UDP.InCsumErrors > 0 {
		x.Drops["udp_csum"] = x.UDP.InCsumErrors
	}
	if x.Softnet.Dropped > 0 {
		x.Drops["backlog"] = x.Softnet.Dropped
	}
	if a.probe != nil && b.probe != nil {
		s.probeRates(&x, a.probe, b.probe, dt)
	}
	return x
}

func (s *runState) probeRates(x *Sample, a, b *ProbeCounts, dt float64) {
	var enqEv float64
	for from := range b.Enq {
		for to := range b.Enq[from] {
			p, q := a.Enq[from][to], b.Enq[from][to]
			r := EnqRate{From: from, To: to, PPS: rate(p.Processed, q.Processed, dt), Drop: rate(p.Drops, q.Drops, dt)}
			ev := rate(p.Events, q.Events, dt)
			if ev > 0 {
				r.BulkAvg = r.PPS / ev
			}
			if r.PPS > 0 || r.Drop > 0 {
				x.EnqPerCPU = append(x.EnqPerCPU, r)
			}
			x.EnqPPS += r.PPS
			x.EnqDrop += r.Drop
			enqEv += ev
		}
	}
	if enqEv > 0 {
		x.BulkAvg = x.EnqPPS / enqEv
	}
	var kth float64
	for cpu := range b.Kth {
		kth += rate(a.Kth[cpu].Processed, b.Kth[cpu].Processed, dt)
		x.KthSched += rate(a.Kth[cpu].Sched, b.Kth[cpu].Sched, dt)
		x.KthEvents += rate(a.Kth[cpu].Events, b.Kth[cpu].Events, dt)
	}
	if s.o.Program == ProgRedirectCPU {
		x.Kthread = kth
		x.Drops["cpumap_enqueue"] = x.EnqDrop
	}
	x.NapiWork = make([]float64, NapiHistSize)
	var work float64
	for cpu := range b.NapiHist {
		for w := range b.NapiHist[cpu] {
			r := rate(a.NapiHist[cpu][w], b.NapiHist[cpu][w], dt)
			x.NapiWork[w] += r
			x.Polls += r
			work += r * float64(w)
		}
		x.FullBudget += rate(a.NapiFull[cpu], b.NapiFull[cpu], dt)
	}
	if x.Polls > 0 {
		x.AvgWork = work / x.Polls
	}
}

// harnessInfo is what a result needs from the harness.
type harnessInfo struct{ Rcv, Driver string }

// measureOnce builds the harness and programs, drives traffic for warmup +
// dur and returns one Sample per second of dur. Everything is removed
// before it returns.
func measureOnce(ctx context.Context, o Options, rep int, probe bool, dur time.Duration) (samples []Sample, info harnessInfo, err error) {
	st := &runState{o: o, sent: &atomic.Uint64{}}
	if o.Iface != "" {
		st.h, err = NewExternal(o.Iface, o.Force)
	} else {
		st.h, err = NewHarness()
	}
	if err != nil {
		return nil, info, err
	}
	defer st.h.Close()
	info = harnessInfo{st.h.Rcv, st.h.Driver}
	if o.Progress != nil && o.StartLine && rep == 0 {
		WriteStart(o.Progress, o, st.h.Rcv, st.h.RcvIfindex, st.h.Driver)
	}
	st.x, err = LoadXDP(XDPSpec{Program: o.Program, Mode: o.Mode, CPUs: o.CPUs, Qsize: o.Qsize, RemoteAction: o.RemoteAction})
	if err != nil {
		return nil, info, err
	}
	defer st.x.Close()
	if err = st.h.AttachXDP(st.x.Prog, o.XDPMode == "skb"); err != nil {
		return nil, info, err
	}
	if st.x.Sink != nil {
		if err = st.h.AttachSenderXDP(st.x.Sink); err != nil {
			return nil, info, err
		}
	}
	if err = st.h.Configure(o.Net); err != nil {
		return nil, info, err
	}
	if o.Net.Threaded && o.Net.ThreadedCPU >= 0 && !st.h.External {
		if _, err = st.h.PinNapiThread(o.Net.ThreadedCPU); err != nil {
			return nil, info, err
		}
	}
	if o.Listener && !st.h.External {
		if st.lst, err = StartListener(st.h, o.ListenerCPU, o.BusyPollUS); err != nil {
			return nil, info, err
		}
		defer st.lst.Stop()
	}
	if probe {
		if st.pr, err = AttachProbes(st.h.Rcv); err != nil {
			return nil, info, err
		}
		defer st.pr.Close()
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var genErr error
	if !st.h.External {
		g := o.Gen
		g.Duration = o.Warmup + dur + 500*time.Millisecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			genErr = RunGenerator(gctx, st.h, g, st.sent)
			if genErr != nil {
				cancel()
			}
		}()
	}
	stop := func() error {
		cancel()
		wg.Wait()
		if genErr != nil && !errors.Is(genErr, context.Canceled) {
			return genErr
		}
		return nil
	}
	select {
	case <-gctx.Done():
	case <-time.After(o.Warmup):
	}
	prev, err := st.snap()
	if err != nil {
		stop()
		return nil, info, err
	}
	start := prev.t
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	n := int(dur / time.Second)
	if n < 1 {
		n = 1
	}
	for len(samples) < n {
		select {
		case <-gctx.Done():
			if err := stop(); err != nil {
				return samples, info, err
			}
			return samples, info, ctx.Err()
		case <-tick.C:
		}
		cur, err := st.snap()
		if err != nil {
			stop()
			return samples, info, err
		}
		x := st.sample(prev, cur, rep, cur.t.Sub(start).Seconds())
		samples = append(samples, x)
		if o.Progress != nil && rep != -2 {
			WriteSecond(o.Progress, st.h.Rcv, &x, o, o.extended())
		}
		prev = cur
	}
	return samples, info, stop()
}

// flatten returns the scalar metrics of a sample by name.
func flatten(x *Sample) map[string]float64 {
	m := map[string]float64{
		"offered_pps": x.Offered, "rx_pps": x.Rx, "delivered_pps": x.Delivered,
		"softnet.processed": x.Softnet.Processed, "softnet.dropped": x.Softnet.Dropped,
		"time_squeeze": x.Softnet.TimeSqueeze, "softnet.received_rps": x.Softnet.ReceivedRPS,
		"udp.in_datagrams": x.UDP.InDatagrams, "udp.no_ports": x.UDP.NoPorts, "udp.in_errors": x.UDP.InErrors,
		"udp.rcvbuf_errors": x.UDP.RcvbufErrors, "udp.in_csum_errors": x.UDP.InCsumErrors, "tcp.in_segs": x.UDP.TcpInSegs,
		"ethtool_rx_xdp_pps": x.EthtoolXDP, "link_rx_pps": x.LinkRx,
		"link_rx_dropped_pps": x.LinkRxDrop, "snd_tx_dropped_pps": x.SndTxDrop,
		"remote_pps": x.Remote, "tx_pps": x.Tx, "kthread_pps": x.Kthread, "redirect_err_pps": x.RedirectErr,
	}
	for k, v := range x.Drops {
		m["drops."+k] = v
	}
	for i, v := range x.RxPerCPU {
		m[fmt.Sprintf("rx_pps.cpu%d", i)] = v
	}
	for _, c := range x.CPU {
		p := fmt.Sprintf("cpu%d.", c.CPU)
		m[p+"hardirq"], m[p+"softirq"], m[p+"thread"], m[p+"idle"] = c.HardIRQ, c.SoftIRQ, c.Thread, c.Idle
		m[p+"user"], m[p+"system"], m[p+"steal"] = c.User, c.System, c.Steal
	}
	if x.Probe || x.Polls > 0 || x.EnqPPS > 0 {
		m["polls_per_sec"], m["napi_avg_work"], m["enqueue_pps"] = x.Polls, x.AvgWork, x.EnqPPS
		m["enqueue_drop_pps"], m["bulk_avg"], m["kthread_sched_per_sec"] = x.EnqDrop, x.BulkAvg, x.KthSched
		m["full_budget_polls_per_sec"] = x.FullBudget
	}
	return m
}

// Median returns the median of v (NaN when empty).
func Median(v []float64) float64 { return Quantile(v, 0.5) }

// Quantile returns the q-quantile of v with linear interpolation.
func Quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func metricSeries(samples []Sample) map[string][]float64 {
	out := map[string][]float64{}
	for i := range samples {
		for k, v := range flatten(&samples[i]) {
			out[k] = append(out[k], v)
		}
	}
	// Metrics missing in some seconds count as 0 there.
	for k, v := range out {
		for len(v) < len(samples) {
			v = append(v, 0)
		}
		out[k] = v
	}
	return out
}

func medians(samples []Sample) map[string]float64 {
	out := map[string]float64{}
	for k, v := range metricSeries(samples) {
		out[k] = Median(v)
	}
	return out
}

// medianSample returns the second whose rx_pps is the median one.
func medianSample(s []Sample) Sample {
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]].Rx < s[idx[b]].Rx })
	return s[idx[len(idx)/2]]
}

// aggregate fills the medians, spreads and the run-compatible fields.
func (r *Result) aggregate() {
	// Retried repetitions were replaced; the other slow ones are left out
	// while normal ones are the majority.
	excluded := map[int]bool{}
	nslow, nkept, nretried := 0, 0, 0
	for _, rep := range r.Reps {
		switch {
		case rep.Retried:
			nretried++
		case rep.Slow:
			nslow++
		default:
			nkept++
		}
	}
	useSlow := nslow > nkept
	for _, rep := range r.Reps {
		if rep.Retried || (rep.Slow && !useSlow) {
			excluded[rep.Rep] = true
		}
	}
	if nretried > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d repetitions ran in a slow period (reference below %.0f%% of %.3g pps) and were measured again", nretried, r.Settings.SlowFactor*100, r.Settings.RefPPS))
	}
	if nslow > 0 {
		what := "excluded from medians"
		if useSlow {
			what = "kept: too few normal ones"
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%d of %d counted repetitions ran in a slow period (reference below %.0f%% of %.3g pps); %s", nslow, nslow+nkept, r.Settings.SlowFactor*100, r.Settings.RefPPS, what))
	}
	var counted []Sample
	for _, s := range r.PerSecond {
		if s.Probe || s.Rep < 0 || excluded[s.Rep] {
			continue
		}
		counted = append(counted, s)
		r.SimSeconds += s.Period
	}
	series := metricSeries(counted)
	r.Median = map[string]float64{}
	r.Spread = map[string]Spread{}
	for k, v := range series {
		med := Median(v)
		r.Median[k] = med
		sp := Spread{RepMin: math.Inf(1), RepMax: math.Inf(-1), SecP10: Quantile(v, 0.1), SecP90: Quantile(v, 0.9)}
		for _, rep := range r.Reps {
			if excluded[rep.Rep] {
				continue
			}
			rv := rep.Median[k]
			sp.RepMin = math.Min(sp.RepMin, rv)
			sp.RepMax = math.Max(sp.RepMax, rv)
		}
		if med != 0 {
			sp.RelRange = (sp.RepMax - sp.RepMin) / med
		}
		r.Spread[k] = sp
	}
	r.OfferedPPS, r.RxPPS, r.DeliveredPPS = r.Median["offered_pps"], r.Median["rx_pps"], r.Median["delivered_pps"]
	r.TimeSqueeze = r.Median["time_squeeze"]
	r.Drops = map[string]float64{}
	for k, v := range r.Median {
		if name, ok := strings.CutPrefix(k, "drops."); ok {
			r.Drops[name] = v
		}
	}
	for cpu := 0; ; cpu++ {
		p := fmt.Sprintf("cpu%d.", cpu)
		if _, ok := r.Median[p+"idle"]; !ok {
			break
		}
		r.CPU = append(r.CPU, CPUBusy{CPU: cpu, HardIRQ: r.Median[p+"hardirq"], SoftIRQ: r.Median[p+"softirq"],
			Thread: r.Median[p+"thread"], User: r.Median[p+"user"], System: r.Median[p+"system"],
			Idle: r.Median[p+"idle"], Steal: r.Median[p+"steal"]})
	}
	if r.Probe != nil {
		r.PollsPerSec = r.Probe.Polls
	}
	if r.Settings.Program == ProgRedirectCPU {
		c := &CPUMapResult{EnqueuePPS: r.RxPPS - r.Median["redirect_err_pps"], DropPPS: r.Drops["cpumap_enqueue"], KthreadPPS: r.Median["kthread_pps"]}
		if r.Probe != nil {
			c.BulkAvg, c.KthreadSched = r.Probe.BulkAvg, r.Probe.KthSched
		}
		r.CPUMap = c
	}
}

// extended reports whether the per-second output is extended now.
func (o *Options) extended() bool {
	if o.ExtendedToggle != nil {
		return o.ExtendedToggle.Load()
	}
	return o.Extended
}

// toggleOn flips b on every signal from sig until done is closed (SIGQUIT
// in xdp-bench toggles the extended output).
func toggleOn(sig <-chan os.Signal, b *atomic.Bool, done <-chan struct{}) {
	for {
		select {
		case <-sig:
			b.Store(!b.Load())
		case <-done:
			return
		}
	}
}
