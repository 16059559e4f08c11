// Command rxsim-validate runs `rxsim validate` on its own, for use until (or
// besides) the rxsim dispatcher: `go run ./validate/cmd/rxsim-validate --all`.
// It leaves out nothing of validate.CLI; it only maps errors to exit codes.
package main

import (
	"fmt"
	"os"

	"github.com/rxsim/rxsim/validate"
)

func main() {
	if err := validate.CLI(os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(validate.ExitCode(err))
	}
}
