package pkt

import "github.com/rxsim/rxsim/sim"

// Proto is the L4 protocol of a packet.
type Proto uint8

// Protocols.
const (
	UDP Proto = iota
	TCP
)

// TCP flags carried by a Packet (the subset GRO and the receiver care about).
const (
	FlagFIN uint8 = 1 << iota
	FlagSYN
	FlagRST
	FlagPSH
	FlagACK
	FlagURG
	FlagCWR
)

// Packet is one frame (or, after GRO, one super-skb of Segs segments).
type Packet struct {
	// Arrival is when the last bit of the (first) frame reached the NIC.
	Arrival sim.Time
	// Flow identifies the 5-tuple; Hash is its RSS/flow hash (Toeplitz in
	// the NIC; 0 when no hash is carried, e.g. skbs built by cpumap).
	Flow uint32
	Hash uint32
	// Len is the L2 frame length without FCS (pktgen's pkt_size); for a GRO
	// super-packet, the sum over segments of the L2 lengths.
	Len int32
	// Payload is the L4 payload in bytes (sum over segments).
	Payload int32
	// Seq is the TCP sequence number of the first payload byte.
	Seq uint32
	// Ack is the TCP acknowledgement number carried.
	Ack uint32
	// Txn tags request/response transactions (TCP_RR); 0 otherwise.
	Txn uint32
	// Segs is the number of wire segments this packet stands for (1 unless
	// GRO merged; at most GSO_MAX_SEGS, 65535).
	Segs  uint16
	Proto Proto
	Flags uint8
	// CsumOK is true when the NIC validated the checksum (CHECKSUM_UNNECESSARY).
	CsumOK bool
	// ZeroCsum marks a UDP datagram sent without a checksum (its check
	// field is 0: pktgen's default, and the live and AF_PACKET frames of
	// validate): without CsumOK there is still nothing to sum.
	ZeroCsum bool
	// Queue is the RX queue the packet arrived on.
	Queue uint16
	// AllocCPU is the CPU that built the packet's skb (skb->alloc_cpu: the
	// RX CPU for the driver's build_skb, the kthread's for cpumap); a skb
	// consumed elsewhere is freed there (skb_attempt_defer_free).
	AllocCPU uint16
	// TSecr is a TCP segment's timestamp echo reply: the TSval of the last
	// ACK its sender had received when it transmitted it, in the low 16
	// bits of the millisecond clock (TSVal; 0: none), which is enough for
	// differences below 32 s and keeps a Packet at 48 bytes.
	TSecr uint16
}

// WireSegs returns Segs, treating 0 as 1.
func (p *Packet) WireSegs() int {
	if p.Segs == 0 {
		return 1
	}
	return int(p.Segs)
}

// TCPTSHz is the TCP timestamp clock's rate (TCP_TS_HZ: milliseconds).
const TCPTSHz = 1000

// TSVal is the TCP timestamp a host's clock gives at t (tcp_time_stamp_ts,
// in 1/TCPTSHz s), in 16 bits, skipping 0 so that 0 can mean "no
// timestamp" (the one value skipped every 65.5 s is off by 1 ms).
func TSVal(t sim.Time) uint16 {
	if v := uint16(t / (sim.Second / TCPTSHz)); v != 0 {
		return v
	}
	return 1
}

// TSDelta is now - echo in TSVal units, across the 16-bit wrap.
func TSDelta(now, echo uint16) int { return int(int16(now - echo)) }

// SackBlock is one SACK block of a TCP ACK: the receiver holds the payload
// bytes [Start, End) above a hole (RFC 2018).
type SackBlock struct{ Start, End uint32 }
