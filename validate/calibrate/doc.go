// Package calibrate fits the simulator's cost profile to measured receive
// rates (rxsim calibrate). A measurement set written by `rxsim validate
// --save` names, per result, the validation configuration (veth-xdp-drop,
// ...) and the generator; each becomes a target: the built-in scenario of
// the same name run with that traffic.generator, and the measured median
// rx_pps.
//
// The parameters are stages of the path: a stage is a group of costs in
// the hw profile (the live-frames generator, veth_xmit, the per-poll NAPI
// overhead, the per-entry veth receive, the skb-to-xdp_buff copy, the
// cross-CPU penalties, ...) whose call, packet and byte parts are scaled by
// one factor. A stage is fitted only if scaling it changes the simulated
// rate of at least one fitted target (the measurements identify it); the
// others keep their values. The fit minimises the sum of squared log
// errors over the fitted targets, plus a weak ridge on the log scales that
// keeps directions the targets cannot tell apart at the prior values,
// with gonum/optimize's Nelder-Mead in log space, bounded (scales are
// clamped to [1/10, 10]), from the profile's values, sequentially (no
// concurrency, no wall-clock limit), so a fit is deterministic. The
// simulator itself is the function, run for short simulated intervals.
//
// Calibration needs only saved measurements: it runs without root.
// Targets are rx_pps, and kthread_pps (cpumap) and delivered_pps
// (listener) where measured. Left out: fitting CPU shares and probe
// internals (polls, bulk sizes), which validate reports.
package calibrate
