package validate

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
)

// TCPStreamOptions configure MeasureTCPStream: one netperf-like TCP stream
// from the sender namespace into a TCP sink in the receiving one.
type TCPStreamOptions struct {
	// XDP attaches the native XDP_PASS program to the receiving veth. The
	// peer's TSO is then off, so MSS-sized 1514 B frames arrive as from a
	// NIC without LRO (validate-notes D).
	XDP bool `json:"xdp_pass"`
	// GRO is ethtool -K rcv gro on|off.
	GRO bool `json:"gro"`
	// SenderCPU and ReaderCPU pin the writer and the sink's reader.
	SenderCPU int `json:"sender_cpu"`
	ReaderCPU int `json:"reader_cpu"`
	// Threaded turns on threaded NAPI on the receiving veth and pins its
	// napi/<dev> kthread to ThreadedCPU, so the receive path runs there
	// instead of in the sender's softirq (needs XDP or GRO, which enable
	// veth NAPI).
	Threaded    bool `json:"threaded"`
	ThreadedCPU int  `json:"threaded_cpu"`
	// DropEvery makes the XDP program drop every DropEvery-th frame per
	// CPU (0: none), so the receiver holds segments out of order and the
	// sender recovers with SACK.
	DropEvery uint32 `json:"drop_every,omitempty"`
	// Warmup runs traffic before measuring; Duration is measured.
	Warmup   time.Duration `json:"-"`
	Duration time.Duration `json:"-"`
}

// TCPStreamResult is what one MeasureTCPStream measured over Duration,
// per second.
type TCPStreamResult struct {
	Options TCPStreamOptions `json:"options"`
	Seconds float64          `json:"seconds"`
	// SegmentsPerSec counts frames the XDP program saw (with XDP), i.e.
	// wire segments; 0 without XDP.
	SegmentsPerSec float64 `json:"segments_per_sec"`
	// SkbsPerSec is Tcp InSegs of the receiving namespace: post-GRO skbs
	// (plus the few ACKs the sink receives).
	SkbsPerSec float64 `json:"skbs_per_sec"`
	// AcksPerSec is Tcp OutSegs of the receiving namespace (the sink sends
	// only ACKs).
	AcksPerSec float64 `json:"acks_per_sec"`
	// RetransPerSec is the sender namespace's Tcp RetransSegs.
	RetransPerSec float64 `json:"retrans_per_sec"`
	// BacklogCoalescePerSec is the receiver's TcpExt TCPBacklogCoalesce:
	// skbs merged into the tail of the socket backlog (tcp_add_backlog)
	// because the reader held the socket.
	BacklogCoalescePerSec float64 `json:"backlog_coalesce_per_sec"`
	// RcvCoalescePerSec is TcpExt TCPRcvCoalesce: skbs merged into the
	// receive queue's tail skb (tcp_try_coalesce in tcp_queue_rcv), whose
	// own skb is freed at once.
	RcvCoalescePerSec float64 `json:"rcv_coalesce_per_sec"`
	// OfoQueuePerSec is the receiver's TcpExt TCPOFOQueue (skbs put in the
	// out-of-order queue), SackRecoveryPerSec the sender's
	// TCPSackRecovery (recoveries entered) and LostRetransmitPerSec its
	// TCPLostRetransmit (retransmissions lost again).
	OfoQueuePerSec       float64 `json:"ofo_queue_per_sec"`
	SackRecoveryPerSec   float64 `json:"sack_recovery_per_sec"`
	LostRetransmitPerSec float64 `json:"lost_retransmit_per_sec"`
	// DroppedPerSec is what the XDP program dropped (DropEvery).
	DroppedPerSec float64 `json:"xdp_dropped_per_sec"`
	// ReadsPerSec and GoodputGbps are the sink's read(2) calls and payload.
	ReadsPerSec float64 `json:"reads_per_sec"`
	GoodputGbps float64 `json:"goodput_gbps"`
	// CPU is each CPU's share of time by /proc/stat class.
	CPU []CPUShare `json:"cpu"`
	// Rcv is the receiving socket's autotuning state at the end of the
	// measured interval (nil if it could not be read).
	Rcv *TCPRcvState `json:"receiver,omitempty"`
}

// CPUShare is one CPU's /proc/stat time shares over an interval.
type CPUShare struct {
	CPU     int     `json:"cpu"`
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	SoftIRQ float64 `json:"softirq"`
	Idle    float64 `json:"idle"`
}

// MeasureTCPStream builds the harness, runs one TCP stream for Warmup +
// Duration and measures it. Everything it creates is removed before it
// returns, also when ctx is cancelled.
func MeasureTCPStream(ctx context.Context, o TCPStreamOptions) (*TCPStreamResult, error) {
	h, x, closeAll, err := tcpHarness(XDPSpec{Program: ProgPass, DropEvery: o.DropEvery}, o.XDP, o.GRO, o.Threaded, o.ThreadedCPU)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	sink, err := StartTCPSink(h, o.ReaderCPU)
	if err != nil {
		return nil, err
	}
	defer sink.Stop()
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sent atomic.Uint64
	errc := goPinned(h.sndNs, o.SenderCPU, func() error {
		now := time.Now()
		p := &pacer{ctx: gctx, start: now, deadline: now.Add(o.Warmup + o.Duration + time.Second), sent: &sent}
		return genTCP(p)
	})
	stop := func() error {
		cancel()
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	select {
	case <-time.After(o.Warmup):
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	case err := <-errc:
		return nil, fmt.Errorf("validate: TCP sender stopped in the warm-up: %v", err)
	}
	a, err := tcpSnap(h, x, sink)
	if err != nil {
		stop()
		return nil, err
	}
	select {
	case <-time.After(o.Duration):
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	b, err := tcpSnap(h, x, sink)
	rcv, rok := sink.RcvState()
	if serr := stop(); err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	r := tcpResult(o, a, b)
	if rok {
		r.Rcv = &rcv
	}
	return r, nil
}

// tcpHarness builds the veth pair for the TCP measurements, with the
// program of spec (XDP_PASS) loaded (its counters count the frames), attached natively
// to the receiving veth when xdp, the receiving veth's GRO set, and threaded
// NAPI pinned to threadedCPU when threaded. closeAll removes everything; on
// error nothing is left.
func tcpHarness(spec XDPSpec, xdp, gro, threaded bool, threadedCPU int) (h *Harness, x *XDPObjects, closeAll func(), err error) {
	if h, err = NewHarness(); err != nil {
		return nil, nil, nil, err
	}
	if x, err = LoadXDP(spec); err != nil {
		h.Close()
		return nil, nil, nil, err
	}
	closeAll = func() { x.Close(); h.Close() }
	if xdp {
		err = h.AttachXDP(x.Prog, false)
	}
	if err == nil {
		err = h.Configure(NetSettings{GRO: gro, Threaded: threaded, ThreadedCPU: threadedCPU})
	}
	if err == nil && threaded {
		_, err = h.PinNapiThread(threadedCPU)
	}
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	return h, x, closeAll, nil
}

// tcpSnapshot is the counters MeasureTCPStream reads at both ends.
type tcpSnapshot struct {
	t            time.Time
	xdpPkts      uint64
	rcv, snd     SNMP
	rcvExt       SNMP // /proc/net/netstat of the receiver
	sndExt       SNMP // and of the sender
	bytes, reads uint64
	stat         []CPUTimes
}

func tcpSnap(h *Harness, x *XDPObjects, s *TCPSink) (*tcpSnapshot, error) {
	c, _, err := ReadCounter(x.Counters, SlotRx)
	if err != nil {
		return nil, err
	}
	rcv, err := h.SNMP()
	if err != nil {
		return nil, err
	}
	snd, err := readSNMPIn(h.sndNs)
	if err != nil {
		return nil, err
	}
	ext, err := readProcNetIn(h.rcvNs, "netstat")
	if err != nil {
		return nil, err
	}
	sext, err := readProcNetIn(h.sndNs, "netstat")
	if err != nil {
		return nil, err
	}
	st, err := readProcStat()
	if err != nil {
		return nil, err
	}
	return &tcpSnapshot{t: time.Now(), xdpPkts: c.Packets, rcv: rcv, snd: snd, rcvExt: ext, sndExt: sext,
		bytes: s.Bytes.Load(), reads: s.Reads.Load(), stat: st}, nil
}

func tcpResult(o TCPStreamOptions, a, b *tcpSnapshot) *TCPStreamResult {
	dt := b.t.Sub(a.t).Seconds()
	d := func(x, y int64) float64 { return float64(y-x) / dt }
	r := &TCPStreamResult{Options: o, Seconds: dt,
		SegmentsPerSec:        float64(b.xdpPkts-a.xdpPkts) / dt,
		SkbsPerSec:            d(a.rcv.Get("Tcp", "InSegs"), b.rcv.Get("Tcp", "InSegs")),
		AcksPerSec:            d(a.rcv.Get("Tcp", "OutSegs"), b.rcv.Get("Tcp", "OutSegs")),
		RetransPerSec:         d(a.snd.Get("Tcp", "RetransSegs"), b.snd.Get("Tcp", "RetransSegs")),
		BacklogCoalescePerSec: d(a.rcvExt.Get("TcpExt", "TCPBacklogCoalesce"), b.rcvExt.Get("TcpExt", "TCPBacklogCoalesce")),
		RcvCoalescePerSec:     d(a.rcvExt.Get("TcpExt", "TCPRcvCoalesce"), b.rcvExt.Get("TcpExt", "TCPRcvCoalesce")),
		OfoQueuePerSec:        d(a.rcvExt.Get("TcpExt", "TCPOFOQueue"), b.rcvExt.Get("TcpExt", "TCPOFOQueue")),
		SackRecoveryPerSec:    d(a.sndExt.Get("TcpExt", "TCPSackRecovery"), b.sndExt.Get("TcpExt", "TCPSackRecovery")),
		LostRetransmitPerSec:  d(a.sndExt.Get("TcpExt", "TCPLostRetransmit"), b.sndExt.Get("TcpExt", "TCPLostRetransmit")),
		ReadsPerSec:           float64(b.reads-a.reads) / dt,
		GoodputGbps:           float64(b.bytes-a.bytes) * 8 / dt / 1e9,
	}
	r.CPU = cpuShares(a.stat, b.stat)
	return r
}

// WriteTCPStream prints a result in netperf's receive-side terms.
func WriteTCPStream(w io.Writer, r *TCPStreamResult) {
	napi := "in the sender's softirq"
	if r.Options.Threaded {
		napi = fmt.Sprintf("threaded on CPU %d", r.Options.ThreadedCPU)
	}
	fmt.Fprintf(w, "TCP_STREAM into the veth pair (xdp_pass %v, gro %v; sender CPU %d, reader CPU %d, veth NAPI %s), %.1f s measured\n",
		r.Options.XDP, r.Options.GRO, r.Options.SenderCPU, r.Options.ReaderCPU, napi, r.Seconds)
	fmt.Fprintf(w, "  throughput %.3f Gbit/s; segments %s/s (XDP), skbs %s/s (Tcp InSegs), %.1f segs/skb\n",
		r.GoodputGbps, GroupThousands(int64(r.SegmentsPerSec)), GroupThousands(int64(r.SkbsPerSec)), ratio(r.SegmentsPerSec, r.SkbsPerSec))
	fmt.Fprintf(w, "  acks %s/s (Tcp OutSegs), %.1f segs/ack; reads %s/s; retransmits %s/s\n",
		GroupThousands(int64(r.AcksPerSec)), ratio(r.SegmentsPerSec, r.AcksPerSec), GroupThousands(int64(r.ReadsPerSec)), GroupThousands(int64(r.RetransPerSec)))
	fmt.Fprintf(w, "  socket backlog: %s skbs/s coalesced into its tail (TcpExt TCPBacklogCoalesce), %.0f%% of the skbs\n",
		GroupThousands(int64(r.BacklogCoalescePerSec)), 100*ratio(r.BacklogCoalescePerSec, r.SkbsPerSec))
	fmt.Fprintf(w, "  receive queue: %s skbs/s coalesced into its tail (TcpExt TCPRcvCoalesce), %.0f%% of the skbs\n",
		GroupThousands(int64(r.RcvCoalescePerSec)), 100*ratio(r.RcvCoalescePerSec, r.SkbsPerSec))
	if r.Options.DropEvery > 1 {
		fmt.Fprintf(w, "  losses: XDP dropped 1 in %d frames (%s/s); out-of-order queue %s skbs/s (TcpExt TCPOFOQueue), SACK recoveries %s/s, lost retransmissions %s/s\n",
			r.Options.DropEvery, GroupThousands(int64(r.SegmentsPerSec/float64(r.Options.DropEvery))), GroupThousands(int64(r.OfoQueuePerSec)),
			GroupThousands(int64(r.SackRecoveryPerSec)), GroupThousands(int64(r.LostRetransmitPerSec)))
	}
	if r.Rcv != nil {
		fmt.Fprintf(w, "  receiver: sk_rcvbuf %s B, rcv_rtt %.3f ms, rcv_space %s B (receive-buffer autotuning)\n",
			GroupThousands(int64(r.Rcv.Rcvbuf)), float64(r.Rcv.RcvRTTus)/1000, GroupThousands(int64(r.Rcv.RcvSpace)))
	}
	fmt.Fprintln(w, "  cpu   user%  sys%  softirq%  idle%")
	for _, c := range r.CPU {
		fmt.Fprintf(w, "  %-4d %5.1f %5.1f %9.1f %6.1f\n", c.CPU, 100*c.User, 100*c.System, 100*c.SoftIRQ, 100*c.Idle)
	}
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// tcpStreamCLI implements `rxsim validate tcp-stream`.
func tcpStreamCLI(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("rxsim validate tcp-stream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := TCPStreamOptions{}
	fs.BoolVar(&o.XDP, "xdp", true, "attach native XDP_PASS on the receiving veth (1514 B frames, as from a NIC)")
	fs.BoolVar(&o.GRO, "gro", false, "GRO on the receiving veth")
	fs.IntVar(&o.SenderCPU, "sender-cpu", 0, "CPU of the sending thread (and of the veth NAPI)")
	fs.IntVar(&o.ReaderCPU, "reader-cpu", 1, "CPU of the sink's reader")
	fs.IntVar(&o.ThreadedCPU, "threaded-cpu", -1, "threaded NAPI on the receiving veth, its kthread pinned to this CPU (-1: NAPI in softirq)")
	var dropEvery uint
	fs.UintVar(&dropEvery, "drop-every", 0, "the XDP program drops every N-th frame per CPU (0: none; needs --xdp)")
	check := func() error {
		o.Threaded = o.ThreadedCPU >= 0
		if dropEvery == 1 || dropEvery > 1<<20 || (dropEvery > 0 && !o.XDP) {
			return usageErr("--drop-every %d: want 0, or 2..%d with --xdp", dropEvery, 1<<20)
		}
		o.DropEvery = uint32(dropEvery)
		if o.Threaded && !o.XDP && !o.GRO {
			return usageErr("--threaded-cpu needs veth NAPI: --xdp or --gro")
		}
		if n := runtime.NumCPU(); o.ThreadedCPU >= n {
			return usageErr("--threaded-cpu %d not in 0..%d", o.ThreadedCPU, n-1)
		}
		return nil
	}
	return runTCPCLI(stdout, fs, args, &o.Warmup, &o.Duration, 2*time.Second, 5*time.Second, check, func(ctx context.Context) (any, error) {
		return MeasureTCPStream(ctx, o)
	}, func(w io.Writer, r any) { WriteTCPStream(w, r.(*TCPStreamResult)) })
}

// runTCPCLI is the common part of the TCP subcommands: fs gains --warmup,
// --duration (stored in warmup and duration, with their defaults) and
// --json; after parsing, check (may be nil) validates the other flags; the
// measurement runs until done or SIGINT/SIGTERM, and its result prints as
// JSON or with text.
func runTCPCLI(stdout io.Writer, fs *flag.FlagSet, args []string, warmup, duration *time.Duration, defWarmup, defDuration time.Duration,
	check func() error, measure func(context.Context) (any, error), text func(io.Writer, any)) error {
	fs.DurationVar(warmup, "warmup", defWarmup, "traffic before measuring")
	fs.DurationVar(duration, "duration", defDuration, "measured time")
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return usageErr("%v", err)
	}
	if *duration <= 0 || *duration > MaxDuration || *warmup < 0 || *warmup > MaxDuration {
		return usageErr("--duration must be in (0, %v] and --warmup in [0, %v]", MaxDuration, MaxDuration)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := measure(ctx)
	if err != nil {
		return err
	}
	if *jsonOut {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(r)
	}
	text(stdout, r)
	return nil
}

// readSNMPIn reads /proc/net/snmp of namespace ns.
func readSNMPIn(ns netns.NsHandle) (SNMP, error) { return readProcNetIn(ns, "snmp") }

// readProcNetIn reads /proc/net/NAME (snmp or netstat, the same layout) of
// namespace ns.
func readProcNetIn(ns netns.NsHandle, name string) (SNMP, error) {
	var s SNMP
	err := inNetns(ns, func() error {
		f, err := os.Open("/proc/thread-self/net/" + name)
		if err != nil {
			return err
		}
		defer f.Close()
		s, err = ParseSNMP(f)
		return err
	})
	return s, err
}
