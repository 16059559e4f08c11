package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
)

// runOpts are the options shared by commands that simulate a scenario.
type runOpts struct {
	seed     uint64
	duration time.Duration
	sets     multiFlag
}

func (o *runOpts) register(fs *flag.FlagSet) {
	fs.Uint64Var(&o.seed, "seed", 0, "random seed (0 = the scenario's seed)")
	fs.DurationVar(&o.duration, "duration", 0, "measured simulated time (0 = the scenario's duration)")
	fs.Var(&o.sets, "set", "override a scenario field by dotted TOML path, e.g. nic.ring_size=1024 (repeatable)")
}

// load reads the scenario with the --set and --duration overrides.
func (o *runOpts) load(name string) (*scenarios.Spec, error) {
	sets := append([]string(nil), o.sets...)
	if o.duration > 0 {
		sets = append(sets, fmt.Sprintf("duration=%q", o.duration.String()))
	}
	s, err := scenarios.Load(name, sets...)
	if err != nil {
		return nil, usageError{err}
	}
	if o.seed != 0 {
		s.Seed = o.seed
	}
	return s, nil
}

// runArg loads the scenario named by fs's single optional argument (the
// default scenario when there is none) with the overrides and simulates it.
func (o *runOpts) runArg(fs *flag.FlagSet, cmd string) (string, *scenarios.Spec, *host.Result, error) {
	name := scenarios.Default
	switch fs.NArg() {
	case 0:
	case 1:
		name = fs.Arg(0)
	default:
		return "", nil, nil, usagef("%s: one scenario expected, got %d", cmd, fs.NArg())
	}
	s, err := o.load(name)
	if err != nil {
		return "", nil, nil, err
	}
	r, err := simulate(s, s.Seed)
	return name, s, r, err
}

// simulate builds and runs one replication.
func simulate(s *scenarios.Spec, seed uint64) (*host.Result, error) {
	t0 := time.Now()
	h, err := host.Build(s, seed, host.Layers()...)
	if err != nil {
		return nil, err
	}
	r := h.Run()
	r.WallSeconds = time.Since(t0).Seconds()
	return r, nil
}

func cmdRun(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o runOpts
	o.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON document")
	funcs := fs.Bool("funcs", false, "include per-function CPU time in --json output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim run [scenario|file] [--seed N] [--duration D] [--set k=v]... [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	_, s, r, err := o.runArg(fs, "run")
	if err != nil {
		return err
	}
	if *asJSON {
		if !*funcs {
			r.Funcs = nil
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return writeText(stdout, s, r)
}

// reorder moves flags after positional arguments to the front, so that
// "rxsim run scenario --json" works with the standard flag package.
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			if !hasValue(a) && i+1 < len(args) && needsValue(a) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func hasValue(a string) bool {
	for _, c := range a {
		if c == '=' {
			return true
		}
	}
	return false
}

// needsValue reports whether flag a takes a value (boolean flags do not).
func needsValue(a string) bool {
	switch trimDashes(a) {
	case "json", "funcs", "csv", "quiet", "force", "cleanup", "all", "extended", "e", "h", "help", "diff", "progress", "paired":
		return false
	}
	return true
}

func trimDashes(a string) string {
	for len(a) > 0 && a[0] == '-' {
		a = a[1:]
	}
	return a
}

func cmdScenarios(stdout, stderr io.Writer, args []string) error {
	for _, n := range scenarios.Builtins() {
		s, err := scenarios.Load(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-26s %s\n", n, s.Description)
	}
	return nil
}
