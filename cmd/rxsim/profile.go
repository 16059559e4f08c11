package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rxsim/rxsim/models/host"
)

// funcShare is one function's CPU time in a profile.
type funcShare struct {
	Func  string
	NS    int64
	Share float64 // of the profile's busy time
	Frac  float64 // of the CPU's (or CPUs') measured time
}

// profileOf returns the functions of r on cpu (-1: all CPUs), sorted by
// decreasing time then name, and the busy ns they sum to.
func profileOf(r *host.Result, cpu int) ([]funcShare, int64) {
	byName := map[string]*funcShare{}
	var total int64
	for _, f := range r.Funcs {
		if cpu >= 0 && f.CPU != cpu {
			continue
		}
		s := byName[f.Func]
		if s == nil {
			s = &funcShare{Func: f.Func}
			byName[f.Func] = s
		}
		s.NS += f.NS
		s.Frac += f.Frac
		total += f.NS
	}
	out := make([]funcShare, 0, len(byName))
	for _, name := range host.Names(byName) {
		s := *byName[name]
		if total > 0 {
			s.Share = float64(s.NS) / float64(total)
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].NS > out[j].NS })
	return out, total
}

func cmdProfile(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o runOpts
	o.register(fs)
	diff := fs.Bool("diff", false, "compare two profiles like perf diff: A [B] (B defaults to A; --set changes B only)")
	cpu := fs.Int("cpu", -1, "only this CPU (default: every CPU; with --diff, all CPUs together)")
	perf := fs.String("perf", "", "compare with a perf recording of the real path: FILE.folded.gz (or perf script text) with FILE.json (perf_seconds, perf_hz, rx_pps), per cost item in ns per received packet")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim profile [scenario] [--cpu N] [--set k=v]...")
		fmt.Fprintln(stderr, "       rxsim profile --diff A [B] [--set k=v]...   (--set changes B only)")
		fmt.Fprintln(stderr, "       rxsim profile --perf FILE.folded.gz [scenario] [--set k=v]...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	if *diff {
		return profileDiff(stdout, &o, fs.Args(), *cpu)
	}
	if *perf != "" {
		p, err := loadPerfRun(*perf)
		if err != nil {
			return err
		}
		name, _, r, err := o.runArg(fs, "profile")
		if err != nil {
			return err
		}
		writePerfProfile(stdout, name, p, r)
		return nil
	}
	name, _, r, err := o.runArg(fs, "profile")
	if err != nil {
		return err
	}
	writeProfile(stdout, name, r, *cpu)
	return nil
}

// writeProfile prints a perf report-like table per CPU.
func writeProfile(w io.Writer, name string, r *host.Result, only int) {
	fmt.Fprintf(w, "# rxsim profile %s (seed %d, %.3fs simulated)\n", name, r.Seed, r.SimSeconds)
	fmt.Fprintln(w, "# Overhead: share of the CPU's busy time by kernel function (the model's cost attribution);")
	fmt.Fprintln(w, "# CPU%: the function's time as a share of the CPU's measured time.")
	for _, c := range r.CPU {
		if only >= 0 && c.ID != only {
			continue
		}
		fmt.Fprintln(w, "#")
		fs, total := profileOf(r, c.ID)
		if total == 0 {
			fmt.Fprintf(w, "# cpu %d: idle\n", c.ID)
			continue
		}
		fmt.Fprintf(w, "# cpu %d: busy %.1f%%\n", c.ID, 100*c.Busy)
		fmt.Fprintln(w, "# Overhead     CPU%  Symbol")
		fmt.Fprintln(w, "# ........  .......  ......")
		for _, f := range fs {
			fmt.Fprintf(w, "  %7.2f%%  %6.2f%%  %s\n", 100*f.Share, 100*f.Frac, f.Func)
		}
	}
}

// profileDiff prints perf diff's shape: baseline % (of A's busy time) and
// the absolute delta of B's %, for the functions of either profile.
func profileDiff(w io.Writer, o *runOpts, names []string, cpu int) error {
	var a, b string
	switch len(names) {
	case 1:
		a, b = names[0], names[0]
	case 2:
		a, b = names[0], names[1]
	default:
		return usagef("profile --diff: expected A [B], got %d scenarios", len(names))
	}
	both := *o
	both.sets = nil
	sa, err := both.load(a)
	if err != nil {
		return err
	}
	sb, err := o.load(b)
	if err != nil {
		return err
	}
	ra, err := simulate(sa, sa.Seed)
	if err != nil {
		return err
	}
	rb, err := simulate(sb, sb.Seed)
	if err != nil {
		return err
	}
	pa, ta := profileOf(ra, cpu)
	pb, tb := profileOf(rb, cpu)
	where := "all CPUs"
	if cpu >= 0 {
		where = fmt.Sprintf("cpu %d", cpu)
	}
	fmt.Fprintf(w, "# Baseline: %s (seed %d); compared: %s", a, sa.Seed, b)
	if len(o.sets) > 0 {
		fmt.Fprintf(w, " --set %s", strings.Join(o.sets, " --set "))
	}
	fmt.Fprintf(w, " (seed %d)\n", sb.Seed)
	fmt.Fprintf(w, "# %s; busy time %.3f ms -> %.3f ms (%s)\n", where, float64(ta)/1e6, float64(tb)/1e6, pctChange(ta, tb))
	fmt.Fprintln(w, "#")
	fmt.Fprintln(w, "# Baseline  Delta Abs  Symbol")
	fmt.Fprintln(w, "# ........  .........  ......")
	fmt.Fprintln(w, "#")
	inB := map[string]float64{}
	for _, f := range pb {
		inB[f.Func] = f.Share
	}
	seen := map[string]bool{}
	for _, f := range pa {
		seen[f.Func] = true
		fmt.Fprintf(w, "  %7.2f%%  %+8.2f%%  %s\n", 100*f.Share, 100*(inB[f.Func]-f.Share), f.Func)
	}
	for _, f := range pb { // only in B: no baseline, as perf diff prints it
		if !seen[f.Func] {
			fmt.Fprintf(w, "  %8s  %+8.2f%%  %s\n", "", 100*f.Share, f.Func)
		}
	}
	return nil
}

func pctChange(a, b int64) string {
	if a == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*float64(b-a)/float64(a))
}
