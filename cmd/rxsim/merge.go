package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/rxsim/rxsim/scenarios/sweep"
)

// cmdMerge implements rxsim merge: it combines the partial results of
// sweep shards (or of separately extended files of one plan) and prints
// what a single run of the plan prints.
func cmdMerge(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asCSV := fs.Bool("csv", false, "print CSV")
	asJSON := fs.Bool("json", false, "print the merged result document")
	save := fs.String("save", "", "save the merged result to `FILE`")
	metrics := fs.String("metrics", "", "comma-separated metrics of the text table")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim merge PART.json... [--csv|--json] [--save FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usagef("merge: no result files")
	}
	var parts []*sweep.Report
	for _, p := range fs.Args() {
		r, err := sweep.ReadReport(p)
		if err != nil {
			return err
		}
		parts = append(parts, r)
	}
	rep, err := sweep.Merge(parts)
	if err != nil {
		return err
	}
	if *save != "" {
		if err := rep.Save(*save); err != nil {
			return err
		}
	}
	if !rep.Complete {
		return fmt.Errorf("merge: %d part(s) do not cover the plan; missing shards?", len(parts))
	}
	return writeSweep(stdout, rep, *asCSV, *asJSON, *metrics)
}
