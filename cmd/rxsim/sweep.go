package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/scenarios/sweep"
)

// sweepOpts are the options of rxsim sweep.
type sweepOpts struct {
	runOpts
	sweeps  multiFlag
	reps    int
	workers int
	csv     bool
	json    bool
	save    string
	shard   string
	metrics string
	quiet   bool
}

// sweepGCPercent is the GOGC of sweep and compare. Each run allocates its
// host (rings, event queue) and little else, so the live heap stays a few
// MB; with the default of 100 the collector takes enough CPU from the
// workers to cap a 2-worker sweep at about 1.8x (BenchmarkSweepWorkers:
// 1.99x at 400 on the 2-core test machine).
const sweepGCPercent = 400

// parallelGC sets sweepGCPercent unless GOGC is set in the environment.
func parallelGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(sweepGCPercent)
	}
}

func cmdSweep(stdout, stderr io.Writer, args []string) error {
	parallelGC()
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o sweepOpts
	o.register(fs)
	fs.Var(&o.sweeps, "sweep", "sweep a field: key=v1,v2,... (repeatable; replaces the scenario's [sweep] values for key)")
	fs.IntVar(&o.reps, "reps", 1, "replications per point (seeds base..base+reps-1)")
	fs.IntVar(&o.workers, "workers", 0, "simulations run in parallel (0 = GOMAXPROCS)")
	fs.BoolVar(&o.csv, "csv", false, "print CSV (one row per point, every metric with its 95% CI)")
	fs.BoolVar(&o.json, "json", false, "print the result document (the --save format)")
	fs.StringVar(&o.save, "save", "", "save the result to `FILE`; an existing FILE is extended (its runs are reused)")
	fs.StringVar(&o.shard, "shard", "", "run only shard `i/n` (0 <= i < n) of the (point, rep) list; merge the parts with rxsim merge")
	fs.StringVar(&o.metrics, "metrics", "", "comma-separated metrics of the text table (default: "+strings.Join(sweep.DefaultColumns, ",")+")")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim sweep [scenario|file] [--sweep k=v1,v2]... [--reps N] [--workers N] [--csv|--json] [--save FILE] [--shard i/n]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 1 {
		return usagef("sweep: one scenario expected, got %d", fs.NArg())
	}
	name := scenarios.Default
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	plan, err := o.plan(name)
	if err != nil {
		return err
	}
	si, sn := 0, 0
	if o.shard != "" {
		if si, sn, err = sweep.ParseShard(o.shard); err != nil {
			return usageError{err}
		}
	}
	prev, err := o.previous()
	if err != nil {
		return err
	}
	total := len(plan.Jobs())
	bar := newBar(stderr, total, o.quiet || o.json)
	rep, ran, err := sweep.Do(*plan, prev, si, sn, sweep.Options{Workers: o.workers, Sim: simMetrics, Progress: bar.add})
	bar.finish()
	if err != nil {
		return err
	}
	if o.save != "" {
		if err := rep.Save(o.save); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "rxsim sweep: %d run(s) simulated, %d reused; saved %s\n", ran, len(rep.Runs)-ran, o.save)
	}
	if o.shard != "" && !rep.Complete {
		if o.save != "" {
			return nil
		}
		return rep.WriteJSON(stdout)
	}
	return writeSweep(stdout, rep, o.csv, o.json, o.metrics)
}

// plan builds the sweep plan from the scenario, --set, --sweep, --reps and --seed.
func (o *sweepOpts) plan(name string) (*sweep.Plan, error) {
	base, err := o.load(name)
	if err != nil {
		return nil, err
	}
	fromSpec, err := sweep.FromSpec(base)
	if err != nil {
		return nil, usageError{err}
	}
	var flags []sweep.Param
	for _, f := range o.sweeps {
		p, err := sweep.ParseFlag(f)
		if err != nil {
			return nil, usageError{err}
		}
		flags = append(flags, p)
	}
	params, err := sweep.MergeParams(fromSpec, flags)
	if err != nil {
		return nil, usageError{err}
	}
	if o.reps < 1 {
		return nil, usagef("sweep: --reps %d, expected >= 1", o.reps)
	}
	sets := append([]string(nil), o.sets...)
	if o.duration > 0 {
		sets = append(sets, fmt.Sprintf("duration=%q", o.duration.String()))
	}
	p := &sweep.Plan{Scenario: name, Sets: sets, Params: params, Reps: o.reps, Seed: base.Seed}
	if _, err := p.Specs(); err != nil { // reject a bad point before anything runs
		return nil, usageError{err}
	}
	return p, nil
}

// previous reads the --save file when it exists.
func (o *sweepOpts) previous() (*sweep.Report, error) {
	if o.save == "" {
		return nil, nil
	}
	if _, err := os.Stat(o.save); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return sweep.ReadReport(o.save)
}

// simMetrics runs one replication (simulate in run.go) and flattens it.
func simMetrics(s *scenarios.Spec, seed uint64) (sweep.Outcome, error) {
	r, err := simulate(s, seed)
	if err != nil {
		return sweep.Outcome{}, err
	}
	return sweep.OutcomeOf(r), nil
}

// writeSweep prints a complete sweep report as a table, CSV or JSON.
func writeSweep(w io.Writer, rep *sweep.Report, asCSV, asJSON bool, metrics string) error {
	switch {
	case asJSON:
		return rep.WriteJSON(w)
	case asCSV:
		return rep.WriteCSV(w)
	}
	cols := sweep.DefaultColumns
	if metrics != "" {
		cols = strings.Split(metrics, ",")
		have := rep.Columns(cols)
		for _, c := range cols {
			if !slices.Contains(have, c) {
				return usageError{fmt.Errorf("sweep: --metrics: no point has %q; the points have: %s", c, strings.Join(rep.MetricNames(), ", "))}
			}
		}
	}
	return rep.WriteText(w, rep.Columns(cols))
}

// bar is a progress bar on stderr, shown only when stderr is a terminal.
type bar struct{ pb *progressbar.ProgressBar }

func newBar(stderr io.Writer, n int, off bool) *bar {
	f, ok := stderr.(*os.File)
	if off || !ok || !term.IsTerminal(int(f.Fd())) {
		return &bar{}
	}
	return &bar{pb: progressbar.NewOptions(n,
		progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("simulating"),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(65*time.Millisecond), progressbar.OptionClearOnFinish())}
}

func (b *bar) add() {
	if b.pb != nil {
		b.pb.Add(1)
	}
}

func (b *bar) finish() {
	if b.pb != nil {
		b.pb.Finish()
	}
}

// writeJSONFile writes v as indented JSON to path.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
