package traffic

import (
	"math"
	"math/rand/v2"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Source yields packets in arrival order.
type Source interface {
	// Peek returns the arrival time of the next packet, sim.Never if none.
	Peek() sim.Time
	// Pop returns the next packet; call only after Peek returned a time.
	Pop() pkt.Packet
}

// WireTime returns the serialisation time of a frame of pktSize bytes
// (without FCS) plus overhead bytes (FCS, preamble, IFG) at gbps.
func WireTime(pktSize, overhead int, gbps float64) float64 {
	if gbps <= 0 {
		return 0
	}
	return float64((pktSize+overhead)*8) / gbps
}

// LinePPS returns the line rate in packets per second.
func LinePPS(pktSize, overhead int, gbps float64) float64 {
	if gbps <= 0 {
		return math.Inf(1)
	}
	return gbps * 1e9 / float64((pktSize+overhead)*8)
}

// PktgenConfig configures a pktgen flood (samples/pktgen vocabulary).
type PktgenConfig struct {
	PktSize int // bytes without FCS (pktgen -s)
	Threads int // sender threads (pktgen -t)
	Burst   int // packets per burst (pktgen -b); 0/1 = none
	Flows   int // flows cycled packet by packet
	// RatePPS is the requested total rate; 0 = line rate.
	RatePPS float64
	// ThreadMaxPPS is what one pktgen thread can send.
	ThreadMaxPPS float64
	Count        int64 // total packets, 0 = unlimited
	// Jitter is the CV of the gap between bursts (0 = exact).
	Jitter float64
	// LineGbps and Overhead give the wire; LineGbps 0 = no wire limit.
	LineGbps float64
	Overhead int
	// Proto and Port describe the packets (UDP to port 9 by default).
	Proto pkt.Proto
	// ZeroCsum sends UDP without a checksum (check 0), as pktgen does
	// unless its UDPCSUM flag is set; a UDP socket sender (traffic kind
	// udp) checksums.
	ZeroCsum bool
	Start    sim.Time
}

// Pktgen is a deterministic flood: bursts of Burst packets back to back at
// wire speed, bursts spaced so the mean rate is the offered rate, which is
// min(rate, threads x thread_max_pps, line rate).
type Pktgen struct {
	cfg      PktgenConfig
	wire     float64 // ns per frame on the wire
	gap      float64 // ns from one burst start to the next
	burst    int
	next     float64
	inBurst  int
	sent     int64
	flow     uint32
	rng      *rand.Rand
	hashes   []uint32
	offered  float64
	lineRate float64
	tmpl     pkt.Packet
	// arr is the next packet's arrival (next + wire), Never when Count is reached.
	arr sim.Time
}

// NewPktgen returns a flood source; rng is used only when Jitter > 0.
func NewPktgen(cfg PktgenConfig, rng *rand.Rand) *Pktgen {
	if cfg.Threads < 1 {
		cfg.Threads = 1
	}
	if cfg.Flows < 1 {
		cfg.Flows = 1
	}
	g := &Pktgen{cfg: cfg, rng: rng, burst: max(cfg.Burst, 1)}
	g.wire = WireTime(cfg.PktSize, cfg.Overhead, cfg.LineGbps)
	g.lineRate = LinePPS(cfg.PktSize, cfg.Overhead, cfg.LineGbps)
	rate := float64(cfg.Threads) * cfg.ThreadMaxPPS
	if cfg.RatePPS > 0 {
		rate = math.Min(rate, cfg.RatePPS)
	}
	rate = math.Min(rate, g.lineRate)
	g.offered = rate
	g.gap = float64(g.burst) * 1e9 / rate
	g.next = float64(cfg.Start)
	g.tmpl = pkt.Packet{Len: int32(cfg.PktSize), Payload: int32(max(cfg.PktSize-42, 0)), Segs: 1, Proto: cfg.Proto, CsumOK: true,
		ZeroCsum: cfg.ZeroCsum && cfg.Proto == pkt.UDP}
	g.hashes = make([]uint32, cfg.Flows)
	for i := range g.hashes {
		g.hashes[i] = FlowHash(uint32(i))
	}
	g.setArr()
	return g
}

// OfferedPPS returns the mean rate the source sends at.
func (g *Pktgen) OfferedPPS() float64 { return g.offered }

// LinePPS returns the wire's packet rate for this frame size.
func (g *Pktgen) LinePPS() float64 { return g.lineRate }

// Peek implements Source.
func (g *Pktgen) Peek() sim.Time { return g.arr }

// setArr computes the next arrival after next or sent changed.
func (g *Pktgen) setArr() {
	if g.cfg.Count > 0 && g.sent >= g.cfg.Count {
		g.arr = sim.Never
		return
	}
	g.arr = sim.Time(g.next + g.wire)
}

// Pop implements Source.
func (g *Pktgen) Pop() pkt.Packet {
	p := g.tmpl
	p.Arrival = g.arr
	p.Flow, p.Hash = g.flow, g.hashes[g.flow]
	g.sent++
	g.flow++
	if int(g.flow) >= len(g.hashes) {
		g.flow = 0
	}
	g.inBurst++
	if g.inBurst < g.burst {
		g.next += g.wire
		g.setArr()
		return p
	}
	// Next burst: start gap after this burst's start, never before the wire is free.
	start := g.next - float64(g.inBurst-1)*g.wire
	gap := g.gap
	if g.cfg.Jitter > 0 && g.rng != nil {
		gap *= math.Max(0, 1+g.cfg.Jitter*g.rng.NormFloat64())
	}
	g.next = math.Max(start+gap, g.next+g.wire)
	g.inBurst = 0
	g.setArr()
	return p
}

// PopUntil writes the packets arriving at or before t into dst (at most
// len(dst)) and returns how many (nic.BulkFeed).
func (g *Pktgen) PopUntil(t sim.Time, dst []pkt.Packet) int {
	n := 0
	for n < len(dst) && g.arr <= t {
		dst[n] = g.Pop()
		n++
	}
	return n
}

// SkipUntil discards the packets arriving at or before t and returns how
// many (nic.BulkFeed).
func (g *Pktgen) SkipUntil(t sim.Time) int {
	n := 0
	for g.arr <= t {
		g.Pop()
		n++
	}
	return n
}

// FlowHash stands in for the NIC's Toeplitz RSS hash of flow f's 5-tuple: a
// fixed mixing function (what matters to the model is a stable spread over
// queues and GRO buckets). It never returns 0 (0 means "no hash").
func FlowHash(f uint32) uint32 {
	x := f*0x9e3779b1 + 0x7f4a7c15
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	if x == 0 {
		x = 1
	}
	return x
}
