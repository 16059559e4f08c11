package scenarios

import "time"

// Spec is a complete, validated scenario: what host, what configuration,
// what traffic, for how long. It is a pure blueprint (no clock, no RNG, no
// environment); host.Build turns it into running models.
type Spec struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// HW names the NIC profile (hw/profiles/nic); Costs optionally names a
	// cost profile other than the NIC profile's default.
	HW    string `toml:"hw"`
	Costs string `toml:"costs"`
	// CPUGHz runs the cost profile's CPU at this clock (0 = the profile's
	// own ghz): costs count as cycles and scale by ghz/cpu_ghz.
	CPUGHz float64 `toml:"cpu_ghz"`
	// CPUs is the number of simulated CPUs.
	CPUs int `toml:"cpus"`
	// Duration is the measured interval; Warmup runs first and is discarded.
	Duration Duration `toml:"duration"`
	Warmup   Duration `toml:"warmup"`
	Seed     uint64   `toml:"seed"`

	Kernel  Kernel  `toml:"kernel"`
	NIC     NIC     `toml:"nic"`
	NAPI    NAPI    `toml:"napi"`
	XDP     XDP     `toml:"xdp"`
	Cpumap  Cpumap  `toml:"cpumap"`
	Backlog Backlog `toml:"backlog"`
	GRO     GRO     `toml:"gro"`
	Stack   Stack   `toml:"stack"`
	App     App     `toml:"app"`
	Traffic Traffic `toml:"traffic"`
	Noise   Noise   `toml:"noise"`
	// Sweep maps dotted field paths to the values a sweep takes.
	Sweep map[string][]any `toml:"sweep"`

	// ringMax is the hw profile's ring_max, set with the defaults and used
	// by validate (0: not loaded, the largest of any profile applies).
	ringMax int
	// profGHz is the cost profile's clock (for cpu_ghz).
	profGHz float64
	// rcvbufSet: the scenario set stack.rcvbuf (SO_RCVBUF).
	rcvbufSet bool
}

// RcvbufSet reports whether the scenario set stack.rcvbuf, as an
// application that calls setsockopt(SO_RCVBUF) does: a TCP socket's size
// is then fixed (SOCK_RCVBUF_LOCK), not autotuned.
func (s *Spec) RcvbufSet() bool { return s.rcvbufSet }

// Duration is a time.Duration that decodes from "250us"-style strings.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Kernel selects kernel-version-dependent behaviour.
type Kernel struct {
	// HZ is the tick rate (jiffy = 1/HZ).
	HZ int `toml:"hz"`
	// KsoftirqdDefer selects the softirq behaviour of v4.9-v6.4 ("softirq: Let
	// ksoftirqd do its job": IRQ-exit softirqs wait while ksoftirqd is
	// runnable); false is v6.5+ (reverted, softirqs run inline).
	KsoftirqdDefer bool `toml:"ksoftirqd_defer"`
	// IRQTimeAccounting is CONFIG_IRQ_TIME_ACCOUNTING: hard-IRQ and softirq
	// time is kept out of the interrupted task's runtime. Off (the Kconfig
	// default, and the validation VM's 6.18 kernel) the fair scheduler
	// charges it to the task that was current, shrinking that task's share
	// of a CPU it shares with ksoftirqd or another thread.
	IRQTimeAccounting bool `toml:"irq_time_accounting"`
	// Sched is the fair scheduler's wake-up preemption: "eevdf" (v6.6+:
	// an eligible woken task preempts a current task that is not) or "cfs"
	// (up to v6.5: only a woken task a wake-up granularity behind does).
	Sched string `toml:"sched"`
	// Tick enables the scheduler tick (a hard IRQ at HZ on busy CPUs).
	Tick bool `toml:"tick"`
}

// NIC configures the receiving device.
type NIC struct {
	// Queues is the number of RX queues (RSS); IRQAffinity gives each queue's
	// CPU (queue i -> IRQAffinity[i % len]).
	Queues      int   `toml:"queues"`
	IRQAffinity []int `toml:"irq_affinity"`
	RingSize    int   `toml:"ring_size"`
	// ITRUsecs is the fixed interrupt interval when AdaptiveITR is false
	// (ethtool -C rx-usecs), and the start value when it is true.
	ITRUsecs    int  `toml:"itr_usecs"`
	AdaptiveITR bool `toml:"adaptive_itr"`
	// GRO is the device's NETIF_F_GRO (ethtool -K gro).
	GRO bool `toml:"gro"`
	// MaxPPS overrides the profile's packet-rate capability (0 = profile's).
	MaxPPS float64 `toml:"max_pps"`
}

// NAPI configures net_rx_action and NAPI instances.
type NAPI struct {
	Budget int `toml:"netdev_budget"`
	// BudgetUsecs is netdev_budget_usecs; 0 = 2 jiffies.
	BudgetUsecs int `toml:"netdev_budget_usecs"`
	Weight      int `toml:"weight"`
	// Threaded is /sys/class/net/DEV/threaded; ThreadCPUs pins the NAPI
	// kthreads (queue i -> ThreadCPUs[i % len]; default: the IRQ CPU).
	Threaded   bool  `toml:"threaded"`
	ThreadCPUs []int `toml:"thread_cpus"`
	// GROFlushTimeout and DeferHardIRQs are the per-device sysfs knobs.
	GROFlushTimeout Duration `toml:"gro_flush_timeout"`
	DeferHardIRQs   int      `toml:"napi_defer_hard_irqs"`
}

// XDP configures the XDP program on the device.
type XDP struct {
	// Program is none, drop, pass, tx, redirect-cpu, redirect-map (a devmap
	// entry: XDP_REDIRECT out of the Egress device), or rule (verdict per
	// rule).
	Program string `toml:"program"`
	// Egress is the NIC profile of redirect-map's egress device (empty:
	// the receiving device's hw).
	Egress string `toml:"egress"`
	// Rule chooses verdicts when Program is "rule": "all" (Action), "flow"
	// (flow i gets FlowActions[i % len]) or "fraction" (Fractions[i] of
	// packets get FractionActions[i]).
	Rule            string    `toml:"rule"`
	Action          string    `toml:"action"`
	FlowActions     []string  `toml:"flow_actions"`
	Fractions       []float64 `toml:"fractions"`
	FractionActions []string  `toml:"fraction_actions"`
	// CostNS overrides the program's per-packet cost (0 = profile's bpf_prog_run_xdp).
	CostNS float64 `toml:"cost_ns"`
	// Mode is native or skb (generic XDP).
	Mode string `toml:"mode"`
	// RedirectCPUs, ProgramMode and RemoteAction configure redirect-cpu like
	// xdp-bench redirect-cpu -c CPU -p MODE -r ACTION.
	RedirectCPUs []int  `toml:"cpus"`
	ProgramMode  string `toml:"program_mode"`
	RemoteAction string `toml:"remote_action"`
}

// Cpumap configures BPF_MAP_TYPE_CPUMAP entries.
type Cpumap struct {
	QSize int `toml:"qsize"`
	// Delivery is single (<5.13), list (5.13-6.14), gro (6.15+), napi, backlog.
	Delivery string `toml:"delivery"`
	// BulkSize is CPU_MAP_BULK_SIZE, Batch is CPUMAP_BATCH (both 8).
	BulkSize int `toml:"bulk_size"`
	Batch    int `toml:"batch"`
}

// Backlog configures the per-CPU backlog and RPS.
type Backlog struct {
	MaxBacklog int `toml:"netdev_max_backlog"`
	DevWeight  int `toml:"dev_weight"`
	// RPSCPUs is the device queue's rps_cpus set (empty = RPS off).
	RPSCPUs []int `toml:"rps_cpus"`
	// Threads selects backlog NAPI threads (thread_backlog_napi).
	Threads bool `toml:"threads"`
}

// GRO configures the GRO engine.
type GRO struct {
	// NormalBatch is net.core.gro_normal_batch.
	NormalBatch int `toml:"normal_batch"`
	MaxSize     int `toml:"max_size"`
}

// Stack configures the IP/UDP/TCP receive path.
type Stack struct {
	// Listen says whether a socket is bound to the traffic's port.
	Listen bool `toml:"listen"`
	// Rcvbuf is sk_rcvbuf in bytes (SO_RCVBUF doubled, as the kernel does;
	// unset: RmemDefault for UDP; for TCP, tcp_rmem[1] (TCPRmemDefault),
	// grown by receive-buffer autotuning up to TCPRmemMax). Setting it
	// fixes a TCP socket's size, as SO_RCVBUF does.
	Rcvbuf int `toml:"rcvbuf"`
	// TCPRmemMax is net.ipv4.tcp_rmem[2]: the most receive-buffer
	// autotuning (tcp_rcv_space_adjust) grows a TCP socket's sk_rcvbuf to
	// (32 MB since v6.16, 6 MB before).
	TCPRmemMax int `toml:"tcp_rmem_max"`
	// TCPModerateRcvbuf is net.ipv4.tcp_moderate_rcvbuf: receive-buffer
	// autotuning on (the default) or off.
	TCPModerateRcvbuf bool `toml:"tcp_moderate_rcvbuf"`
	// Truesize is the skb->truesize a received UDP datagram charges to the
	// socket (0 = the model's SKB_TRUESIZE of a half-page RX buffer, 2304).
	Truesize int `toml:"truesize"`
	// RawDrop loads `iptables -t raw -I PREROUTING -p udp -j DROP`: every
	// UDP skb is dropped at ip_rcv's PREROUTING hook (TCP passes; the
	// rule's cost for non-matching packets is not modelled). NIC devices
	// only.
	RawDrop bool `toml:"raw_drop"`
	// SkbDeferMax is net.core.skb_defer_max: how many consumed skbs a CPU
	// takes back from readers on other CPUs to free in its net_rx_action
	// (skb_attempt_defer_free, used by TCP; 128 in current kernels, 64
	// before; 0 = off, the reader frees, as before v5.19).
	SkbDeferMax int `toml:"skb_defer_max"`
	// UDPDeferFree makes udp_recvmsg hand a consumed skb back to the CPU
	// that built it with skb_attempt_defer_free, as TCP does (v6.18+;
	// seen in perf on the validation machine's 6.18 kernel); false: the
	// reader frees it (the kernels of §9).
	UDPDeferFree bool `toml:"udp_defer_free"`
	// BusyRead is net.core.busy_read in microseconds (sk_ll_usec of every
	// socket, as SO_BUSY_POLL sets it per socket): a reader that finds its
	// socket empty busy-polls the socket's NAPI for that long before it
	// sleeps (napi_busy_loop, BUSY_POLL_BUDGET 8 per poll; §5.7). 0 = off.
	// On veth the reader busy-polls the receiving end's NAPI (validate
	// --busy-poll sets SO_BUSY_POLL on its listener); skbs built by a
	// cpumap kthread carry no NAPI id, so readers behind redirect-cpu do
	// not busy-poll.
	BusyRead int `toml:"busy_read"`
	// PreferBusyPoll is SO_PREFER_BUSY_POLL on every socket (v5.11+):
	// with the device's napi.napi_defer_hard_irqs and napi.gro_flush_timeout
	// set, busy_poll_stop leaves the device IRQ masked and arms the NAPI
	// watchdog, so a reader that comes back within the timeout keeps
	// interrupts off; a softirq poll that a busy poller is waiting for
	// gives the NAPI up after a full poll.
	PreferBusyPoll bool `toml:"prefer_busy_poll"`
	// BusyPollBudget is SO_BUSY_POLL_BUDGET: packets per busy-poll
	// napi->poll (0 = BUSY_POLL_BUDGET, 8).
	BusyPollBudget int `toml:"busy_poll_budget"`
}

// App configures the application reading the socket(s).
type App struct {
	// Enabled runs a reading thread per socket.
	Enabled bool `toml:"enabled"`
	// CPUs pins application threads (socket i -> CPUs[i % len]).
	CPUs []int `toml:"cpus"`
	// Batch is messages per recvmmsg call (1 = recvmsg).
	Batch int `toml:"batch"`
}

// Traffic configures the traffic source, in pktgen's and netperf's vocabulary.
type Traffic struct {
	// Kind is pktgen, udp, tcp_stream or tcp_rr.
	Kind string `toml:"kind"`
	// PktSize is the frame size without FCS (pktgen -s, default 60).
	PktSize int `toml:"pkt_size"`
	Threads int `toml:"threads"`
	// Burst is pktgen's burst (xmit_more); 0 or 1 = no bursting.
	Burst int `toml:"burst"`
	Flows int `toml:"flows"`
	// Rate is "line" or a packet rate such as "1Mpps", "500kpps", "250000".
	Rate string `toml:"rate"`
	// ThreadMaxPPS is what one sender thread can produce.
	ThreadMaxPPS float64 `toml:"thread_max_pps"`
	// Count limits the packets sent (0 = unlimited).
	Count int64 `toml:"count"`
	// Jitter is the coefficient of variation of inter-burst gaps (0 = exact).
	Jitter float64 `toml:"jitter"`
	// Generator is the local sender of a veth scenario (hw = "veth"): live
	// (BPF_PROG_RUN live frames, batches of 64), afpacket (AF_PACKET
	// sendmmsg) or udp (UDP socket sendmmsg); GenCPU is the CPU it runs on.
	Generator string `toml:"generator"`
	GenCPU    int    `toml:"gen_cpu"`

	// TCP: streams, MSS, TSO burst size, PSH on every TSO burst.
	Streams  int  `toml:"streams"`
	MSS      int  `toml:"mss"`
	TSOBytes int  `toml:"tso_bytes"`
	PSH      bool `toml:"psh"`
	// TCP_RR: flows, request/response sizes, remote delay and one-way wire delay.
	ReqSize     int      `toml:"req_size"`
	RespSize    int      `toml:"resp_size"`
	RemoteDelay Duration `toml:"remote_delay"`
	WireDelay   Duration `toml:"wire_delay"`
}

// TCP reports whether the traffic is a TCP kind (tcp_stream or tcp_rr).
func (t Traffic) TCP() bool { return t.Kind == "tcp_stream" || t.Kind == "tcp_rr" }

// Noise configures run-to-run variation (all from named seeded streams).
type Noise struct {
	// Profile turns on the cost profile's per-function noise: in every CPU
	// step each kernel function's charge is scaled by a factor drawn with
	// that cost's cv and distribution (hw Cost.CV/Dist, or the profile's
	// [noise] defaults).
	Profile bool `toml:"profile"`
	// CostCV, when > 0, gives every function this coefficient of variation
	// (with its profile distribution), with or without Profile.
	CostCV float64 `toml:"cost_cv"`
	// IRQJitter is the CV of interrupt delivery delay.
	IRQJitter float64 `toml:"irq_jitter"`
	// TimerJitter is the mean expiry latency of kernel timers (the
	// gro_flush_timeout watchdog and the TCP delayed-ACK timer): each expiry
	// is late by an exponential delay of this mean. 0 = exact.
	TimerJitter Duration `toml:"timer_jitter"`
	// Background is, per CPU, the share of the CPU other processes want
	// (0..0.95; a shared machine); empty = none. Used by the veth layer.
	Background []float64 `toml:"background"`
}
