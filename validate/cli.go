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
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

type intList []int

// String implements flag.Value.
func (l *intList) String() string { return fmt.Sprint(*l) }

// Set implements flag.Value; it accepts comma-separated CPUs.
func (l *intList) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("not a CPU number: %q", p)
		}
		*l = append(*l, v)
	}
	return nil
}

const usageText = `usage: rxsim validate [scenario] [flags]
       rxsim validate --all [flags]      every built-in configuration with each generator
       rxsim validate --list             list the built-in configurations
       rxsim validate --cleanup          remove what a killed rxsim left behind
       rxsim validate tcp-stream [--gro] one TCP stream into the veth pair (rxsim validate tcp-stream -h)
       rxsim validate ctxsw [--cpu 1]    the cost of a context switch between two threads on one CPU
       rxsim validate tcp-rr [--flows N] [--busy-poll US]  netperf TCP_RR between the namespaces

Measures the real XDP receive path on a veth pair between two network
namespaces (or, with --iface, on a real interface fed from outside) and prints
xdp-bench's layout per second and a summary (median and spread over seconds and
repetitions). Rates come from probe-free runs; internals (bulk-avg, sched,
napi_poll) from a separate probe run.

Exit codes: 0 ok, 1 failure, 2 bad flags, 3 XDP attach failed, 4 BPF load
failed, 6 interface refused (XDP program present or default route; --force),
7 missing privilege.

flags:
`

// Subcommand reports whether name is a subcommand of `rxsim validate`
// (tcp-stream, tcp-rr, ctxsw) rather than a configuration.
func Subcommand(name string) bool {
	return name == "tcp-stream" || name == "tcp-rr" || name == "ctxsw"
}

// CLI implements `rxsim validate`. It handles SIGINT and SIGTERM by removing
// everything it created. Errors carry an exit code (see ExitCode).
func CLI(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "tcp-stream" {
		return tcpStreamCLI(stdout, stderr, args[1:])
	}
	if len(args) > 0 && args[0] == "ctxsw" {
		return ctxswCLI(stdout, stderr, args[1:])
	}
	if len(args) > 0 && args[0] == "tcp-rr" {
		return tcpRRCLI(stdout, stderr, args[1:])
	}
	fs := flag.NewFlagSet("rxsim validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	var (
		o                                   Options
		cpus                                intList
		program, gen, mode, remote, xdpMode string
		jsonOut, cleanup, all, list, quiet  bool
		noProbe, noRef, listener            bool
		save                                string
		threadedCPU                         int
	)
	fs.StringVar(&o.Iface, "iface", "", "attach to this real interface and only measure (traffic from outside)")
	fs.StringVar(&program, "program", "", "XDP program: drop, pass, tx or redirect-cpu (default drop)")
	fs.StringVar(&gen, "gen", "", "generator: live, afpacket or udp (default: each that fits the scenario, else live)")
	fs.DurationVar(&o.Duration, "duration", DefaultDuration, "measured time per repetition")
	fs.DurationVar(&o.Warmup, "warmup", DefaultWarmup, "traffic before measuring")
	fs.IntVar(&o.Reps, "reps", DefaultReps, "repetitions")
	fs.BoolVar(&jsonOut, "json", false, "print JSON (field names of rxsim run --json) instead of text")
	fs.StringVar(&save, "save", "", "write the measurements as JSON to this file (atomically)")
	fs.BoolVar(&cleanup, "cleanup", false, "remove namespaces and links a dead rxsim left, then exit")
	fs.BoolVar(&o.Force, "force", false, "attach to an --iface that has an XDP program or the default route")
	fs.Var(&cpus, "cpu", "redirect-cpu target CPU (repeatable or comma-separated)")
	fs.IntVar(&o.Qsize, "qsize", 0, "cpumap queue size (default 192)")
	fs.StringVar(&remote, "remote-action", "", "cpumap entry program: disabled, drop or pass")
	fs.StringVar(&mode, "program-mode", "", "redirect-cpu CPU choice: no-touch, round-robin or l4-hash (default l4-hash)")
	fs.StringVar(&xdpMode, "xdp-mode", "native", "XDP attach mode: native or skb (generic)")
	fs.IntVar(&o.Gen.PktSize, "pkt_size", 60, "frame size without FCS")
	fs.IntVar(&o.Gen.Flows, "flows", 1, "UDP flows (source ports)")
	fs.Float64Var(&o.Gen.Rate, "rate", 0, "generator rate limit in pkt/s (0 = unlimited)")
	fs.Uint64Var(&o.Gen.Count, "count", 0, "packets per repetition (0 = until the duration ends)")
	fs.IntVar(&o.Gen.CPU, "gen-cpu", 0, "CPU the generator is pinned to")
	fs.BoolVar(&listener, "listener", false, "read UDP port 9 with a blocking recv on --listener-cpu")
	fs.IntVar(&o.ListenerCPU, "listener-cpu", 1, "listener CPU")
	fs.IntVar(&o.BusyPollUS, "busy-poll", 0, "SO_BUSY_POLL on the listener's socket in `us` (0 = none)")
	fs.IntVar(&threadedCPU, "threaded-cpu", -1, "enable threaded NAPI and pin its kthread to this CPU")
	fs.BoolVar(&o.Net.GRO, "gro", false, "GRO on the receiving veth")
	fs.BoolVar(&noProbe, "no-probe", false, "skip the probe run (tracepoints)")
	fs.BoolVar(&noRef, "no-ref", false, "skip the interleaved XDP_DROP reference runs")
	fs.Float64Var(&o.RefPPS, "ref-pps", DefaultRefPPS, "fixed reference rate; a reference below slow-factor times this marks a slow period")
	fs.Float64Var(&o.SlowFactor, "slow-factor", DefaultSlowFactor, "see --ref-pps")
	fs.IntVar(&o.RetrySlow, "retry-slow", 2, "measure a slow repetition again, at most this many times")
	fs.BoolVar(&o.Extended, "e", false, "extended per-second output (xdp-bench -e)")
	fs.BoolVar(&quiet, "quiet", false, "no per-second lines")
	fs.BoolVar(&all, "all", false, "run every built-in configuration with each of its generators")
	fs.BoolVar(&list, "list", false, "list the built-in configurations")

	var scenario string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		scenario, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &Error{Kind: ErrUsage, Msg: "validate: " + err.Error()}
	}
	if fs.NArg() > 0 {
		if scenario != "" || fs.NArg() > 1 {
			return usageErr("unexpected arguments %q", fs.Args())
		}
		scenario = fs.Arg(0)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Explicit zeros would otherwise be replaced by defaults.
	for name, bad := range map[string]bool{
		"reps": o.Reps < 1, "duration": o.Duration <= 0, "qsize": o.Qsize < 1,
		"pkt_size": o.Gen.PktSize < 1, "flows": o.Gen.Flows < 1,
	} {
		if set[name] && bad {
			return usageErr("--%s: value out of range", name)
		}
	}

	if list {
		for _, c := range Configs() {
			fmt.Fprintf(stdout, "%-26s gens %-22s %s\n", c.Name, fmt.Sprint(c.Gens), c.Description)
		}
		return nil
	}
	if cleanup {
		left, err := Cleanup()
		for _, l := range left {
			fmt.Fprintf(stdout, "removed %s %s (pid %d)\n", l.Kind, l.Name, l.PID)
		}
		if len(left) == 0 {
			fmt.Fprintln(stdout, "nothing to clean up")
		}
		return err
	}

	// Build the list of runs, checking everything before touching the system.
	type job struct{ o Options }
	var jobs []job
	apply := func(b Options) (Options, error) {
		if set["program"] {
			b.Program = Program(program)
		}
		if set["program-mode"] {
			b.Mode = ProgramMode(mode)
		}
		if set["remote-action"] {
			b.RemoteAction = RemoteAction(remote)
		}
		if set["cpu"] {
			b.CPUs = cpus
		}
		if set["qsize"] {
			b.Qsize = o.Qsize
		}
		b.XDPMode = xdpMode
		b.Iface, b.Force = o.Iface, o.Force
		b.Duration, b.Warmup, b.Reps = o.Duration, o.Warmup, o.Reps
		for _, k := range []string{"pkt_size", "flows", "rate", "count", "gen-cpu"} {
			if set[k] {
				switch k {
				case "pkt_size":
					b.Gen.PktSize = o.Gen.PktSize
				case "flows":
					b.Gen.Flows = o.Gen.Flows
				case "rate":
					b.Gen.Rate = o.Gen.Rate
				case "count":
					b.Gen.Count = o.Gen.Count
				case "gen-cpu":
					b.Gen.CPU = o.Gen.CPU
				}
			}
		}
		if set["listener"] {
			b.Listener = listener
		}
		if set["listener-cpu"] {
			b.ListenerCPU = o.ListenerCPU
		}
		if set["busy-poll"] {
			b.BusyPollUS = o.BusyPollUS
		}
		if set["threaded-cpu"] {
			b.Net.Threaded, b.Net.ThreadedCPU = threadedCPU >= 0, threadedCPU
		}
		if set["gro"] {
			b.Net.GRO = o.Net.GRO
		}
		b.Probe = !noProbe
		b.Reference = !noRef && b.Iface == ""
		b.RefPPS, b.SlowFactor, b.RetrySlow = o.RefPPS, o.SlowFactor, o.RetrySlow
		b.Extended = o.Extended
		b.Defaults()
		return b, b.Check()
	}
	var cfgs []Config
	switch {
	case all:
		if scenario != "" {
			return usageErr("--all takes no scenario")
		}
		cfgs = Configs()
	case scenario != "":
		c, ok := LookupConfig(scenario)
		if !ok {
			return usageErr("unknown scenario %q (see rxsim validate --list)", scenario)
		}
		cfgs = []Config{c}
	}
	if o.Iface != "" && len(cfgs) > 0 {
		return usageErr("--iface measures a real interface; it takes no scenario")
	}
	if set["gen"] {
		switch GenKind(gen) {
		case GenLive, GenAFPacket, GenUDP:
		default:
			return usageErr("unknown --gen %q (want live, afpacket or udp)", gen)
		}
	}
	if len(cfgs) == 0 {
		b := Options{Program: ProgDrop, Net: NetSettings{ThreadedCPU: -1}, Gen: GenOptions{Kind: GenKind(gen), PktSize: 60, Flows: 1}}
		if b.Gen.Kind == "" {
			b.Gen.Kind = GenLive
		}
		x, err := apply(b)
		if err != nil {
			return err
		}
		x.Config = ""
		x.Defaults()
		jobs = append(jobs, job{x})
	}
	for _, c := range cfgs {
		for _, g := range c.Gens {
			if set["gen"] && GenKind(gen) != g {
				continue
			}
			x, err := apply(c.Options(g))
			if err != nil {
				return err
			}
			x.Config = c.Name + "/" + string(g)
			jobs = append(jobs, job{x})
		}
	}
	if len(jobs) == 0 {
		return usageErr("scenario %q has no generator %q", scenario, gen)
	}
	if err := checkPrivileges(); err != nil {
		return err
	}
	if save != "" {
		// Fail early on an unwritable destination.
		f, err := os.CreateTemp(dirOf(save), ".rxsim-probe*")
		if err != nil {
			return usageErr("--save %s: %v", save, err)
		}
		f.Close()
		os.Remove(f.Name())
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ext := &atomic.Bool{}
	ext.Store(o.Extended)
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	defer signal.Stop(quit)
	doneToggle := make(chan struct{})
	defer close(doneToggle)
	go toggleOn(quit, ext, doneToggle)
	if left, _ := Cleanup(); len(left) > 0 {
		fmt.Fprintf(stderr, "validate: removed %d leftovers of dead rxsim processes\n", len(left))
	}
	mset := &MeasurementSet{Format: MeasurementFormat, Machine: ReadMachine(), Created: time.Now().UTC(),
		Command: "rxsim validate " + strings.Join(os.Args[min(len(os.Args), 2):], " ")}
	var firstErr error
	for i, j := range jobs {
		if !jsonOut && !quiet {
			j.o.Progress = stdout
			j.o.StartLine = true
			j.o.ExtendedToggle = ext
			fmt.Fprintf(stdout, "== %s (%d/%d)\n", j.o.Config, i+1, len(jobs))
		}
		res, err := Run(ctx, j.o)
		if err != nil {
			firstErr = err
			if res == nil || ctx.Err() != nil {
				break
			}
			fmt.Fprintf(stderr, "%s: %v\n", j.o.Config, err)
			continue
		}
		mset.Results = append(mset.Results, res)
		if !jsonOut {
			WriteSummary(stdout, res)
		}
		if save != "" {
			if err := Save(save, mset); err != nil {
				return err
			}
		}
	}
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		var v any = mset
		if len(mset.Results) == 1 {
			v = mset.Results[0]
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "validate: interrupted; everything removed")
		return &Error{Kind: errors.New("interrupted"), Msg: "validate: interrupted"}
	}
	return firstErr
}

func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return p[:i]
	}
	return "."
}
