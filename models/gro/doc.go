// Package gro models Generic Receive Offload as net/core/gro.c does it: the
// per-NAPI (or per-cpumap) GRO node with its hash buckets of held skbs, the
// TCP merge rules of tcp_gro_receive, the flush points, and the gro_normal
// list that hands completed skbs to the stack in batches.
//
// # What is modelled
//
//   - dev_gro_receive: GRO off on the device (NETIF_F_GRO clear, `ethtool -K
//     gro off`) sends every packet down the GRO_NORMAL path, which still goes
//     through the gro_normal list. GRO_HASH_BUCKETS (8) buckets chosen by
//     the raw flow hash, so skbs without a hash (cpumap-built) all share
//     bucket 0; MAX_GRO_SKBS (8) held skbs per bucket, the oldest completed
//     when a ninth flow needs a slot (gro_flush_oldest).
//   - tcp_gro_receive (IPv4): a same-flow held skb (same flow and hash) is
//     merged with the new segment unless CWR is set, flags other than
//     FIN/PSH differ, the ACK number differs, the segment is longer than the
//     held gso_size (or empty), the sequence is not contiguous, or the merge
//     would reach gro_max_size (skb_gro_receive's -E2BIG); then the held
//     skb is completed and the segment starts a new held skb. A merged
//     segment that is shorter than gso_size or carries PSH/FIN/URG/RST/SYN
//     completes the super-skb it joined. A segment that itself carries one
//     of those flags (or no payload) and is not merged goes straight to
//     GRO_NORMAL, as out_check_final does with mss = 1.
//   - skb_gro_receive's result: GRO_MERGED_FREE while the segment's head can
//     be attached as a page fragment of the last skb of the chain
//     (MAX_SKB_FRAGS per skb), GRO_MERGED when it is chained on frag_list.
//     Only the result is modelled, not the memory.
//   - UDP: udp4_gro_receive without UDP_GRO, a tunnel or fraglist flushes at
//     once, so UDP pays the attempt (and software checksum) and takes the
//     GRO_NORMAL path.
//   - The super-skb is one pkt.Packet: Segs, Len and Payload summed, the
//     Arrival, Seq and Ack of its first segment, FIN/PSH ORed in
//     (tcp_flag_word(th2) |= flags & (FIN|PSH)).
//   - Flushes: gro_flush(flush_old=false) as FlushAll, gro_flush(flush_old=
//     true) as FlushOld with the kernel's "stop at the first skb held in the
//     current jiffy" walk (buckets in ascending order, oldest skb first),
//     each counted under a FlushReason the caller names; napi_gro_complete
//     per completed skb (skipped work for single-segment skbs, as the kernel
//     skips the gro_complete callbacks when count == 1).
//   - gro_normal_one / gro_normal_list: completed skbs are appended to the
//     list with rx_count += segs (Eric Dumazet, Feb 2021) for flushed held
//     skbs and += 1 for GRO_NORMAL skbs (napi_skb_finish); the list goes to
//     the Deliverer (netif_receive_skb_list_internal) when rx_count reaches
//     gro_normal_batch, or when the caller calls NormalList at poll end.
//     gro_normal_batch 0 or 1 delivers every skb alone.
//   - Costs, charged by kernel function name to the caller's sim.Work: the
//     GRO attempt for every packet on a GRO device, the merge per merged
//     segment, taking a new held slot, napi_gro_complete per completed
//     super-skb, and the software checksum per byte when the NIC gave no
//     checksum status (CHECKSUM_NONE: cpumap skbs). The per-skb stack
//     traversal is not charged here: that is what merging saves, and the
//     stack charges it per skb delivered.
//
// # What is left out
//
// IPv6 and tunnels (inner headers, encap_mark), UDP GRO (UDP_GRO sockets,
// NETIF_F_GRO_UDP_FWD) and fraglist GRO, GSO skbs entering GRO (a packet
// with Segs > 1 goes to GRO_NORMAL), the IP-level flush rules
// (gro_receive_network_flush: TOS, TTL, IP ID), TCP option comparison
// (packets carry no options), TLS decrypted-state comparison, frag_list vs
// frags memory and skb->head freeing details, truesize, and GRO_CONSUMED.
//
// # Kernel files followed
//
// net/core/gro.c (dev_gro_receive, gro_list_prepare, gro_flush_oldest,
// __gro_flush / __gro_flush_chain, gro_complete / napi_gro_complete,
// skb_gro_receive, napi_skb_finish), include/net/gro.h (GRO_HASH_BUCKETS,
// gro_normal_one, gro_normal_list, gro_flush_normal),
// net/ipv4/tcp_offload.c (tcp4_gro_receive, tcp_gro_receive),
// net/ipv4/udp_offload.c (udp4_gro_receive), net/core/hotdata.c
// (gro_normal_batch), include/linux/netdevice.h (enum gro_result,
// GRO_LEGACY_MAX_SIZE).
package gro
