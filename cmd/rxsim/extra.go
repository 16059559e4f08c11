package main

// extraCommands returns the subcommands implemented in other files of this
// package (validate, calibrate, sweep, compare, profile, plot). Each file
// adds its entry here.
func extraCommands() map[string]command {
	return map[string]command{}
}
