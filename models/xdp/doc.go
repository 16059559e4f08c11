// Package xdp models XDP programs as a verdict chosen per packet by a rule
// (all packets, by flow, or by fraction) plus a per-packet cost, and the
// driver-side handling of each verdict: DROP recycles the buffer in place,
// TX queues the frame on the queue's XDP TX ring (TxRing: held until the
// device's wire has sent it and a poll's TX clean frees it; xdp_tx_err when
// full) with one tail write per poll,
// REDIRECT converts to an xdp_frame and bulk-enqueues to a redirect target
// (the cpumap, or a devmap entry: Devmap, devmap.go) with xdp_do_flush at the
// end of the poll, PASS hands the packet to the stack (build_skb and
// napi_gro_receive).
//
// redirect-cpu follows xdp-bench's program modes (xdp-tools
// xdp_redirect_cpumap.bpf.c): no-touch (first CPU), touch, round-robin,
// l4-hash (hash of the flow over the CPU list).
// Kernel files followed: the drivers' *_run_xdp and *_finalize_xdp_rx,
// net/core/filter.c (xdp_do_redirect, xdp_do_flush), kernel/bpf/devmap.c. Left out: program
// contents (only their cost), XDP multi-buffer, xskmap targets,
// metadata.
package xdp
