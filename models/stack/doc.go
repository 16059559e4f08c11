// Package stack models the IPv4 receive path above the driver: the skb
// build of XDP_PASS (build_skb) and its napi_gro_receive hand-off, per-packet
// and listified delivery (netif_receive_skb vs netif_receive_skb_list), the
// RPS hook of netif_receive_skb_internal, ip_rcv and the protocol demux,
// udp_rcv with the socket lookup, the UDP socket receive queue with its
// receive-buffer accounting (RcvbufErrors), no-listener delivery (UdpNoPorts),
// and the application thread that reads a socket with recvmsg/recvmmsg.
//
// # What is modelled
//
//   - Costs are split per call and per packet, so list delivery pays the
//     per-call part of netif_receive_skb and ip_rcv once per list and is
//     cheaper per packet than single delivery. Every cost comes from the hw
//     profile (kernel-rx-path.md §9).
//   - Protocols plug in by pkt.Proto with Register (UDP here; TCP registers
//     its own receive function from models/stack/tcp*.go).
//   - sd->processed (softnet_stat column 1) is counted per skb in
//     __netif_receive_skb_core on the CPU that runs it.
//   - A UDP socket accepts an skb while sk_rmem_alloc <= sk_rcvbuf before
//     the charge (__udp_enqueue_schedule_skb), each skb charging its
//     truesize; the reader's recvmsg uncharges it. InDatagrams counts at
//     recvmsg (udp_recvmsg), as the kernel does.
//   - sk_data_ready wakes the reading thread only when it sleeps on the
//     socket (the wake-up cost is charged to the waker); the thread reads
//     with one recvmsg (or recvmmsg of App.Batch) per call, per-call and
//     per-byte copy cost, and competes with softirq and kthreads on its CPU
//     under the fair scheduler.
//   - With busy polling on (Stack.EnableBusyPoll, net.core.busy_read), a
//     reader that finds its socket empty runs sk_busy_loop on the NAPI of
//     the RX queue its last skb came from (napi.BusyLoop) until data comes
//     or sk_ll_usec has passed, before it sleeps.
//   - Latency from wire arrival to the end of the application's read is
//     kept in a log-linear histogram (see Histogram for the percentile
//     definition).
//   - The page-reuse rule: every buffer handed up by the driver is released
//     to its RX queue (nic.Queue.Release) when its skb is freed: after the
//     application read, or at a drop.
//
// # What is left out
//
// IPv6, IP options and fragments, netfilter, routing other than local
// delivery, ICMP generation (icmp_send is rate-limited and only its check is
// costed), UDP GRO and encapsulation, socket filters, SO_PREFER_BUSY_POLL,
// memory pressure (udp_mem). UDP's skb_attempt_defer_free is an option
// (DeferUDP, v6.18+). The
// software checksum of a CHECKSUM_NONE skb (cpumap-built, or from veth's
// XDP path) is charged per L4 byte where the kernel sums it
// (Stack.checksum): TCP's tcp_checksum_complete, UDP's no-socket path, or
// the UDP reader's copy. A UDP datagram sent without a checksum (pktgen's
// default, so §9's udp_rcv figures include none) is not summed.
//
// # Kernel files followed
//
// net/core/dev.c (netif_receive_skb, netif_receive_skb_list_internal,
// __netif_receive_skb_core), net/core/gro.c (napi_gro_receive),
// net/ipv4/ip_input.c (ip_rcv, ip_list_rcv, ip_local_deliver),
// net/ipv4/udp.c (__udp4_lib_rcv, udp_queue_rcv_skb,
// __udp_enqueue_schedule_skb, udp_recvmsg), net/core/sock.c
// (sock_def_readable), include/net/busy_poll.h (sk_busy_loop,
// sk_mark_napi_id), drivers/net/ethernet/intel/ixgbe/ixgbe_main.c
// (ixgbe_build_skb).
package stack
