// Package cpumap models BPF_MAP_TYPE_CPUMAP (kernel/bpf/cpumap.c): the
// redirect of XDP frames from the RX CPU to a remote CPU that builds skbs
// and runs the stack.
//
// # What is modelled
//
//   - Enqueue side on the RX CPU: bq_enqueue into the per-(RX CPU, entry)
//     bulk queue of CPU_MAP_BULK_SIZE (8) frames, flushed to the ptr_ring
//     when full (mid-poll, no wake-up) and at xdp_do_flush (__cpu_map_flush,
//     which also wake_up_process()es the consumer: the only wake-up point).
//     One xdp_cpumap_enqueue event per flush with processed > 0, so a
//     64-packet poll gives 7 mid-poll flushes + 1 final flush and 1 wake-up.
//   - The ptr_ring of qsize slots with the consumer's lazy zeroing in
//     batches of 16 (1 if qsize < 32): up to 15 consumed slots still look
//     occupied to the producer, which drops on -ENOSPC (enqueue drops).
//   - The kthread "cpumap/<cpu>/map:<id>" bound to its CPU under the fair
//     scheduler: sleeps on an empty ring, dequeues up to CPUMAP_BATCH (8)
//     frames per iteration (one CPU step), counts sched like the
//     xdp_cpumap_kthread tracepoint (the thread slept or was switched out
//     since its last iteration).
//   - The optional cpumap XDP program (pass, drop, redirect) with its cost,
//     the bulk skb allocation and __xdp_build_skb_from_frame (no checksum
//     status: CsumOK false; no hash: Hash 0).
//   - Delivery modes: single (netif_receive_skb_core per skb, no RPS,
//     < v5.13), list (netif_receive_skb_list per batch, v5.13-v6.14), gro
//     (a standalone GRO node flushed every 64 packets old-only and on an
//     empty ring fully, v6.15+), napi (a threaded NAPI with budget,
//     napi_gro_receive and napi_complete_done), backlog (skbs built on the
//     RX CPU and handed to the target CPU's backlog NAPI with
//     enqueue_to_backlog).
//   - Buffers: a frame dropped at enqueue or by the cpumap program is
//     returned to its RX queue at once; a frame turned into an skb keeps
//     its page until the skb is freed by the stack.
//
// # What is left out
//
// Generic (skb-mode) XDP into the cpumap, entry replacement and its RCU
// drain, kmem_cache allocation failures (kmem_alloc_drops stays 0), frame
// metadata (no RX hash transfer), multi-buffer frames, the per-task
// bpf_net_context, contention on producer_lock between RX CPUs feeding one
// entry (each flush pays the lock once, uncontended), and the map id
// (always 1).
//
// # Kernel files followed
//
// kernel/bpf/cpumap.c (bq_enqueue, bq_flush_to_queue, __cpu_map_flush,
// cpu_map_kthread_run, cpu_map_bpf_prog_run, cpu_map_gro_flush),
// include/linux/ptr_ring.h (__ptr_ring_produce, __ptr_ring_discard_one,
// __ptr_ring_set_size), net/core/xdp.c (__xdp_build_skb_from_frame),
// include/trace/events/xdp.h (xdp_cpumap_enqueue, xdp_cpumap_kthread).
package cpumap
