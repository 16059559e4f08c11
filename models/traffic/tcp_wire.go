package traffic

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Header sizes of a TCP/IPv4 frame with the Linux default options
// (timestamps): the L2 frame of a segment is its payload plus
// TCPFrameOverhead, so MSS 1448 gives 1514 B frames (1538 B on the wire with
// FCS, preamble and IFG: 9.415 Gbit/s of goodput at 10G, kernel-rx-path.md §1).
const (
	EthHLen          = 14 // ETH_HLEN
	IPv4HLen         = 20 // struct iphdr without options
	TCPHLen          = 32 // struct tcphdr (20) + TCPOLEN_TSTAMP_ALIGNED (12)
	TCPFrameOverhead = EthHLen + IPv4HLen + TCPHLen
)

// Link is one direction of a point-to-point Ethernet link: frames are
// serialised one after another at the line rate (a FIFO at the sender's
// NIC) and arrive a propagation delay after their last bit left.
type Link struct {
	gbps     float64
	overhead int
	prop     float64
	free     float64 // when the wire is next free, ns
	// Frames and Bytes count what was transmitted (L2 bytes without FCS).
	Frames uint64
	Bytes  uint64
}

// NewLink returns a link at gbps (0 = no serialisation limit) with
// overhead bytes added to every frame on the wire and a one-way propagation
// delay prop.
func NewLink(gbps float64, overhead int, prop sim.Time) *Link {
	return &Link{gbps: gbps, overhead: overhead, prop: float64(prop)}
}

// Transmit serialises a frame of frameLen bytes (without FCS) that is ready
// at time at, and returns when its last bit reaches the far end.
func (l *Link) Transmit(at float64, frameLen int) float64 {
	start := max(at, l.free)
	l.free = start + WireTime(frameLen, l.overhead, l.gbps)
	l.Frames++
	l.Bytes += uint64(frameLen)
	return l.free + l.prop
}

// Free returns when the wire is next idle.
func (l *Link) Free() float64 { return l.free }

// Wire is the link towards the simulated host carrying the closed-loop TCP
// senders' segments: a Link plus the push feed the NIC reads. Senders push
// segments as they decide to send them (on an ACK, a response or a timer);
// the link's FIFO serialisation makes arrivals non-decreasing, so the feed
// is a plain queue and the RSS Demux splits it into per-queue feeds. OnPush
// is called once per batch of pushed segments with the flow hash of the
// batch and whether the batch went into an empty queue, so the host can Kick
// the RX queue whose ring may have armed its interrupt for a later arrival
// or none (with one RX queue only a push into an empty wire can be earlier
// than what the ring knows).
type Wire struct {
	Link
	buf    []pkt.Packet // ring of pushed, not yet read segments
	head   int
	n      int
	OnPush func(hash uint32, wasEmpty bool)
	// Stamp, if set, gives each segment the NIC reads its timestamp echo
	// (TSecr) from its flow and the time its first bit left the sender:
	// the sender's TCP writes it as it transmits the segment.
	Stamp func(flow uint32, sent sim.Time) uint16
	// intoEmpty: a segment was pushed into an empty queue since the last Kick.
	intoEmpty bool
	// Pushed counts segments pushed; Popped those the NIC read.
	Pushed uint64
	Popped uint64
}

var _ Source = (*Wire)(nil)

// NewWire returns a wire with room for capacity in-flight segments before
// its queue has to grow (it grows by doubling, so steady state does not
// allocate).
func NewWire(gbps float64, overhead int, prop sim.Time, capacity int) *Wire {
	return &Wire{Link: *NewLink(gbps, overhead, prop), buf: make([]pkt.Packet, max(capacity, 16))}
}

// Send serialises p (ready at time at) and queues it with its arrival time.
func (w *Wire) Send(at float64, p pkt.Packet) sim.Time {
	p.Arrival = sim.Time(w.Transmit(at, int(p.Len)) + 0.5) // nearest ns
	if w.n == 0 {
		w.intoEmpty = true
	}
	if w.n == len(w.buf) {
		w.grow()
	}
	i := w.head + w.n
	if i >= len(w.buf) {
		i -= len(w.buf)
	}
	w.buf[i] = p
	w.n++
	w.Pushed++
	return p.Arrival
}

func (w *Wire) grow() {
	nb := make([]pkt.Packet, 2*len(w.buf))
	for i := 0; i < w.n; i++ {
		nb[i] = w.buf[(w.head+i)%len(w.buf)]
	}
	w.buf, w.head = nb, 0
}

// Kick reports a pushed batch of flow hash to OnPush.
func (w *Wire) Kick(hash uint32) {
	if w.OnPush != nil {
		w.OnPush(hash, w.intoEmpty)
	}
	w.intoEmpty = false
}

// Peek implements Source.
func (w *Wire) Peek() sim.Time {
	if w.n == 0 {
		return sim.Never
	}
	return w.buf[w.head].Arrival
}

// Pop implements Source.
func (w *Wire) Pop() pkt.Packet {
	p := w.buf[w.head]
	w.head++
	if w.head == len(w.buf) {
		w.head = 0
	}
	w.n--
	w.Popped++
	if w.Stamp != nil {
		p.TSecr = w.Stamp(p.Flow, p.Arrival-sim.Time(w.prop+WireTime(int(p.Len), w.overhead, w.gbps)+0.5))
	}
	return p
}

// InFlight returns the segments pushed and not yet read by the NIC.
func (w *Wire) InFlight() int { return w.n }

// segment returns a TCP segment of flow f with payload bytes at seq.
func segment(flow, hash uint32, seq, ack uint32, payload int, flags uint8, csum bool, txn uint32) pkt.Packet {
	return pkt.Packet{
		Flow: flow, Hash: hash, Len: int32(payload + TCPFrameOverhead), Payload: int32(payload),
		Segs: 1, Seq: seq, Ack: ack, Proto: pkt.TCP, Flags: flags | pkt.FlagACK, CsumOK: csum, Txn: txn,
	}
}
