// Package modeltest is shared test support for rxsim's model packages: the
// packet-conservation check every model test runs (offered = delivered +
// dropped by reason + queued), a slice-backed Feed with exact arrival
// times, and a small harness that builds an engine, a few CPUs with their
// softnet_data, and NIC RX queues (ring, vector, NAPI, XDP hook) so that a
// model test is a few lines of setup plus hand-computed expectations.
//
// It models nothing itself; it wires models/nic, models/napi and
// models/xdp the way models/host does, minus the scenario and the hw
// profile: every cost is given by the test, so expectations can be
// computed by hand. Nothing here is used by the simulator proper.
package modeltest
