package host

import "github.com/rxsim/rxsim/models/stack"

// Result is what one run measured over its measured interval (warm-up
// excluded). Rates are per simulated second. JSON field names are shared
// with `rxsim validate --json`.
type Result struct {
	Scenario   string  `json:"scenario"`
	Seed       uint64  `json:"seed"`
	SimSeconds float64 `json:"sim_seconds"`
	OfferedPPS float64 `json:"offered_pps"`
	// RxPPS is packets the driver handed to XDP (or to the stack without XDP).
	RxPPS float64 `json:"rx_pps"`
	// Drops maps a drop reason to packets per second (reasons with no drops omitted).
	Drops        map[string]float64 `json:"drops"`
	DeliveredPPS float64            `json:"delivered_pps"`
	XDPTxPPS     float64            `json:"xdp_tx_pps,omitempty"`
	RedirectPPS  float64            `json:"redirect_pps,omitempty"`
	IRQsPerSec   float64            `json:"irqs_per_sec"`
	PollsPerSec  float64            `json:"polls_per_sec"`
	PktsPerPoll  float64            `json:"pkts_per_poll"`
	TimeSqueeze  float64            `json:"time_squeeze"`
	// TimeSqueezeTotal is the count over the measured interval.
	TimeSqueezeTotal uint64 `json:"time_squeeze_total"`
	CPU              []CPU  `json:"cpu"`
	// Softnet is softnet_stat per CPU over the interval.
	Softnet []Softnet `json:"softnet"`
	// PerCPURx is XDP/driver receive per CPU (xdp-bench per-CPU lines).
	PerCPURx []float64 `json:"per_cpu_rx_pps"`
	// Funcs is CPU time per function per CPU in ns over the interval.
	Funcs []FuncTime `json:"funcs,omitempty"`
	// Ledger is the conservation check over the whole run.
	Ledger LedgerReport `json:"ledger"`
	// Ext holds results of the later models (cpumap, udp, tcp, gro, latency);
	// nil sections are omitted.
	Ext
	WallSeconds float64 `json:"wall_seconds"`
}

// Ext are the result sections added by the stack, cpumap and GRO models.
type Ext struct {
	Cpumap    *CpumapResult  `json:"cpumap,omitempty"`
	UDP       *UDPResult     `json:"udp,omitempty"`
	LatencyUS *Latency       `json:"latency_us,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
	// GoodputGbps is TCP payload read by the applications (netperf
	// TCP_STREAM's throughput), TransactionsPerSec completed TCP_RR
	// transactions; LatencyUS is then per transaction (netperf's
	// P50/P90/P99_LATENCY). AcksPerSec counts the host's pure ACKs.
	GoodputGbps        float64  `json:"goodput_gbps,omitempty"`
	TransactionsPerSec float64  `json:"transactions_per_sec,omitempty"`
	AcksPerSec         *float64 `json:"acks_per_sec,omitempty"`
	// CPUTotalPercent is busy time summed over all CPUs (netperf -c, as a
	// sum: 100 is one CPU's worth).
	CPUTotalPercent float64    `json:"cpu_total_percent,omitempty"`
	TCP             *TCPResult `json:"tcp,omitempty"`
	GRO             *GROResult `json:"gro,omitempty"`
	BusyPoll        *BusyPoll  `json:"busy_poll,omitempty"`
}

// BusyPoll is the readers' busy polling (stack.busy_read): sk_busy_loop
// calls and those that ended without data, the napi->poll calls the busy
// pollers made and the packets they took (TcpExt BusyPollRxPackets), and
// the time spent spinning, in percent of one CPU.
type BusyPoll struct {
	ReadUS         int     `json:"busy_read_us"`
	Budget         int     `json:"busy_poll_budget"`
	Prefer         bool    `json:"prefer_busy_poll"`
	LoopsPerSec    float64 `json:"loops_per_sec"`
	TimeoutsPerSec float64 `json:"timeouts_per_sec"`
	PollsPerSec    float64 `json:"polls_per_sec"`
	RxPPS          float64 `json:"rx_pps"`
	SpinPercent    float64 `json:"spin_percent"`
}

// TCPResult is the TCP layer's detail (rates per second).
type TCPResult struct {
	// Kind is the traffic: tcp_stream or tcp_rr.
	Kind           string  `json:"kind"`
	SegmentsPerSec float64 `json:"segments_per_sec"`
	SkbsPerSec     float64 `json:"skbs_per_sec"`
	// SegsPerSkb is segments per skb reaching tcp_v4_rcv.
	SegsPerSkb float64 `json:"segs_per_skb"`
	// Acks by where they were sent from.
	AcksSoftirq   float64 `json:"acks_softirq_per_sec"`
	AcksBacklog   float64 `json:"acks_backlog_per_sec"`
	AcksApp       float64 `json:"acks_app_per_sec"`
	AcksDelack    float64 `json:"acks_delack_per_sec"`
	DupAcks       float64 `json:"dup_acks_per_sec"`
	SegsPerAck    float64 `json:"segs_per_ack"`
	ReadsPerSec   float64 `json:"reads_per_sec"`
	WakeupsPerSec float64 `json:"wakeups_per_sec"`
	// WokenWakesPerSec is sk_data_ready calls that found the reader woken
	// but not yet run (its wait entry still queued).
	WokenWakesPerSec float64 `json:"woken_wake_calls_per_sec"`
	// RcvbufBytes is sk_rcvbuf at the end, the mean over the sockets (what
	// netperf reports as the receive socket size), and Autotuned whether
	// receive-buffer autotuning could grow it; RcvRTTus is the receivers'
	// RTT estimate then (rcv_rtt_est, mean), which autotuning sizes by.
	RcvbufBytes int     `json:"rcvbuf_bytes"`
	Autotuned   bool    `json:"rcvbuf_autotuned"`
	RcvRTTus    float64 `json:"rcv_rtt_us"`
	// BackloggedPerSec is skbs put on sk_backlog (the reader owned the socket).
	BackloggedPerSec float64 `json:"backlogged_per_sec"`
	// BacklogCoalescePerSec is those merged into the backlog's tail skb
	// (TcpExt TCPBacklogCoalesce).
	BacklogCoalescePerSec float64 `json:"backlog_coalesce_per_sec"`
	// RcvCoalescePerSec is skbs merged into the receive queue's tail skb
	// (TcpExt TCPRcvCoalesce).
	RcvCoalescePerSec float64 `json:"rcv_coalesce_per_sec"`
	// CsumSkbsPerSec is skbs tcp_v4_rcv checksummed in software
	// (tcp_checksum_complete of CHECKSUM_NONE skbs: cpumap-built, not
	// through GRO).
	CsumSkbsPerSec float64 `json:"csum_skbs_per_sec,omitempty"`
	// DeferredFreesPerSec is consumed skbs handed back to the CPU that
	// built them (skb_attempt_defer_free), DeferKicksPerSec the IPIs
	// that made such a CPU flush its list.
	DeferredFreesPerSec float64 `json:"deferred_frees_per_sec"`
	DeferKicksPerSec    float64 `json:"defer_kicks_per_sec"`
	// OfoQueued is segments held in the out-of-order queue above a hole,
	// DupDrops segments dropped because their data had arrived already.
	OfoQueued   float64 `json:"ofo_queued_per_sec"`
	DupDrops    float64 `json:"dup_drops_per_sec"`
	RcvbufDrops float64 `json:"rcvbuf_drops_per_sec"`
	// Retransmits is segments the senders sent again, Recoveries the SACK
	// loss recoveries they entered, RTOs their retransmission timeouts.
	Retransmits float64 `json:"retransmits_per_sec"`
	Recoveries  float64 `json:"recoveries_per_sec"`
	RTOs        uint64  `json:"rtos"`
	// ServiceDemand is CPU time summed over CPUs per unit of work, netperf
	// style: us per KB for a stream, us per transaction for TCP_RR.
	ServiceDemand     float64 `json:"service_demand"`
	ServiceDemandUnit string  `json:"service_demand_unit"`
}

// GROResult sums the GRO nodes' counters over the measured interval.
type GROResult struct {
	// MergedPerSuperSkb is segments per completed held skb.
	MergedPerSuperSkb float64 `json:"merged_per_super_skb"`
	// SegsPerSkb is segments per skb delivered by gro_normal_list
	// (GRO_NORMAL skbs included).
	SegsPerSkb float64 `json:"segs_per_skb"`
	// Flushes counts completed held skbs by flush reason.
	Flushes      map[string]uint64 `json:"flushes"`
	ListsPerSec  float64           `json:"lists_per_sec"`
	SkbsPerList  float64           `json:"skbs_per_list"`
	NormalPerSec float64           `json:"normal_per_sec"`
}

// CpumapResult is xdp-bench's cpumap section.
type CpumapResult struct {
	EnqueuePPS         float64 `json:"enqueue_pps"`
	DropPPS            float64 `json:"drop_pps"`
	BulkAvg            float64 `json:"bulk_avg"`
	KthreadPPS         float64 `json:"kthread_pps"`
	KthreadSchedPerSec float64 `json:"kthread_sched_per_sec"`
	// Delivery is the remote delivery mode; CPUs the target CPUs.
	Delivery string `json:"delivery,omitempty"`
	CPUs     []int  `json:"cpus,omitempty"`
	// XDPPassPPS, XDPDropPPS, XDPRedirectPPS are the cpumap program's
	// xdp_stats per second (0 without a program).
	XDPPassPPS     float64 `json:"xdp_pass_pps"`
	XDPDropPPS     float64 `json:"xdp_drop_pps"`
	XDPRedirectPPS float64 `json:"xdp_redirect_pps"`
	// RxBusy and RemoteBusy are the busiest RX and remote CPU's busy
	// fraction; RxNSPerPkt and RemoteNSPerPkt their CPU time per packet
	// (received, dequeued).
	RxBusy         float64 `json:"rx_busy"`
	RemoteBusy     float64 `json:"remote_busy"`
	RxNSPerPkt     float64 `json:"rx_ns_per_pkt"`
	RemoteNSPerPkt float64 `json:"remote_ns_per_pkt"`
	// KthreadBatchAvg is frames per kthread (or NAPI) iteration: the list
	// length of list delivery.
	KthreadBatchAvg float64 `json:"kthread_batch_avg"`
	// Limit is the side that limits delivery: remote (saturated, ring
	// overflowing), rx (the RX CPU saturated first), qsize (the ring
	// overflows while the remote CPU still sleeps at times), or none.
	Limit string `json:"limit"`
}

// UDPResult holds /proc/net/snmp Udp counters per second.
type UDPResult struct {
	InDatagrams  float64 `json:"in_datagrams"`
	NoPorts      float64 `json:"no_ports"`
	RcvbufErrors float64 `json:"rcvbuf_errors"`
	// DeferredFrees is consumed datagrams whose skb the reader handed back
	// to the CPU that built it (stack.udp_defer_free).
	DeferredFrees float64 `json:"deferred_frees,omitempty"`
}

// Latency is a latency distribution summary in microseconds, with the
// histogram it was read from.
type Latency struct {
	P50  float64      `json:"p50"`
	P90  float64      `json:"p90"`
	P99  float64      `json:"p99"`
	Mean float64      `json:"mean"`
	Hist *LatencyHist `json:"hist,omitempty"`
}

// LatencyHist is a latency histogram's non-empty buckets: UpperUS[i] is the
// largest latency bucket i holds, in microseconds (increasing), Counts[i]
// its number of samples. Bucket width is at most 1/128 of the value.
type LatencyHist struct {
	UpperUS []float64 `json:"upper_us"`
	Counts  []uint64  `json:"counts"`
}

// Merge returns the sum of h and o (buckets with the same bound add).
func (h *LatencyHist) Merge(o *LatencyHist) *LatencyHist {
	if h == nil {
		return o
	}
	if o == nil {
		return h
	}
	out := &LatencyHist{}
	i, j := 0, 0
	for i < len(h.UpperUS) || j < len(o.UpperUS) {
		switch {
		case j == len(o.UpperUS) || (i < len(h.UpperUS) && h.UpperUS[i] < o.UpperUS[j]):
			out.UpperUS, out.Counts = append(out.UpperUS, h.UpperUS[i]), append(out.Counts, h.Counts[i])
			i++
		case i == len(h.UpperUS) || o.UpperUS[j] < h.UpperUS[i]:
			out.UpperUS, out.Counts = append(out.UpperUS, o.UpperUS[j]), append(out.Counts, o.Counts[j])
			j++
		default:
			out.UpperUS, out.Counts = append(out.UpperUS, h.UpperUS[i]), append(out.Counts, h.Counts[i]+o.Counts[j])
			i, j = i+1, j+1
		}
	}
	return out
}

// latencyOf summarises a histogram in microseconds.
func latencyOf(h *stack.Histogram) *Latency {
	up, n := h.Buckets()
	for i := range up {
		up[i] /= 1e3
	}
	return &Latency{P50: h.Quantile(0.5) / 1e3, P90: h.Quantile(0.9) / 1e3,
		P99: h.Quantile(0.99) / 1e3, Mean: h.Mean() / 1e3, Hist: &LatencyHist{UpperUS: up, Counts: n}}
}

// CPU is one CPU's busy fraction per class over the interval.
type CPU struct {
	ID int `json:"id"`
	// Classes maps hardirq, softirq, ksoftirqd, kthread, napi, app to the
	// fraction of time busy; Idle is the rest.
	Classes map[string]float64 `json:"classes"`
	Busy    float64            `json:"busy"`
	Idle    float64            `json:"idle"`
}

// Softnet is one CPU's softnet_stat over the interval.
type Softnet struct {
	CPU         int    `json:"cpu"`
	Processed   uint64 `json:"processed"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
	ReceivedRPS uint64 `json:"received_rps"`
}

// FuncTime is one function's CPU time on one CPU.
type FuncTime struct {
	CPU  int     `json:"cpu"`
	Func string  `json:"func"`
	NS   int64   `json:"ns"`
	Frac float64 `json:"frac"`
}

// LedgerReport is the conservation check: offered = delivered + dropped + queued.
type LedgerReport struct {
	Offered   uint64            `json:"offered"`
	Delivered map[string]uint64 `json:"delivered"`
	Dropped   map[string]uint64 `json:"dropped"`
	Queued    int               `json:"queued"`
	Imbalance int64             `json:"imbalance"`
}
