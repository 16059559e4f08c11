package validate

import (
	"errors"
	"fmt"
)

// Exit codes, as xdp-bench (lib/util/xdp_sample.h) plus one for refusals.
const (
	ExitOK         = 0
	ExitFail       = 1
	ExitFailOption = 2 // bad flags or options
	ExitFailXDP    = 3 // attaching the XDP program failed
	ExitFailBPF    = 4 // loading a BPF program or map failed
	ExitFailMem    = 5
	ExitRefused    = 6 // --iface refused: it has an XDP program or the default route
	ExitNoPriv     = 7 // missing capability
)

// Sentinel errors; test with errors.Is.
var (
	// ErrNotSupported reports that the kernel or the privileges lack a
	// feature validate needs. Tests skip on it.
	ErrNotSupported = errors.New("validate: not supported")
	// ErrUsage reports bad flags or options.
	ErrUsage = errors.New("validate: usage")
	// ErrXDPAttach reports that attaching an XDP program failed.
	ErrXDPAttach = errors.New("validate: XDP attach failed")
	// ErrBPFLoad reports that loading a BPF program or map failed.
	ErrBPFLoad = errors.New("validate: BPF load failed")
	// ErrRefused reports that --iface names an interface validate will not
	// touch without --force.
	ErrRefused = errors.New("validate: interface refused")
	// ErrPrivilege reports a missing capability.
	ErrPrivilege = errors.New("validate: missing privilege")
)

// Error is an error with an exit code.
type Error struct {
	Kind error // one of the sentinels above
	Msg  string
	Err  error // underlying cause, may be nil
}

// Error returns the message and the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// ExitCode maps an error from this package to a process exit code.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrUsage):
		return ExitFailOption
	case errors.Is(err, ErrRefused):
		return ExitRefused
	case errors.Is(err, ErrPrivilege):
		return ExitNoPriv
	case errors.Is(err, ErrXDPAttach):
		return ExitFailXDP
	case errors.Is(err, ErrBPFLoad):
		return ExitFailBPF
	}
	return ExitFail
}

func usageErr(format string, a ...any) error {
	return &Error{Kind: ErrUsage, Msg: "validate: " + fmt.Sprintf(format, a...)}
}

func bpfLoadErr(what string, err error) error {
	return &Error{Kind: ErrBPFLoad, Msg: "validate: load " + what, Err: err}
}

func attachErr(what string, err error) error {
	return &Error{Kind: ErrXDPAttach, Msg: "validate: attach " + what, Err: err}
}

func refusedErr(format string, a ...any) error {
	return &Error{Kind: ErrRefused, Msg: "validate: " + fmt.Sprintf(format, a...)}
}

// ExitCode returns the process exit code for the error's kind.
func (e *Error) ExitCode() int { return ExitCode(e) }
