// Package sim is rxsim's simulation kernel: simulated time, a deterministic
// event queue, named seeded random streams, and CPUs that run work in three
// classes (hard IRQ > softirq > threads) with per-function cost accounting.
//
// Time is data: nothing in this package reads the wall clock. Events are
// ordered by (time, sequence number), so ties are broken by insertion order
// and never by map order or goroutine timing. The event queue is a value-typed
// binary heap that does not allocate per event once it has grown.
//
// What is modelled of a CPU: a non-preemptible hard-IRQ class, a softirq class
// that preempts threads, and a thread class under a fair scheduler
// (vruntime-ordered, with a base slice, wake-up placement and either CFS's
// wake-up granularity or EEVDF's eligibility rule for wake-up preemption,
// after kernel/sched/fair.c; with or without IRQ time in a thread's
// runtime, CONFIG_IRQ_TIME_ACCOUNTING). A higher class that becomes ready on a busy CPU
// delays the running item's completion by exactly the time it takes.
// Left out: SMT siblings, caches shared between CPUs, frequency scaling,
// C-state exit latencies, NUMA.
package sim
