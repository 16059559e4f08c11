package traffic

import (
	"fmt"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// GenKind is a local traffic generator of the validation harness
// (validate/gen.go), sending into one end of a veth pair from a thread
// pinned to a CPU. Unlike Pktgen, a generator is closed-loop: it sends as
// fast as its CPU lets it, and the receive work it triggers inline (veth
// NAPI in softirq on the sending CPU) slows it down.
type GenKind uint8

// Generators.
const (
	// GenLive is BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: batches of
	// 64 frames, each redirected (xdp_do_redirect) into the sending veth,
	// then one xdp_do_flush per batch (net/bpf/test_run.c xdp_test_run_batch).
	GenLive GenKind = iota
	// GenAFPacket is AF_PACKET SOCK_RAW with PACKET_QDISC_BYPASS and
	// sendmmsg of 64 messages: one veth_xmit per packet, and the softirq
	// runs after each packet at local_bh_enable in dev_queue_xmit.
	GenAFPacket
	// GenUDP is a connected UDP socket with sendmmsg of 64: udp_sendmsg,
	// ip_output and neighbour output for every message, then veth_xmit.
	GenUDP
)

// LiveBatch is the live-frames batch size (validate-notes A: batch 64;
// NAPI polls 64 frames per batch).
const LiveBatch = 64

// MmsgBatch is the messages per sendmmsg call of the socket generators.
const MmsgBatch = 64

// ParseGenKind reads "live", "afpacket" or "udp".
func ParseGenKind(s string) (GenKind, error) {
	switch s {
	case "live":
		return GenLive, nil
	case "afpacket":
		return GenAFPacket, nil
	case "udp":
		return GenUDP, nil
	}
	return 0, fmt.Errorf("traffic: unknown generator %q, expected live, afpacket or udp", s)
}

func (k GenKind) String() string {
	return [...]string{"live", "afpacket", "udp"}[k]
}

// GenCosts are a generator's costs in ns: per call (one BPF_PROG_RUN batch or
// one sendmmsg system call), per packet, and per byte.
type GenCosts struct {
	Call, Pkt, Byte float64
}

// Xmitter is the device a generator sends into (the veth peer): it charges
// the transmit in the sender's step and takes the packets when the step ends.
type Xmitter interface {
	// ChargeXmit charges the driver's transmit of n packets from cpu (frames: one
	// ndo_xdp_xmit bulk) to w.
	ChargeXmit(w *sim.Work, cpu, n int, frames bool)
	// Xmit hands ps over at now from cpu and returns how many were queued.
	Xmit(now sim.Time, cpu int, ps []pkt.Packet, frames bool) int
}

// GenConfig configures a generator (pktgen's vocabulary).
type GenConfig struct {
	Kind    GenKind
	PktSize int // frame size without FCS (pkt_size)
	Flows   int
	Count   int64 // packets to send, 0 = unlimited
	// Batch overrides the live batch or the sendmmsg vector length (0 = 64).
	Batch int
}

// Gen is a generator thread's body (a sim.Task): each step is one live
// batch, or one message of a sendmmsg call (the call's entry cost is paid
// with its first message), because the softirq runs after every message.
type Gen struct {
	cfg   GenConfig
	c     GenCosts
	fn    sim.FuncID
	tx    Xmitter
	led   *pkt.Ledger
	cpu   int
	batch int

	buf    []pkt.Packet
	n      int // packets built in the current step
	inCall int // messages sent in the current sendmmsg call
	flow   uint32
	hashes []uint32

	// Stats.
	Sent   uint64
	Queued uint64
	Calls  uint64
	Steps  uint64
}

var _ sim.Task = (*Gen)(nil)

// NewGen returns a generator sending into tx from cpu; it charges its own
// work to the function named after the kernel path it stands for.
func NewGen(cfg GenConfig, c GenCosts, tx Xmitter, cpu int, led *pkt.Ledger, funcs *sim.Funcs) *Gen {
	if cfg.Flows < 1 {
		cfg.Flows = 1
	}
	b := cfg.Batch
	if b <= 0 {
		b = LiveBatch
	}
	g := &Gen{cfg: cfg, c: c, tx: tx, led: led, cpu: cpu, batch: b, fn: funcs.ID(genFunc[cfg.Kind])}
	g.buf = make([]pkt.Packet, b)
	g.hashes = make([]uint32, cfg.Flows)
	for i := range g.hashes {
		g.hashes[i] = FlowHash(uint32(i))
	}
	return g
}

var genFunc = [...]string{"bpf_test_run_xdp_live", "packet_sendmmsg", "udp_sendmmsg"}

// String returns the generator's name (live, afpacket, udp).
func (g *Gen) String() string { return g.cfg.Kind.String() }

// Frames reports whether the generator sends xdp_frames (ndo_xdp_xmit)
// rather than skbs (veth_xmit).
func (g *Gen) Frames() bool { return g.cfg.Kind == GenLive }

func (g *Gen) remaining() int64 {
	if g.cfg.Count <= 0 {
		return 1 << 62
	}
	return g.cfg.Count - int64(g.Sent)
}

// Run implements sim.Task: build the step's packets and charge their cost.
func (g *Gen) Run(now sim.Time, w *sim.Work) {
	g.Steps++
	n := 1
	if g.Frames() {
		n = int(min(int64(g.batch), g.remaining()))
	}
	if n <= 0 {
		g.n = 0
		return
	}
	var call float64
	if g.Frames() || g.inCall == 0 {
		call = g.c.Call
		g.Calls++
	}
	if !g.Frames() {
		g.inCall++
		if g.inCall == g.batch {
			g.inCall = 0
		}
	}
	w.Add(g.fn, sim.Time(call+float64(n)*(g.c.Pkt+g.c.Byte*float64(g.cfg.PktSize))))
	for i := 0; i < n; i++ {
		g.buf[i] = g.packet()
	}
	g.n = n
	g.tx.ChargeXmit(w, g.cpu, n, g.Frames())
}

func (g *Gen) packet() pkt.Packet {
	p := pkt.Packet{Flow: g.flow, Hash: g.hashes[g.flow], Len: int32(g.cfg.PktSize),
		Payload: int32(max(g.cfg.PktSize-42, 0)), Segs: 1, Proto: pkt.UDP,
		CsumOK: g.cfg.Kind == GenUDP, ZeroCsum: g.cfg.Kind != GenUDP}
	g.flow++
	if int(g.flow) == len(g.hashes) {
		g.flow = 0
	}
	return p
}

// Done implements sim.Task: at the end of the step the packets reach the
// device (and the NAPI it schedules runs before the next step on the same
// CPU, as at local_bh_enable). The thread stays runnable until Count is sent.
func (g *Gen) Done(now sim.Time) bool {
	if g.n > 0 {
		for i := 0; i < g.n; i++ {
			g.buf[i].Arrival = now
		}
		g.led.Offer(g.n)
		g.Sent += uint64(g.n)
		g.Queued += uint64(g.tx.Xmit(now, g.cpu, g.buf[:g.n], g.Frames()))
		g.n = 0
	}
	return g.remaining() > 0
}
