// Package backlog models the per-CPU input queue of softnet_data and RPS:
// enqueue_to_backlog with the netdev_max_backlog limit (the lockless
// qlen > max pre-check and the locked re-check on the length before the
// enqueue, so a queue can hold max+1 skbs), the backlog NAPI polled by
// process_backlog with dev_weight as its quota (process_queue spliced from
// input_pkt_queue), RPS steering by flow hash over rps_cpus
// (get_rps_cpu's reciprocal_scale over the rps_map), the RPS IPI batched
// on the sender's rps_ipi_list and sent at the end of net_rx_action (or of
// a threaded NAPI poll, or at the start of process_backlog) as a hard IRQ
// on the target that schedules its backlog NAPI (received_rps), and the
// backlog threads option (thread_backlog_napi: remote enqueues wake the
// target's backlog NAPI thread, no IPI).
//
// Left out: RFS (rps_sock_flow_table, rflow->last_qtail ordering), the
// per-flow limit (flow_limit_cpu_bitmap defaults to off), netif_running
// checks, CPU hotplug and netif_rx's own accounting (the skb defer lists
// are napi.Softnet's). process_backlog's inline completion is modelled with
// napi_complete_done (its per-call cost is charged).
//
// Kernel files followed: net/core/dev.c (enqueue_to_backlog,
// napi_schedule_rps, net_rps_send_ipi, net_rps_action_and_irq_enable,
// rps_trigger_softirq, process_backlog, get_rps_cpu, backlog threads
// bpf/backlog_napi_*), include/linux/kernel.h (reciprocal_scale),
// net/core/hotdata.c (netdev_max_backlog 1000, dev_weight 64).
package backlog
