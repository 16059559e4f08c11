// Package sweep turns one scenario into an experiment: a grid of Specs (the
// cartesian product of a scenario's [sweep] table and --sweep flags), each
// point run for N replications, on worker goroutines, with the results
// collected in grid order so that the output never depends on the number
// of workers.
//
// # Grid order
//
// The swept fields (dotted Spec paths such as "cpumap.qsize") are sorted
// by name; a --sweep flag replaces the scenario's values for the same
// field. The product is enumerated like nested loops in that sorted order:
// the first field is the outermost loop and the last field the innermost,
// and each field's values keep the order they were given in. Each point is
// loaded with scenarios.Load(scenario, base sets..., "field=value"...), so
// every point is validated exactly as `rxsim run --set` validates it.
//
// # Replications and seeds
//
// Replication i of every point runs with seed base+i (base is the
// scenario's seed, or --seed). Points therefore share their random
// numbers (common random numbers across the grid), and replications differ
// only by seed. With noise.profile = false, noise.cost_cv = 0,
// noise.irq_jitter = 0, noise.timer_jitter = 0 and traffic.jitter = 0 (the
// defaults) every replication gives the same exact figures.
//
// # Results files, extension, shards
//
// A Report (the --json output and the --save file) holds the Plan, one
// Run per (configuration, seed) and a Summary per point. A Run is keyed by
// the fingerprint of its fully resolved Spec and its seed, so a later sweep
// with more replications or more points reuses every run it already has;
// a run whose scenario changed is not reused, because its fingerprint
// changed. The job list (point-major, replication-minor) can be split with
// Shard(i, n): job j belongs to shard j mod n. Merging the shards' runs
// gives exactly the Report of a single run.
//
// # What it leaves out
//
// Wall-clock times are never part of a Report (they would break
// byte-identical output). A sweep never retries a failed run: the first
// error stops it.
package sweep
