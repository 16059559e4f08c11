// Package host wires the models into one simulated host from a scenario:
// CPUs and their softnets, the NIC queues with their vectors, NAPIs and XDP
// hooks, the traffic source, and (as they exist) the cpumap, backlog, GRO,
// stack, sockets and applications. Run advances simulated time through the
// warm-up and the measured interval and returns a Result: counters with drop
// reasons, rates, CPU time per CPU per class and per kernel function.
package host
