// Package hw holds rxsim's hardware and cost profiles: NIC constants (ring
// sizes, refill batch, ITR defaults, queue counts, line rate, packet-rate
// capability) and the per-call and per-packet cost of every kernel function
// on the modelled path. Profiles are TOML files embedded in the binary
// (profiles/*.toml). Every value carries its origin: "reference" (kernel
// source or a published figure, cited by section of
// shared/reference/kernel-rx-path.md), "measured" (a validate run) or
// "calibrated" (a fit), with the date and machine where it applies.
package hw
