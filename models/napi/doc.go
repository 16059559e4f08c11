// Package napi models NAPI scheduling: the per-CPU softnet_data poll list,
// net_rx_action with netdev_budget and netdev_budget_usecs (in jiffies),
// NAPI weight and repoll to the tail, time_squeeze, the __do_softirq restart
// limit (MAX_SOFTIRQ_RESTART 10, MAX_SOFTIRQ_TIME 2 ms) and the hand-off to
// ksoftirqd (both the v4.9-v6.4 "let ksoftirqd do its job" behaviour and the
// v6.5+ revert), napi_complete_done with napi_defer_hard_irqs and
// gro_flush_timeout (the hrtimer watchdog), threaded NAPI kthreads, the
// scheduler tick that runs pending softirqs at its IRQ exit, and the skb
// defer list (skb_attempt_defer_free, skb_defer_max, the half-full kick
// IPI, skb_defer_free_flush at the top of every net_rx_action loop), and
// busy polling (BusyLoop: napi_busy_loop's SCHED | IN_BUSY_POLL ownership,
// BUSY_POLL_BUDGET polls on the poller's CPU, napi_complete_done leaving an
// owned NAPI scheduled, busy_poll_stop, SO_PREFER_BUSY_POLL with the
// watchdog deferral and NAPI_STATE_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET).
//
// Kernel files followed: net/core/dev.c (net_rx_action, __napi_poll,
// napi_complete_done, napi_threaded_poll_loop, ____napi_schedule,
// skb_defer_free_flush, kick_defer_list_purge), net/core/skbuff.c
// (skb_attempt_defer_free), kernel/softirq.c (__do_softirq,
// invoke_softirq, wakeup_softirqd), net/core/hotdata.c (defaults). Each
// NAPI poll is one CPU step, so hard IRQs and other CPUs interleave with a
// net_rx_action at poll granularity.
// Left out: irq_suspend_timeout, epoll and threaded busy
// polling, NAPI disable, netpoll, the RT kernel.
package napi
