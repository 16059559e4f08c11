// Command rxsim simulates the Linux packet receive path (NIC ring, IRQ,
// NAPI, XDP, cpumap, backlog, GRO, stack, sockets) event by event, and
// measures the real XDP datapath to calibrate the model.
//
//	rxsim run [scenario|file] [--seed N] [--duration D] [--set k=v]... [--json]
//	rxsim scenarios
//	rxsim validate ... / calibrate ... / sweep ... / compare ... / profile ... / plot ...
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes (xdp-bench's, lib/util/xdp_sample.h, plus usage = 2).
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// usageError marks a bad command line or scenario (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// command is one subcommand.
type command struct {
	summary string
	run     func(stdout, stderr io.Writer, args []string) error
}

// commands returns the subcommand table. Subcommands defined in other files
// register through extraCommands.
func commands() map[string]command {
	m := map[string]command{
		"run":       {"simulate one scenario and print xdp-bench-style figures", cmdRun},
		"scenarios": {"list the built-in scenarios", cmdScenarios},
	}
	for name, c := range extraCommands() {
		m[name] = c
	}
	return m
}

func main() {
	os.Exit(mainErr(os.Stdout, os.Stderr, os.Args[1:]))
}

func mainErr(stdout, stderr io.Writer, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmds := commands()
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "rxsim: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
	if err := c.run(stdout, stderr, args[1:]); err != nil {
		fmt.Fprintln(stderr, "rxsim:", err)
		var ue usageError
		var ce interface{ ExitCode() int }
		switch {
		case errors.As(err, &ce):
			return ce.ExitCode()
		case errors.As(err, &ue):
			return exitUsage
		}
		return exitFail
	}
	return exitOK
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: rxsim COMMAND [options]")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "Run 'rxsim COMMAND -h' for a command's options.")
}

// multiFlag is a repeatable string flag (--set k=v).
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
