package main

import (
	"io"

	"github.com/rxsim/rxsim/validate"
)

// cmdValidate implements `rxsim validate ...` (see validate.CLI). A returned
// error has an ExitCode() int method: 2 bad flags, 3 XDP attach failure,
// 4 BPF load failure, 6 interface refused, 7 missing privilege, 1 otherwise.
func cmdValidate(stdout, stderr io.Writer, args []string) error {
	return validate.CLI(stdout, stderr, args)
}
