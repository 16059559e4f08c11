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
	// cwnd and ssthresh (bytes): Reno's response to a loss. cwnd starts
	// at the receiver's window (no slow start) and is never the limit
	// without losses.
	cwnd, ssthresh uint32
	cwndAcc        uint32 // bytes acknowledged towards the next +MSS in congestion avoidance
	// sacked is the receiver's last SACK blocks (its whole out-of-order
	// queue); dupAcks counts duplicate ACKs since the last advance.
	sacked  []pkt.SackBlock
	dupAcks int
	// inRecovery: SACK loss recovery until sndUna reaches recoverPt (the
	// sndNxt when it began); retxHigh is where retransmission of the holes
	// has got to; retxMark is sndNxt when holes were last retransmitted.
	inRecovery                    bool
	recoverPt, retxHigh, retxMark uint32
	// recArmed and recUna: the probe timer is pending, set at sndUna
	// recUna.
	recArmed bool
	recUna   uint32
	// probed: the probe timer fired at sndUna probeUna; it fires once per
	// sndUna (one probe per tail loss), the RTO does the rest.
	probed   bool
	probeUna uint32
	// sent is the bursts of new data in flight (their end and when they
	// were pushed), for RTT samples; srtt is the smoothed RTT (ns, 0: no
	// sample yet), which sets the probe timeout.
	sent     []sentBurst
	sentHead int
	srtt     float64
	// epoch numbers the retransmission-timeout rounds; segments carry it
	// in Txn.
	epoch    uint32
	rtoArmed bool
	rtoUna   uint32
	// tsHist is the TSvals of the ACKs received (ts_recent) and when each
	// arrived, oldest first, one entry per change: the TSecr a segment
	// carries is the latest one that had arrived when it was sent.
	tsHist []tsRecent
	tsHead int
}

// sentBurst is one burst of new data: its end sequence and push time.
type sentBurst struct {
	end uint32
	at  float64
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
	Retransmits uint64 // segments sent again (holes in recovery, or everything after an RTO)
	Recoveries  uint64 // SACK loss recoveries entered
	// ProbeTimeouts counts probe timers that found no progress and
	// marked everything outstanding that was not SACKed lost.
	ProbeTimeouts uint64
	RTOs          uint64 // go-back-N rounds started by the retransmission timer
	Acks          uint64 // ACKs received
	Bursts        uint64 // TSO bursts
}

// TCPStream is N bulk TCP senders (netperf TCP_STREAM) limited by the line
// rate of the wire and by the receiver's advertised window. They are ACK
// clocked: every ACK (and the start) lets a sender emit what the window
// allows, in TSO bursts of at most TSOBytes, back to back at wire speed.
// Loss (ring drops, socket drops) is repaired with SACK (RFC 6675, in
// outline): once the receiver's SACK blocks cover TCP_FASTRETRANS_THRESH
// (3) segments above the cumulative ACK, or after 3 duplicate ACKs, the
// sender enters recovery, halves its window (Reno's ssthresh, grown back by
// one MSS per window), retransmits every hole below the highest SACKed
// byte once, and sends new data while the segments in flight that the
// receiver has not SACKed (pipe) stay below cwnd; recovery ends when the
// cumulative ACK passes what was sent when it began. A retransmission is
// lost again when data sent after it is SACKed (RACK, by sequence: the
// wire is FIFO). The probe timer (2 x srtt + RecoveryTimeout without
// progress) resends the last segment (the tail loss probe), and in
// recovery marks every open hole lost again. After TCPRTOMin without
// progress it goes back to the first unacknowledged byte with a window of
// one segment. Not modelled: RACK's per-segment send times, PRR's pacing
// of the retransmissions, CUBIC (Linux's default; beta 0.7 rather than
// Reno's 0.5) and HyStart, slow start from an initial window, and pacing
// (fq).
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
// the SACK blocks of the receiver's out-of-order queue (nil when empty).
func (s *TCPStream) Ack(t sim.Time, flow, ack, wnd uint32, sack []pkt.SackBlock) {
	f := s.sender(flow)
	if f == nil {
		return
	}
	at := s.rev.Transmit(float64(t), TCPFrameOverhead)
	s.Stats.Acks++
	f.noteTS(at, pkt.TSVal(t))
	if acked := int32(ack - f.sndUna); acked > 0 {
		f.rttSample(ack, at)
		f.sndUna, f.dupAcks = ack, 0
		if f.inRecovery && int32(ack-f.recoverPt) >= 0 {
			f.inRecovery = false
		}
		if !f.inRecovery {
			s.grow(f, uint32(acked))
		}
	} else if len(sack) > 0 {
		f.dupAcks++
	}
	f.rwnd = wnd
	f.sacked = append(f.sacked[:0], sack...)
	probeSacked := f.probed && f.probeUna == f.sndUna && f.highestSacked() == f.sndNxt
	if !f.inRecovery && len(f.sacked) > 0 && (f.dupAcks >= dupThresh || f.sackedBytes() >= dupThresh*uint32(s.cfg.MSS) || probeSacked) {
		s.enterRecovery(f) // with the probe SACKed, RACK: all before it is lost
	}
	if f.inRecovery {
		if int32(f.highestSacked()-f.retxMark) > 0 && int32(f.retxHigh-f.sndUna) > 0 {
			// RACK: data sent after the last retransmissions was SACKed,
			// so a hole still open below them is lost again
			f.retxHigh = f.sndUna
		}
	}
	s.push(f, at)
}

// rttSample takes an RTT sample from the newest burst that ack covers
// (none in recovery: Karn's rule, the ACK may be for a retransmission) and
// smooths it into srtt with weight 1/8.
func (f *tcpSender) rttSample(ack uint32, at float64) {
	sample := -1.0
	for f.sentHead < len(f.sent) && int32(ack-f.sent[f.sentHead].end) >= 0 {
		sample = at - f.sent[f.sentHead].at
		f.sentHead++
	}
	if f.sentHead >= 64 && f.sentHead*2 >= len(f.sent) {
		f.sent = append(f.sent[:0], f.sent[f.sentHead:]...)
		f.sentHead = 0
	}
	if sample < 0 || f.inRecovery {
		return
	}
	if f.srtt == 0 {
		f.srtt = sample
		return
	}
	f.srtt += (sample - f.srtt) / 8
}

// highestSacked is the end of the highest SACK block (sndUna if none).
func (f *tcpSender) highestSacked() uint32 {
	h := f.sndUna
	for _, b := range f.sacked {
		h = max32(h, b.End)
	}
	return h
}

// dupThresh is TCP_FASTRETRANS_THRESH.
const dupThresh = 3

// sackedBytes is the payload above sndUna the receiver holds.
func (f *tcpSender) sackedBytes() uint32 {
	var n uint32
	for _, b := range f.sacked {
		if int32(b.End-f.sndUna) > 0 {
			n += b.End - max32(b.Start, f.sndUna)
		}
	}
	return n
}

// max32 is the later of two sequence numbers.
func max32(a, b uint32) uint32 {
	if int32(a-b) > 0 {
		return a
	}
	return b
}

// enterRecovery starts SACK loss recovery: ssthresh = cwnd = half the
// window in flight (at least 2 MSS).
func (s *TCPStream) enterRecovery(f *tcpSender) {
	s.Stats.Recoveries++
	flight := f.sndNxt - f.sndUna
	f.ssthresh = max(flight/2, uint32(2*s.cfg.MSS))
	f.cwnd, f.cwndAcc = f.ssthresh, 0
	f.inRecovery, f.recoverPt, f.retxHigh, f.retxMark = true, f.sndNxt, f.sndUna, f.sndUna
}

// retransmitHoles sends, within budget bytes, the segments below the
// highest SACKed byte that the receiver does not hold and that were not
// retransmitted since they were last marked lost; it returns what is left
// of the budget and whether it sent anything.
func (s *TCPStream) retransmitHoles(f *tcpSender, at float64, budget int) (int, bool) {
	mss := uint32(s.cfg.MSS)
	from := max32(f.retxHigh, f.sndUna)
	sent := false
	resend := func(upto uint32) bool { // the hole [from, upto); false when out of budget
		for ; int32(upto-from) > 0 && budget >= int(mss); from += mss {
			s.retransmit(f, from, mss, at)
			budget -= int(mss)
			sent = true
		}
		return int32(upto-from) <= 0
	}
	for _, b := range f.sacked {
		if !resend(b.Start) {
			break
		}
		from = max32(from, b.End)
	}
	f.retxHigh = from
	if sent {
		f.retxMark = f.sndNxt
	}
	return budget, sent
}

// retransmit sends [seq, seq+n) of f again at at.
func (s *TCPStream) retransmit(f *tcpSender, seq, n uint32, at float64) {
	s.wire.Send(at, segment(f.flow, f.hash, seq, 1, int(n), 0, s.cfg.CsumOK, f.epoch))
	s.Stats.Retransmits++
	s.Stats.Segments++
	s.Stats.Bytes += uint64(n)
}

// pipe is RFC 6675's estimate of the bytes in flight during recovery: what
// was sent above the highest SACKed byte, plus the holes below it that
// were retransmitted (those not yet retransmitted are lost, those SACKed
// are at the receiver).
func (f *tcpSender) pipe() uint32 {
	hs := f.highestSacked()
	p := f.sndNxt - hs
	upto := f.retxHigh
	if int32(upto-hs) > 0 {
		upto = hs
	}
	for from := f.sndUna; int32(upto-from) > 0; {
		next := upto // the end of the hole that starts at from
		for _, b := range f.sacked {
			if int32(b.Start-from) > 0 && int32(b.Start-next) < 0 {
				next = b.Start
			}
		}
		p += next - from
		from = next
		for _, b := range f.sacked { // skip the SACKed block at from
			if b.Start == from {
				from = b.End
			}
		}
	}
	return p
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
func (s *TCPStream) Data(t sim.Time, flow, ack uint32, bytes int) { s.Ack(t, flow, ack, 0, nil) }

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

// goBack starts a go-back-N round from the first unacknowledged byte
// after a retransmission timeout and halves the window in flight
// (ssthresh = cwnd = flight/2, at least 2 MSS); recovery and the SACK
// scoreboard are forgotten (tcp_enter_loss).
func (s *TCPStream) goBack(f *tcpSender) {
	flight := f.sndNxt - f.sndUna
	s.Stats.Retransmits += uint64(flight) / uint64(s.cfg.MSS)
	f.ssthresh = max(flight/2, uint32(2*s.cfg.MSS))
	f.cwnd, f.cwndAcc = f.ssthresh, 0
	f.sndNxt = f.sndUna
	f.inRecovery, f.sacked, f.dupAcks = false, f.sacked[:0], 0
	f.sent, f.sentHead = f.sent[:0], 0 // what is resent is not sampled (Karn)
	f.epoch++
}

// push sends what the window allows from time at.
func (s *TCPStream) push(f *tcpSender, at float64) {
	mss := s.cfg.MSS
	sent := false
	budget := 0 // recovery: cwnd less the pipe, retransmissions first
	if f.inRecovery {
		budget, sent = s.retransmitHoles(f, at, int(int32(f.cwnd-f.pipe())))
	}
	for {
		avail := int(int32(f.sndUna + f.rwnd - f.sndNxt))
		if f.inRecovery {
			avail = min(avail, budget)
		} else {
			avail = min(avail, int(int32(f.sndUna+f.cwnd-f.sndNxt)))
		}
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
		f.sent = append(f.sent, sentBurst{end: f.sndNxt, at: start})
		budget -= n * mss
		sent = true
	}
	if sent {
		s.wire.Kick(f.hash)
	}
	s.armRTO(f, at)
	s.armRecoveryTimer(f, at)
}

// RecoveryTimeout is TCP_TIMEOUT_MIN (2 jiffies): the probe timer fires
// after 2 x srtt plus this without the cumulative ACK advancing, and then
// marks everything outstanding that is not SACKed lost (the kernel's tail
// loss probe, tcp_schedule_loss_probe's PTO, and RACK's reordering timer).
const RecoveryTimeout = 2 * sim.Millisecond

// armRecoveryTimer starts the probe timer for the current sndUna when data
// is outstanding.
func (s *TCPStream) armRecoveryTimer(f *tcpSender, at float64) {
	if f.recArmed || s.eng == nil || f.sndNxt == f.sndUna || (!f.inRecovery && f.probed && f.probeUna == f.sndUna) {
		return
	}
	f.recArmed, f.recUna = true, f.sndUna
	pto := sim.Time(2*f.srtt) + RecoveryTimeout
	s.eng.Schedule(sim.Time(at)+pto, (*recoveryTimer)(s), int64(f.flow-s.cfg.FirstFlow))
}

type recoveryTimer TCPStream

// Fire implements sim.Handler: no progress for the probe timeout. The
// tail loss probe resends the last segment (its SACK lets RACK, or the
// entry rule, find what was lost before it); in recovery every open hole
// is marked lost again and resent within the window.
func (r *recoveryTimer) Fire(now sim.Time, i int64) {
	s := (*TCPStream)(r)
	f := &s.flows[i]
	f.recArmed = false
	if f.sndUna == f.recUna && f.sndNxt != f.sndUna {
		// the tail loss probe: resend the last segment; its SACK shows
		// what was lost before it (RACK), else the RTO follows
		f.probed, f.probeUna = true, f.sndUna
		s.Stats.ProbeTimeouts++
		seq := max32(f.sndNxt-uint32(s.cfg.MSS), f.sndUna)
		s.retransmit(f, seq, f.sndNxt-seq, float64(now))
		s.wire.Kick(f.hash)
		if f.inRecovery {
			// no progress in recovery: the holes' retransmissions are
			// lost too; resend them (and probe again after another PTO)
			f.retxHigh = f.sndUna
		}
	}
	s.push(f, float64(now))
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
