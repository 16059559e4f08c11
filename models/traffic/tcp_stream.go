package traffic

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// TCPRTOMin is TCP_RTO_MIN (include/net/tcp.h: HZ/5 = 200 ms), the
// retransmission timeout the stream sender uses when a loss leaves it
// nothing to be told about by the receiver.
const TCPRTOMin = 200 * sim.Millisecond

// TCPStreamConfig configures netperf TCP_STREAM senders on the remote host.
type TCPStreamConfig struct {
	Streams int
	MSS     int
	// TSOBytes is the largest burst the sender emits back to back (one TSO
	// skb of the remote host: 64 KiB by default, gso_max_size).
	TSOBytes int
	// PSH sets PSH on the last segment of every TSO burst (what Google's
	// stack does so receivers know the GRO boundary, kernel-rx-path.md §8.3).
	PSH bool
	// CsumOK is what the receiving NIC reports for the checksum.
	CsumOK bool
	// FirstFlow numbers the streams' flows FirstFlow, FirstFlow+1, ...
	FirstFlow uint32
	// InitWindow is the receiver's window before its first ACK (bytes).
	InitWindow uint32
	// PacingPPS caps the sender (all streams together) at this many
	// segments per second, like fq pacing on the remote host: a TSO burst
	// of n segments still leaves back to back at line rate, and the next
	// burst starts n/PacingPPS seconds after it. 0 = no pacing (line rate
	// and the window are the only limits).
	PacingPPS float64
	Start     sim.Time
}

// tcpSender is one stream's sender state (the remote host's tcp_sock).
type tcpSender struct {
	flow, hash     uint32
	sndUna, sndNxt uint32
	rwnd           uint32
	// cwnd and ssthresh (bytes): Reno's response to a loss, so that a
	// go-back-N round does not resend a whole window into an overloaded
	// receiver at line rate again and again. cwnd starts at the receiver's
	// window (no slow start) and is never the limit without losses.
	cwnd, ssthresh uint32
	cwndAcc        uint32 // bytes acknowledged towards the next +MSS in congestion avoidance
	// epoch numbers the go-back-N rounds; segments carry it in Txn.
	epoch    uint32
	rtoArmed bool
	rtoUna   uint32
	// tsHist is the TSvals of the ACKs received (ts_recent) and when each
	// arrived, oldest first, one entry per change: the TSecr a segment
	// carries is the latest one that had arrived when it was sent.
	tsHist []tsRecent
	tsHead int
}

// tsRecent is one ts_recent value and when the sender got it.
type tsRecent struct {
	at  float64
	val uint16
}

// TCPStreamStats are the senders' counters.
type TCPStreamStats struct {
	Segments    uint64 // segments pushed, retransmissions included
	Bytes       uint64 // payload bytes pushed, retransmissions included
	Retransmits uint64 // segments sent again after a go-back-N
	GoBacks     uint64 // go-back-N rounds started by a duplicate ACK
	RTOs        uint64 // go-back-N rounds started by the retransmission timer
	Acks        uint64 // ACKs received
	Bursts      uint64 // TSO bursts
}

// TCPStream is N bulk TCP senders (netperf TCP_STREAM) limited by the line
// rate of the wire and by the receiver's advertised window. They are ACK
// clocked: every ACK (and the start) lets a sender emit what the window
// allows, in TSO bursts of at most TSOBytes, back to back at wire speed.
// Loss (ring drops, socket drops) is repaired by going back to the first
// unacknowledged byte when the receiver reports an out-of-order segment of
// the current round, or after TCPRTOMin without progress; a loss halves
// the window in flight (Reno's cwnd, grown back by one MSS per window).
// Without loss the window is the receiver's: there is no slow start, SACK,
// pacing or other congestion control.
type TCPStream struct {
	cfg   TCPStreamConfig
	wire  *Wire
	rev   *Link
	eng   *sim.Engine
	flows []tcpSender
	// nextBurst is when pacing lets the next TSO burst start (ns).
	nextBurst float64
	Stats     TCPStreamStats
}

// NewTCPStream returns the senders pushing into wire; ACKs come back over
// rev. eng runs the retransmission timers.
func NewTCPStream(cfg TCPStreamConfig, wire *Wire, rev *Link, eng *sim.Engine) *TCPStream {
	cfg.Streams = max(cfg.Streams, 1)
	cfg.TSOBytes = max(cfg.TSOBytes, cfg.MSS)
	s := &TCPStream{cfg: cfg, wire: wire, rev: rev, eng: eng, flows: make([]tcpSender, cfg.Streams)}
	for i := range s.flows {
		f := cfg.FirstFlow + uint32(i)
		s.flows[i] = tcpSender{flow: f, hash: FlowHash(f), rwnd: cfg.InitWindow, cwnd: max(cfg.InitWindow, uint32(2*cfg.MSS)), ssthresh: maxCwnd}
	}
	return s
}

// Flows returns the flow ids of the streams.
func (s *TCPStream) Flows() []uint32 {
	out := make([]uint32, len(s.flows))
	for i := range s.flows {
		out[i] = s.flows[i].flow
	}
	return out
}

// SetInitWindow sets the receiver's window the senders assume before the
// first ACK (the window of the SYN-ACK).
func (s *TCPStream) SetInitWindow(wnd uint32) {
	for i := range s.flows {
		s.flows[i].rwnd = wnd
		s.flows[i].cwnd = max(wnd, uint32(2*s.cfg.MSS))
	}
}

// Start sends every stream's initial window.
func (s *TCPStream) Start() {
	for i := range s.flows {
		s.push(&s.flows[i], float64(s.cfg.Start))
	}
}

func (s *TCPStream) sender(flow uint32) *tcpSender {
	i := int(flow - s.cfg.FirstFlow)
	if i < 0 || i >= len(s.flows) {
		return nil
	}
	return &s.flows[i]
}

// Ack is an ACK leaving the receiver at t: cumulative ack, window wnd, and
// sack >= 0 when it reports an out-of-order segment of round sack.
func (s *TCPStream) Ack(t sim.Time, flow, ack, wnd uint32, sack int64) {
	f := s.sender(flow)
	if f == nil {
		return
	}
	at := s.rev.Transmit(float64(t), TCPFrameOverhead)
	s.Stats.Acks++
	f.noteTS(at, pkt.TSVal(t))
	if acked := int32(ack - f.sndUna); acked > 0 {
		f.sndUna = ack
		s.grow(f, uint32(acked))
	}
	f.rwnd = wnd
	if sack >= 0 && uint32(sack) == f.epoch {
		s.goBack(f)
	}
	s.push(f, at)
}

// noteTS records the TSval of an ACK that reaches the sender at at.
func (f *tcpSender) noteTS(at float64, val uint16) {
	if n := len(f.tsHist); n > f.tsHead && f.tsHist[n-1].val == val {
		return
	}
	if f.tsHead >= 64 { // drop the consumed entries now and then
		f.tsHist = append(f.tsHist[:0], f.tsHist[f.tsHead:]...)
		f.tsHead = 0
	}
	f.tsHist = append(f.tsHist, tsRecent{at: at, val: val})
}

// Stamp is the Wire's Stamp: a segment of flow that left at sent echoes
// its sender's ts_recent then (0 before the first ACK). The wire reads
// segments in the order they left, so the history before sent is dropped.
func (s *TCPStream) Stamp(flow uint32, sent sim.Time) uint16 {
	f := s.sender(flow)
	if f == nil {
		return 0
	}
	t := float64(sent)
	for f.tsHead+1 < len(f.tsHist) && f.tsHist[f.tsHead+1].at <= t {
		f.tsHead++
	}
	if f.tsHead < len(f.tsHist) && f.tsHist[f.tsHead].at <= t {
		return f.tsHist[f.tsHead].val
	}
	return 0
}

// Data is response data from the receiver; a stream receiver sends none.
func (s *TCPStream) Data(t sim.Time, flow, ack uint32, bytes int) { s.Ack(t, flow, ack, 0, -1) }

// maxCwnd bounds cwnd (a window the receiver never advertises).
const maxCwnd = 1 << 30

// grow is tcp_cong_avoid for Reno: slow start below ssthresh, one MSS per
// window acknowledged above it.
func (s *TCPStream) grow(f *tcpSender, acked uint32) {
	if f.cwnd < f.ssthresh {
		f.cwnd = min(f.cwnd+acked, maxCwnd)
		return
	}
	f.cwndAcc += acked
	if f.cwndAcc >= f.cwnd {
		f.cwndAcc -= f.cwnd
		f.cwnd = min(f.cwnd+uint32(s.cfg.MSS), maxCwnd)
	}
}

// goBack starts a go-back-N round from the first unacknowledged byte and
// halves the window in flight (ssthresh = cwnd = flight/2, at least 2 MSS).
func (s *TCPStream) goBack(f *tcpSender) {
	flight := f.sndNxt - f.sndUna
	s.Stats.Retransmits += uint64(flight) / uint64(s.cfg.MSS)
	f.ssthresh = max(flight/2, uint32(2*s.cfg.MSS))
	f.cwnd, f.cwndAcc = f.ssthresh, 0
	f.sndNxt = f.sndUna
	f.epoch++
}

// push sends what the window allows from time at.
func (s *TCPStream) push(f *tcpSender, at float64) {
	mss := s.cfg.MSS
	sent := false
	for {
		avail := int(int32(f.sndUna + min(f.rwnd, f.cwnd) - f.sndNxt))
		n := min(avail, s.cfg.TSOBytes) / mss
		if n <= 0 {
			break
		}
		start := at
		if s.cfg.PacingPPS > 0 {
			start = max(at, s.nextBurst)
			s.nextBurst = start + float64(n)*1e9/s.cfg.PacingPPS
		}
		for i := 0; i < n; i++ {
			var flags uint8
			if s.cfg.PSH && i == n-1 {
				flags = pktFlagPSH
			}
			s.wire.Send(start, segment(f.flow, f.hash, f.sndNxt, 1, mss, flags, s.cfg.CsumOK, f.epoch))
			f.sndNxt += uint32(mss)
		}
		s.Stats.Segments += uint64(n)
		s.Stats.Bytes += uint64(n * mss)
		s.Stats.Bursts++
		sent = true
	}
	if sent {
		s.wire.Kick(f.hash)
	}
	s.armRTO(f, at)
}

// armRTO starts the retransmission timer when data is outstanding.
func (s *TCPStream) armRTO(f *tcpSender, at float64) {
	if f.rtoArmed || f.sndNxt == f.sndUna || s.eng == nil {
		return
	}
	f.rtoArmed = true
	f.rtoUna = f.sndUna
	s.eng.Schedule(sim.Time(at)+TCPRTOMin, (*rtoTimer)(s), int64(f.flow-s.cfg.FirstFlow))
}

type rtoTimer TCPStream

// Fire implements sim.Handler: tcp_retransmit_timer when nothing was
// acknowledged for TCPRTOMin.
func (r *rtoTimer) Fire(now sim.Time, i int64) {
	s := (*TCPStream)(r)
	f := &s.flows[i]
	f.rtoArmed = false
	if f.sndUna == f.sndNxt {
		return
	}
	if f.sndUna == f.rtoUna {
		s.Stats.RTOs++
		s.goBack(f)
		f.cwnd = uint32(s.cfg.MSS) // tcp_enter_loss: cwnd 1, slow start to ssthresh
	}
	s.push(f, float64(now))
}

// Outstanding returns the bytes sent and not acknowledged, over all streams.
func (s *TCPStream) Outstanding() uint64 {
	var n uint64
	for i := range s.flows {
		n += uint64(s.flows[i].sndNxt - s.flows[i].sndUna)
	}
	return n
}
