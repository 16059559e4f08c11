package perfattr

import "strings"

// ItemRules map kernel frames to the model's cost items (the function names
// of hw cost profiles and of rxsim profile): the frame nearest a sample's
// leaf that has a rule decides, so a helper (fib_table_lookup, kmem_cache_free)
// counts for the item that called it. Frames with no rule anywhere in the
// stack are "other" (syscall entry and exit, timers, the scheduler's
// bookkeeping outside __schedule). In a VM without a PMU (perf's
// cpu-clock) a halted vCPU's time lands at finish_task_switch's interrupt
// enable when it resumes, so context_switch there includes idle time.
var ItemRules = []Rule{
	// The application side.
	{"bpf_test_run_xdp_live", "bpf_test_run_xdp_live"}, {"bpf_prog_test_run_xdp", "bpf_test_run_xdp_live"},
	{"packet_sendmsg", "packet_sendmmsg"}, {"__sys_sendmmsg", "packet_sendmmsg"},
	{"udp_sendmsg", "udp_sendmmsg"},
	{"udp_recvmsg", "recvmsg"}, {"inet_recvmsg", "recvmsg"}, {"sock_read_iter", "recvmsg"}, {"__sys_recvfrom", "recvmsg"},
	{"skb_copy_and_csum_datagram", "skb_copy_and_csum_datagram"},
	{"__schedule", "context_switch"}, {"finish_task_switch.isra.0", "context_switch"}, {"finish_task_switch", "context_switch"},
	// veth.
	{"veth_xmit", "veth_xmit"}, {"veth_xdp_xmit", "veth_xdp_xmit"},
	{"veth_poll", "veth_poll"}, {"veth_xdp_rcv", "veth_poll"},
	{"skb_pp_cow_data", "veth_convert_skb_to_xdp_buff"}, {"veth_convert_skb_to_xdp_buff", "veth_convert_skb_to_xdp_buff"},
	{"veth_xdp_rcv_bulk_skb", "veth_xdp_rcv_bulk_skb"},
	// NAPI and softirq.
	{"net_rx_action", "net_rx_action"}, {"__napi_poll", "napi_poll"}, {"napi_complete_done", "napi_complete_done"},
	// XDP and the cpumap.
	{"xdp_do_redirect", "xdp_do_redirect"}, {"bq_flush_to_queue", "bq_flush_to_queue"}, {"__cpu_map_flush", "xdp_do_flush"},
	{"xdp_do_flush", "xdp_do_flush"}, {"cpu_map_kthread_run", "cpu_map_kthread_run"},
	{"napi_skb_cache_get_bulk", "kmem_cache_alloc_bulk"}, {"kmem_cache_alloc_bulk", "kmem_cache_alloc_bulk"},
	{"kmem_cache_alloc_bulk_noprof", "kmem_cache_alloc_bulk"},
	{"__xdp_build_skb_from_frame", "__xdp_build_skb_from_frame"}, {"wake_up_process", "wake_up_process"},
	// The stack.
	{"gro_receive_skb", "dev_gro_receive"}, {"napi_gro_receive", "dev_gro_receive"},
	{"__netif_receive_skb_list_core", "netif_receive_skb"}, {"netif_receive_skb_list_internal", "netif_receive_skb"},
	{"__netif_receive_skb", "netif_receive_skb"}, {"netif_receive_skb", "netif_receive_skb"}, {"gro_normal_list", "netif_receive_skb"},
	{"ip_list_rcv", "ip_rcv"}, {"ip_sublist_rcv", "ip_rcv"}, {"ip_rcv", "ip_rcv"}, {"ip_local_deliver", "ip_rcv"},
	{"__udp4_lib_rcv", "udp_rcv"}, {"udp_rcv", "udp_rcv"},
	{"udp_unicast_rcv_skb", "udp_queue_rcv_skb"}, {"udp_queue_rcv_skb", "udp_queue_rcv_skb"},
	{"__udp_enqueue_schedule_skb", "udp_queue_rcv_skb"},
	{"__icmp_send", "udp_noport"},
	{"__skb_checksum_complete", "__skb_checksum_complete"},
	{"sock_def_readable", "sock_def_readable"},
	// Frees.
	{"skb_attempt_defer_free", "skb_attempt_defer_free"}, {"skb_defer_free_flush", "skb_defer_free_flush"},
	{"skb_release_data", "skb_release_data"},
}

// idleFrames are the idle loop's frames: a sample with one of them is idle
// time, not an item.
var idleFrames = map[string]bool{
	"pv_native_safe_halt": true, "default_idle": true, "default_idle_call": true, "do_idle": true,
	"native_safe_halt": true, "cpuidle_enter_state": true, "poll_idle": true, "intel_idle": true, "acpi_idle_enter": true,
}

// Idle is the item of idle samples in Items.
const Idle = "idle"

// bpfProgPrefix names JIT-ed BPF programs (bpf_prog_<tag>_<name>): the XDP
// program's own run.
const bpfProgPrefix = "bpf_prog_"

// Items sums the samples of stacks per CPU and model cost item (ItemRules;
// an XDP program's own frames are bpf_prog_run_xdp; idle samples are Idle;
// the rest "other").
func Items(stacks []Stack) map[int]map[string]int {
	item := map[string]string{}
	for _, r := range ItemRules {
		if _, ok := item[r.Frame]; !ok {
			item[r.Frame] = r.Category
		}
	}
	out := map[int]map[string]int{}
	for _, s := range stacks {
		m := out[s.CPU]
		if m == nil {
			m = map[string]int{}
			out[s.CPU] = m
		}
		m[itemOf(s.Frames, item)] += s.Count
	}
	return out
}

func itemOf(frames []string, item map[string]string) string {
	for _, f := range frames {
		if idleFrames[f] {
			return Idle
		}
	}
	for i := len(frames) - 1; i >= 0; i-- {
		if v, ok := item[frames[i]]; ok {
			return v
		}
		if strings.HasPrefix(frames[i], bpfProgPrefix) && !strings.HasPrefix(frames[i], "bpf_prog_run") &&
			!strings.HasPrefix(frames[i], "bpf_prog_test") {
			return "bpf_prog_run_xdp"
		}
	}
	return "other"
}
