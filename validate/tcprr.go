package validate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// TCPRRPort is the port of the request/response servers in the receiving
// namespace.
const TCPRRPort = 12865

// MaxRRFlows bounds the flows of MeasureTCPRR (each is a thread on each
// side).
const MaxRRFlows = 256

// TCPRROptions configure MeasureTCPRR: netperf TCP_RR between the
// namespaces, Flows connections of 1-byte requests and responses, each with
// a client thread pinned to ClientCPU and a server thread pinned to
// ServerCPU; BusyPollUS sets SO_BUSY_POLL on the servers' sockets.
type TCPRROptions struct {
	Flows      int `json:"flows"`
	ClientCPU  int `json:"client_cpu"`
	ServerCPU  int `json:"server_cpu"`
	BusyPollUS int `json:"busy_poll_us"`
	// XDP attaches the native XDP_PASS program to the receiving veth: its
	// NAPI then carries the requests, so the servers can busy-poll it
	// (without it veth delivers through the backlog, which has no NAPI id).
	XDP      bool          `json:"xdp_pass"`
	Warmup   time.Duration `json:"-"`
	Duration time.Duration `json:"-"`
}

// TCPRRResult is what MeasureTCPRR measured over Duration.
type TCPRRResult struct {
	Options            TCPRROptions `json:"options"`
	Seconds            float64      `json:"seconds"`
	TransactionsPerSec float64      `json:"transactions_per_sec"`
	// PerFlowMin and PerFlowMax are the slowest and fastest flow's
	// transactions per second: how evenly the servers' CPU is shared.
	PerFlowMin float64 `json:"per_flow_min"`
	PerFlowMax float64 `json:"per_flow_max"`
	// MaxLatencyUS is the longest transaction any flow had in the measured
	// interval (µs): a server that keeps its CPU (a busy poller that is
	// never preempted) makes the others wait for whole slices.
	MaxLatencyUS float64 `json:"max_latency_us"`
	// BusyPollRxPackets is TcpExt BusyPollRxPackets of the receiving
	// namespace per second: packets the servers' busy polls took.
	BusyPollRxPackets float64    `json:"busy_poll_rx_packets_per_sec"`
	CPU               []CPUShare `json:"cpu"`
}

// MeasureTCPRR builds the harness, runs the flows for Warmup + Duration and
// measures them. Everything it creates is removed before it returns, also
// when ctx is cancelled.
func MeasureTCPRR(ctx context.Context, o TCPRROptions) (*TCPRRResult, error) {
	if o.Flows < 1 || o.Flows > MaxRRFlows {
		return nil, usageErr("--flows %d not in 1..%d", o.Flows, MaxRRFlows)
	}
	h, _, closeAll, err := tcpHarness(XDPSpec{Program: ProgPass}, o.XDP, false, false, -1)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	srv, err := startRRServers(h, o)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	cctx, cancel := context.WithCancel(ctx)
	counts := make([]atomic.Uint64, o.Flows)
	var worst atomic.Int64 // longest transaction since measuring began (ns)
	var measuring atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, o.Flows)
	deadline := time.Now().Add(o.Warmup + o.Duration + time.Second)
	for i := 0; i < o.Flows; i++ {
		wg.Add(1)
		errc := goPinned(h.sndNs, o.ClientCPU, func() error { return rrClient(cctx, deadline, &counts[i], &measuring, &worst) })
		go func() { defer wg.Done(); errs <- <-errc }()
	}
	stop := func() error {
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
		}
		return nil
	}
	snap := func() (rrSnapshot, error) {
		s := rrSnapshot{t: time.Now(), n: make([]uint64, o.Flows)}
		for i := range counts {
			s.n[i] = counts[i].Load()
		}
		var err error
		if s.ext, err = readProcNetIn(h.rcvNs, "netstat"); err != nil {
			return s, err
		}
		s.stat, err = readProcStat()
		return s, err
	}
	if err := sleepCtx(ctx, o.Warmup); err != nil {
		stop()
		return nil, err
	}
	a, err := snap()
	measuring.Store(true)
	if err == nil {
		err = sleepCtx(ctx, o.Duration)
	}
	measuring.Store(false)
	var b rrSnapshot
	if err == nil {
		b, err = snap()
	}
	if serr := stop(); err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	r := rrResult(o, a, b)
	r.MaxLatencyUS = float64(worst.Load()) / 1e3
	return r, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type rrSnapshot struct {
	t    time.Time
	n    []uint64
	ext  SNMP
	stat []CPUTimes
}

func rrResult(o TCPRROptions, a, b rrSnapshot) *TCPRRResult {
	dt := b.t.Sub(a.t).Seconds()
	r := &TCPRRResult{Options: o, Seconds: dt, PerFlowMin: -1}
	for i := range b.n {
		f := float64(b.n[i]-a.n[i]) / dt
		r.TransactionsPerSec += f
		if r.PerFlowMin < 0 || f < r.PerFlowMin {
			r.PerFlowMin = f
		}
		r.PerFlowMax = max(r.PerFlowMax, f)
	}
	r.BusyPollRxPackets = float64(b.ext.Get("TcpExt", "BusyPollRxPackets")-a.ext.Get("TcpExt", "BusyPollRxPackets")) / dt
	r.CPU = cpuShares(a.stat, b.stat)
	return r
}

// cpuShares is each CPU's /proc/stat time shares between two readings.
func cpuShares(a, b []CPUTimes) []CPUShare {
	var out []CPUShare
	for i := range b {
		if i >= len(a) {
			break
		}
		x, y := a[i], b[i]
		tot := float64(y.Total() - x.Total())
		if tot <= 0 {
			continue
		}
		out = append(out, CPUShare{CPU: y.CPU, User: float64(y.User+y.Nice-x.User-x.Nice) / tot,
			System: float64(y.System-x.System) / tot, SoftIRQ: float64(y.SoftIRQ-x.SoftIRQ) / tot,
			Idle: float64(y.Idle+y.IOWait-x.Idle-x.IOWait) / tot})
	}
	return out
}

// rrServers are the server threads: one listening socket, each thread
// accepting one connection and answering every byte with one byte.
type rrServers struct {
	stopped atomic.Bool
	done    []chan struct{}
	lfd     int
}

func startRRServers(h *Harness, o TCPRROptions) (*rrServers, error) {
	s := &rrServers{lfd: -1}
	// the listening socket, opened in the receiving namespace by a pinned
	// thread that then serves the first connection
	listen := func() (int, error) {
		return openBound(unix.SOCK_STREAM, TCPRRPort,
			func(fd int) error { return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1) },
			func(fd int) error { return unix.Listen(fd, MaxRRFlows) })
	}
	for i := 0; i < o.Flows; i++ {
		done := make(chan struct{})
		s.done = append(s.done, done)
		open := func() (int, error) { return unix.Dup(s.lfd) }
		if i == 0 {
			open = listen
		}
		fd, err := startPinned(h.rcvNs, o.ServerCPU, done, open, func(lfd int) { s.serve(lfd, o.BusyPollUS) })
		if err != nil {
			s.stop()
			return nil, err
		}
		if i == 0 {
			s.lfd = fd
		}
	}
	return s, nil
}

// serve accepts one connection and answers it until stop.
func (s *rrServers) serve(lfd, busyUS int) {
	var cfd int
	for {
		if s.stopped.Load() {
			return
		}
		var err error
		if cfd, _, err = unix.Accept4(lfd, unix.SOCK_CLOEXEC); err == nil {
			break
		}
	}
	defer unix.Close(cfd)
	if setTimeout(cfd) != nil {
		return
	}
	if busyUS > 0 && unix.SetsockoptInt(cfd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, busyUS) != nil {
		return
	}
	_ = unix.SetsockoptInt(cfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	b := []byte{0}
	for !s.stopped.Load() {
		n, err := unix.Read(cfd, b)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil || n == 0:
			return
		}
		if _, err := unix.Write(cfd, b); err != nil {
			return
		}
	}
}

func (s *rrServers) stop() {
	s.stopped.Store(true)
	for _, d := range s.done {
		<-d
	}
}

// rrClient is one netperf TCP_RR client: a request of one byte, then wait
// for the one-byte response, until ctx ends or the deadline; n counts
// transactions, and worst keeps the longest one while measuring is set.
func rrClient(ctx context.Context, deadline time.Time, n *atomic.Uint64, measuring *atomic.Bool, worst *atomic.Int64) error {
	fd, err := dialReceiver(TCPRRPort)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := setTimeout(fd); err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	b := []byte{1}
	for ctx.Err() == nil && time.Now().Before(deadline) {
		start := time.Now()
		if _, err := unix.Write(fd, b); err != nil {
			return fmt.Errorf("validate: TCP_RR write: %w", err)
		}
		for {
			m, err := unix.Read(fd, b)
			if err == unix.EAGAIN || err == unix.EINTR {
				if ctx.Err() != nil || !time.Now().Before(deadline) {
					return nil
				}
				continue
			}
			if err != nil || m == 0 {
				return fmt.Errorf("validate: TCP_RR read: %v", err)
			}
			break
		}
		n.Add(1)
		if d := int64(time.Since(start)); measuring.Load() {
			for w := worst.Load(); d > w && !worst.CompareAndSwap(w, d); w = worst.Load() {
			}
		}
	}
	return nil
}

// WriteTCPRR prints a result in netperf's terms.
func WriteTCPRR(w io.Writer, r *TCPRRResult) {
	o := r.Options
	fmt.Fprintf(w, "TCP_RR into the veth pair (%d flows, 1-byte request/response; clients on CPU %d, servers on CPU %d; xdp_pass %v; SO_BUSY_POLL %d us), %.1f s measured\n",
		o.Flows, o.ClientCPU, o.ServerCPU, o.XDP, o.BusyPollUS, r.Seconds)
	fmt.Fprintf(w, "  transactions %s/s (per flow %s..%s), longest %.0f us; busy polls took %s pkt/s (TcpExt BusyPollRxPackets)\n",
		GroupThousands(int64(r.TransactionsPerSec)), GroupThousands(int64(r.PerFlowMin)), GroupThousands(int64(r.PerFlowMax)),
		r.MaxLatencyUS, GroupThousands(int64(r.BusyPollRxPackets)))
	fmt.Fprintln(w, "  cpu   user%  sys%  softirq%  idle%")
	for _, c := range r.CPU {
		fmt.Fprintf(w, "  %-4d %5.1f %5.1f %9.1f %6.1f\n", c.CPU, 100*c.User, 100*c.System, 100*c.SoftIRQ, 100*c.Idle)
	}
}

// tcpRRCLI implements `rxsim validate tcp-rr`.
func tcpRRCLI(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("rxsim validate tcp-rr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := TCPRROptions{}
	fs.IntVar(&o.Flows, "flows", 1, "connections (a client and a server thread each)")
	fs.IntVar(&o.ClientCPU, "client-cpu", 0, "CPU of the client threads (and of the receiving veth's NAPI)")
	fs.IntVar(&o.ServerCPU, "server-cpu", 1, "CPU of the server threads")
	fs.IntVar(&o.BusyPollUS, "busy-poll", 0, "SO_BUSY_POLL on the servers' sockets in `us` (0 = none)")
	fs.BoolVar(&o.XDP, "xdp", true, "attach native XDP_PASS on the receiving veth (its NAPI carries the requests)")
	check := func() error {
		if o.BusyPollUS < 0 || o.Flows < 1 || o.Flows > MaxRRFlows {
			return usageErr("--busy-poll %d (want >= 0), --flows %d (want 1..%d)", o.BusyPollUS, o.Flows, MaxRRFlows)
		}
		return nil
	}
	return runTCPCLI(stdout, fs, args, &o.Warmup, &o.Duration, time.Second, 3*time.Second, check, func(ctx context.Context) (any, error) {
		return MeasureTCPRR(ctx, o)
	}, func(w io.Writer, r any) { WriteTCPRR(w, r.(*TCPRRResult)) })
}
