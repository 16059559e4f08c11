package main

// extraCommands returns the subcommands implemented in other files of this
// package (validate, calibrate, sweep, compare, profile, plot). Each file
// adds its entry here.
func extraCommands() map[string]command {
	return map[string]command{
		"sweep":     {"run a scenario over a grid of settings and seeds", cmdSweep},
		"merge":     {"combine partial sweep results (shards) into one", cmdMerge},
		"profile":   {"per-kernel-function share of CPU time; --diff A B like perf diff", cmdProfile},
		"plot":      {"draw a sweep or compare result (SVG, PNG, PDF)", cmdPlot},
		"compare":   {"A/B comparison over replications, benchstat style", cmdCompare},
		"validate":  {"measure a real XDP datapath (veth in namespaces, or --iface IF) in xdp-bench's layout", cmdValidate},
		"calibrate": {"fit the cost profile to saved validate measurements and report the held-out error", cmdCalibrate},
	}
}
