package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rxsim/rxsim/validate"
	"github.com/rxsim/rxsim/validate/calibrate"
)

// defaultMeasurements is where validate's committed measurement set lives.
const defaultMeasurements = "validate/testdata/measurements/*.json"

func cmdCalibrate(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files multiFlag
	fs.Var(&files, "measurements", "measurement file written by rxsim validate --save (repeatable, globs allowed; default "+defaultMeasurements+")")
	holdout := fs.String("holdout", "", "comma-separated targets (config/generator) left out of the fit")
	out := fs.String("out", "", "write the calibrated cost profile here (e.g. hw/profiles/cpu/fc-epyc-2vcpu.toml)")
	evals := fs.Int("evals", 400, "maximum objective evaluations")
	stages := fs.String("stages", "", "comma-separated stages to consider (default: all on the path)")
	metrics := fs.String("metrics", "", "comma-separated metrics to fit: rx_pps, kthread_pps, delivered_pps (default all; the others are reported as held out)")
	bg := fs.Bool("background", false, "run each target with the measured CPU share of other processes (noise.background)")
	progress := fs.Bool("progress", false, "print fit progress to stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim calibrate [--measurements FILE]... [--holdout a,b,...] [--out hw/profiles/cpu/NAME.toml]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("calibrate: unexpected argument %q", fs.Arg(0))
	}
	if len(files) == 0 {
		files = multiFlag{defaultMeasurements}
	}
	paths, err := calibExpand(files)
	if err != nil {
		return err
	}
	var sets []*validate.MeasurementSet
	for _, p := range paths {
		s, err := validate.LoadMeasurements(p)
		if err != nil {
			return err
		}
		sets = append(sets, s)
	}
	targets := calibrate.Targets(sets)
	o := calibrate.Options{Targets: targets, Holdout: map[string]bool{}, MaxEvals: *evals}
	known := map[string]bool{}
	for _, t := range targets {
		known[t.Name] = true
	}
	for _, h := range calibList(*holdout) {
		if !known[h] {
			return usagef("calibrate: --holdout %s: no such target in the measurements", h)
		}
		o.Holdout[h] = true
	}
	o.Stages = calibList(*stages)
	o.Metrics = calibList(*metrics)
	o.Background = *bg
	if *progress {
		o.Log = func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
	}
	t0 := time.Now()
	rep, err := calibrate.Run(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rxsim calibrate: %d targets from %s; base profile %s\n", len(targets), strings.Join(paths, ", "), rep.Profile.Name)
	calibrate.WriteTable(stdout, rep)
	fmt.Fprintf(stdout, "wall time %.1fs\n", time.Since(t0).Seconds())
	if *out == "" {
		return nil
	}
	var named []string
	for _, p := range paths {
		named = append(named, calibFileID(p))
	}
	m := calibrate.Meta{Date: time.Now().UTC().Format("2006-01-02"), Machine: calibMachine(sets), Files: named}
	cp := calibrate.Calibrated(rep, m)
	hdr := fmt.Sprintf("Calibrated by rxsim calibrate on %s from %s (machine: %s).\n%s",
		m.Date, strings.Join(named, ", "), m.Machine, calibDescNote(cp.Description))
	hdr += calibOldHeader(*out)
	if err := calibrate.WriteProfile(*out, cp, hdr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}

// calibFileID names a measurement file with the start of its SHA-256, so
// a calibrated profile says which version of the file it was fitted to.
func calibFileID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return path
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%s (sha256 %x)", path, sum[:6])
}

// calibOldHeader returns the leading comment of the profile being replaced
// (its reasoning), without the lines an earlier calibration wrote.
func calibOldHeader(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		l = strings.TrimPrefix(strings.TrimPrefix(l, "#"), " ")
		if strings.HasPrefix(l, "Calibrated by rxsim calibrate") || strings.HasPrefix(l, "Profile: ") || l == "Header of the prior profile:" {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) == 0 {
		return ""
	}
	return "\nHeader of the prior profile:\n" + strings.Join(keep, "\n")
}

func calibDescNote(d string) string { return "Profile: " + d }

// machineName describes the machine of the measurement sets.
func calibMachine(sets []*validate.MeasurementSet) string {
	seen := map[string]bool{}
	var out []string
	for _, s := range sets {
		m := s.Machine
		n := fmt.Sprintf("%s, %d cores, kernel %s", m.CPUModel, m.Cores, m.Kernel)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func calibExpand(pats []string) ([]string, error) {
	var out []string
	for _, p := range pats {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, usagef("calibrate: --measurements %s: %v", p, err)
		}
		if len(m) == 0 {
			return nil, usagef("calibrate: --measurements %s: no such file", p)
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

func calibList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
