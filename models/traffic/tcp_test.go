package traffic

import (
	"slices"
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// drain pops everything from the wire.
func drain(w *Wire) []pkt.Packet {
	var out []pkt.Packet
	for w.Peek() != sim.Never {
		out = append(out, w.Pop())
	}
	return out
}

// 1514 B frames + 24 B overhead at 10G: 1538*8/10 = 1230.4 ns each.
const segWire = 1230.4

func TestWireSerialisesFIFO(t *testing.T) {
	w := NewWire(10, 24, 2000, 2) // tiny capacity: must grow
	var want []sim.Time
	for i := 0; i < 5; i++ {
		p := segment(1, 7, uint32(i*1448), 1, 1448, 0, true, 0)
		got := w.Send(100, p)
		// All ready at 100: back to back, then 2 us propagation.
		exp := at(100 + float64(i+1)*segWire + 2000)
		if got != exp {
			t.Errorf("segment %d arrives %d, want %d", i, got, exp)
		}
		want = append(want, exp)
	}
	// Ready later than the wire frees: starts at its ready time.
	if got, exp := w.Send(20000, segment(1, 7, 0, 1, 1448, 0, true, 0)), at(20000+segWire+2000); got != exp {
		t.Errorf("idle wire: arrives %d, want %d", got, exp)
	}
	want = append(want, at(20000+segWire+2000))
	ps := drain(w)
	if len(ps) != 6 {
		t.Fatalf("popped %d, want 6", len(ps))
	}
	for i, p := range ps {
		if p.Arrival != want[i] {
			t.Errorf("pop %d at %d, want %d", i, p.Arrival, want[i])
		}
	}
	if w.Pushed != w.Popped+uint64(w.InFlight()) {
		t.Errorf("wire conservation: pushed %d != popped %d + in flight %d", w.Pushed, w.Popped, w.InFlight())
	}
}

type ackCase struct {
	name string
	// window before the first ACK, TSO burst, PSH
	wnd    uint32
	tso    int
	psh    bool
	wantN  int   // segments of the initial window
	bursts []int // segments per burst
}

func TestStreamInitialWindow(t *testing.T) {
	cases := []ackCase{
		{name: "window of 10 segments, TSO 4 segments", wnd: 14480, tso: 4 * 1448, wantN: 10, bursts: []int{4, 4, 2}},
		{name: "PSH on the last segment of every burst", wnd: 14480, tso: 4 * 1448, psh: true, wantN: 10, bursts: []int{4, 4, 2}},
		{name: "64 KiB TSO is 45 segments", wnd: 100 * 1448, tso: 65536, wantN: 100, bursts: []int{45, 45, 10}},
		{name: "window below one MSS sends nothing", wnd: 1000, tso: 65536, wantN: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := NewWire(10, 24, 0, 16)
			kicks := 0
			w.OnPush = func(uint32, bool) { kicks++ }
			s := NewTCPStream(TCPStreamConfig{Streams: 1, MSS: 1448, TSOBytes: c.tso, PSH: c.psh, CsumOK: true, InitWindow: c.wnd}, w, NewLink(10, 24, 0), nil)
			s.Start()
			ps := drain(w)
			if len(ps) != c.wantN {
				t.Fatalf("initial window sent %d segments, want %d", len(ps), c.wantN)
			}
			if c.wantN > 0 && kicks != 1 {
				t.Errorf("kicks %d, want 1 per push", kicks)
			}
			end := 0
			for _, b := range c.bursts {
				end += b
				for i := end - b; i < end; i++ {
					psh := ps[i].Flags&pkt.FlagPSH != 0
					if want := c.psh && i == end-1; psh != want {
						t.Errorf("segment %d PSH %v, want %v", i, psh, want)
					}
				}
			}
			for i, p := range ps {
				if p.Seq != uint32(i*1448) || p.Payload != 1448 || p.Len != 1514 || p.Proto != pkt.TCP {
					t.Errorf("segment %d: %+v", i, p)
				}
				if exp := at(float64(i+1) * segWire); p.Arrival != exp {
					t.Errorf("segment %d arrives %d, want %d (back to back at line rate)", i, p.Arrival, exp)
				}
			}
			if s.Stats.Segments != uint64(c.wantN) || s.Outstanding() != uint64(c.wantN*1448) {
				t.Errorf("stats %+v outstanding %d", s.Stats, s.Outstanding())
			}
		})
	}
}

func TestStreamAckClock(t *testing.T) {
	w := NewWire(10, 24, 1000, 16)
	s := NewTCPStream(TCPStreamConfig{Streams: 1, MSS: 1448, TSOBytes: 65536, CsumOK: true, InitWindow: 4 * 1448}, w, NewLink(10, 24, 1000), nil)
	s.Start()
	if n := len(drain(w)); n != 4 {
		t.Fatalf("initial %d segments, want 4", n)
	}
	// ACK of 2 segments with the same window at t = 10 us: the ACK frame
	// (66 B + 24) takes 72 ns on the wire plus 1 us: 2 more segments start at
	// 11072 and arrive 1230.4 ns apart plus 1 us.
	s.Ack(10000, 0, 2*1448, 4*1448, nil)
	ps := drain(w)
	if len(ps) != 2 {
		t.Fatalf("after ACK: %d segments, want 2", len(ps))
	}
	for i, p := range ps {
		exp := at(11072 + float64(i+1)*segWire + 1000)
		if p.Arrival != exp || p.Seq != uint32((4+i)*1448) {
			t.Errorf("segment %d: arrival %d seq %d, want %d seq %d", i, p.Arrival, p.Seq, exp, (4+i)*1448)
		}
	}
	// A zero window stops the sender; an ACK opening it resumes.
	s.Ack(20000, 0, 6*1448, 0, nil)
	if n := len(drain(w)); n != 0 {
		t.Errorf("zero window: sent %d", n)
	}
	s.Ack(30000, 0, 6*1448, 1448, nil)
	if n := len(drain(w)); n != 1 {
		t.Errorf("window of 1 MSS: sent %d, want 1", n)
	}
}

// TestStreamSackRecovery: 10 segments in flight, segment 2 lost. SACK
// blocks for 2 held segments and one duplicate ACK do not start recovery;
// blocks for 3-9 do: the sender halves its window (12 in flight -> 6),
// retransmits only segment 2, and sends new data while the pipe (in
// flight, not SACKed) stays below cwnd. A hole the receiver reports later
// in the same recovery is retransmitted too, each hole once. The ACK that
// covers what was sent when recovery began ends it.
func TestStreamSackRecovery(t *testing.T) {
	const mss = 1448
	blocks := func(b ...uint32) []pkt.SackBlock {
		var out []pkt.SackBlock
		for i := 0; i < len(b); i += 2 {
			out = append(out, pkt.SackBlock{Start: b[i] * mss, End: b[i+1] * mss})
		}
		return out
	}
	seqs := func(ps []pkt.Packet) []uint32 {
		var out []uint32
		for _, p := range ps {
			out = append(out, p.Seq/mss)
		}
		return out
	}
	w := NewWire(10, 24, 0, 16)
	s := NewTCPStream(TCPStreamConfig{Streams: 1, MSS: mss, TSOBytes: 65536, InitWindow: 10 * mss}, w, NewLink(10, 24, 0), nil)
	s.Start()
	drain(w)
	// 0-1 ACKed (cwnd 10 -> 12 in slow start), 3-4 SACKed: 4 new, 10-13.
	s.Ack(50000, 0, 2*mss, 20*mss, blocks(3, 5))
	if got := seqs(drain(w)); s.Stats.Recoveries != 0 || !slices.Equal(got, []uint32{10, 11, 12, 13}) {
		t.Fatalf("below the threshold: sent %v, recoveries %d; want 10-13 and none", got, s.Stats.Recoveries)
	}
	// 3-9 SACKed: recovery, cwnd 6; segment 2 again; pipe 12 - 7 = 5, so
	// one new segment (14).
	s.Ack(51000, 0, 2*mss, 20*mss, blocks(3, 10))
	if got := seqs(drain(w)); s.Stats.Recoveries != 1 || s.Stats.Retransmits != 1 || !slices.Equal(got, []uint32{2, 14}) {
		t.Fatalf("recovery %d, sent %v, retransmits %d; want 1, [2 14], 1", s.Stats.Recoveries, got, s.Stats.Retransmits)
	}
	// A second hole at 10: resent once, 2 not again.
	s.Ack(52000, 0, 2*mss, 20*mss, blocks(3, 10, 11, 14))
	if got := seqs(drain(w)); s.Stats.Retransmits != 2 || len(got) == 0 || got[0] != 10 {
		t.Errorf("second hole: sent %v, retransmits %d; want 10 first and 2 retransmits", got, s.Stats.Retransmits)
	}
	// Recovery began with 14 segments sent: an ACK of 13 does not end it,
	// one of 14 does.
	s.Ack(59000, 0, 13*mss, 20*mss, blocks(13, 15))
	if f := &s.flows[0]; !f.inRecovery || f.recoverPt != 14*mss {
		t.Errorf("in recovery %v after ACK 13 (recovery point %d), want still in it, point %d", f.inRecovery, f.recoverPt, 14*mss)
	}
	s.Ack(60000, 0, 15*mss, 20*mss, nil)
	if f := &s.flows[0]; f.inRecovery {
		t.Errorf("still in recovery after ACK 15 (recovery point %d)", f.recoverPt)
	}
}

// TestStreamRTO: everything sent is lost and no ACK comes. After the
// probe timeout the tail loss probe resends the last segment, once for this
// sndUna. At TCPRTOMin the retransmission timer goes back to the hole with a
// window of one segment, whose ACK opens slow start.
func TestStreamRTO(t *testing.T) {
	eng := sim.NewEngine(16)
	w := NewWire(10, 24, 0, 16)
	s := NewTCPStream(TCPStreamConfig{Streams: 1, MSS: 1448, TSOBytes: 65536, InitWindow: 3 * 1448}, w, NewLink(10, 24, 0), eng)
	s.Start()
	drain(w) // all lost, no ACK ever comes
	eng.Run(TCPRTOMin + sim.Microsecond)
	ps := drain(w)
	if len(ps) != 2 || s.Stats.ProbeTimeouts != 1 || s.Stats.RTOs != 1 {
		t.Fatalf("resent %d segments, %d probes, %d RTOs; want 2 (the probe, then 1 after the RTO), 1, 1", len(ps), s.Stats.ProbeTimeouts, s.Stats.RTOs)
	}
	if p := ps[0]; p.Seq != 2*1448 || p.Arrival > RecoveryTimeout+10*sim.Microsecond {
		t.Errorf("probe: seq %d at %v; want the last segment (%d) just after %v", p.Seq, p.Arrival, 2*1448, RecoveryTimeout)
	}
	if r := ps[1]; r.Seq != 0 || r.Txn != 1 || r.Arrival < TCPRTOMin {
		t.Errorf("after the RTO: seq %d round %d at %v, want seq 0 round 1 after %v", r.Seq, r.Txn, r.Arrival, TCPRTOMin)
	}
	// Its ACK grows cwnd to 2 MSS (slow start up to ssthresh): two more.
	s.Ack(ps[1].Arrival, 0, 1448, 3*1448, nil)
	if n := len(drain(w)); n != 2 {
		t.Errorf("after the first ACK: %d segments, want 2", n)
	}
}

func TestRRClosedLoop(t *testing.T) {
	cases := []struct {
		name      string
		req, resp int
		reqSegs   int
		// latency: request sent at 0, response leaves the host at 50 us;
		// response frames at 10G + 2 us propagation.
		wantLat sim.Time
	}{
		// 1 B response: 67 B frame + 24 = 91 B = 72.8 ns -> 50000+72+2000.
		{"1-byte request/response", 1, 1, 1, 52072},
		// 3000 B response: 1448+1448+104 B payload; frames of 1514, 1514, 170
		// B + 24 each: 1230.4 + 1230.4 + 155.2 ns.
		{"multi-segment response", 1, 3000, 1, at(50000 + 1230.4 + 1230.4 + 155.2 + 2000)},
		{"multi-segment request", 3000, 1, 3, 52072},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := NewWire(10, 24, 2000, 16)
			var lats []sim.Time
			r := NewTCPRR(TCPRRConfig{Flows: 2, ReqSize: c.req, RespSize: c.resp, MSS: 1448, RemoteDelay: 10000}, w, NewLink(10, 24, 2000))
			r.Record = func(lat, at sim.Time) { lats = append(lats, lat) }
			r.Start()
			ps := drain(w)
			if len(ps) != 2*c.reqSegs {
				t.Fatalf("first requests: %d segments, want %d", len(ps), 2*c.reqSegs)
			}
			if ps[c.reqSegs-1].Flags&pkt.FlagPSH == 0 || (c.reqSegs > 1 && ps[0].Flags&pkt.FlagPSH != 0) {
				t.Errorf("PSH must be on the request's last segment only")
			}
			r.Data(50000, 0, uint32(c.req), c.resp)
			if len(lats) != 1 || lats[0] != c.wantLat {
				t.Fatalf("latencies %v, want [%d]", lats, c.wantLat)
			}
			next := drain(w)
			if len(next) != c.reqSegs || next[0].Flow != 0 || next[0].Seq != uint32(c.req) || next[0].Ack != uint32(c.resp) {
				t.Fatalf("next request %+v", next)
			}
			// Sent RemoteDelay after the response arrived.
			if sent := float64(next[0].Arrival) - 2000; sent < float64(c.wantLat)+10000 {
				t.Errorf("next request on the wire at %.0f, before response + remote delay", sent)
			}
			if r.Stats.Transactions != 1 || r.Stats.Requests != 3 {
				t.Errorf("stats %+v", r.Stats)
			}
		})
	}
}

// at rounds ns to a sim.Time as the wire does.
func at(ns float64) sim.Time { return sim.Time(ns + 0.5) }

// TestStreamPacing: with a pacing rate, bursts leave at line rate and start
// n/rate apart: 4-segment bursts at 100 kpps start 40 us apart.
func TestStreamPacing(t *testing.T) {
	w := NewWire(10, 24, 0, 16)
	s := NewTCPStream(TCPStreamConfig{Streams: 1, MSS: 1448, TSOBytes: 4 * 1448, InitWindow: 12 * 1448, PacingPPS: 100000}, w, NewLink(10, 24, 0), nil)
	s.Start()
	ps := drain(w)
	if len(ps) != 12 {
		t.Fatalf("%d segments, want 12", len(ps))
	}
	for i, p := range ps {
		burst, k := i/4, i%4
		if exp := at(float64(burst)*40000 + float64(k+1)*segWire); p.Arrival != exp {
			t.Errorf("segment %d arrives %d, want %d", i, p.Arrival, exp)
		}
	}
}

// TestStreamTSecr: a segment carries the TSval of the last ACK that had
// reached its sender when its first bit left (ts_recent), not when TCP
// queued it: segments queued behind others on the wire echo an ACK that
// arrived meanwhile; those that left before any ACK carry no echo.
func TestStreamTSecr(t *testing.T) {
	w := NewWire(10, 24, 1000, 16)
	s := NewTCPStream(TCPStreamConfig{Streams: 1, MSS: 1448, TSOBytes: 65536, CsumOK: true, InitWindow: 60 * 1448,
		Start: 1990 * sim.Microsecond}, w, NewLink(10, 24, 1000), nil)
	w.Stamp = s.Stamp
	// 60 segments queued at 1.990 ms leave over 73.8 us. An ACK sent at
	// 1.9995 ms (TSval 1) reaches the sender at 2.0005728 ms, one sent at
	// 2.010 ms (TSval 2) at 2.0110728 ms; neither acknowledges data.
	s.Start()
	s.Ack(1999500, 0, 0, 60*1448, nil)
	s.Ack(2010000, 0, 0, 60*1448, nil)
	ps := drain(w)
	if len(ps) != 60 {
		t.Fatalf("%d segments, want 60", len(ps))
	}
	for i, p := range ps {
		sent := float64(p.Arrival) - 1000 - segWire
		var want uint16
		switch {
		case sent >= 2011072.8:
			want = 2
		case sent >= 2000572.8:
			want = 1
		}
		if p.TSecr != want {
			t.Errorf("segment %d left at %.0f ns: TSecr %d, want %d", i, sent, p.TSecr, want)
		}
	}
	if first, last := ps[0].TSecr, ps[59].TSecr; first != 0 || last != 2 {
		t.Errorf("TSecr %d .. %d, want 0 .. 2", first, last)
	}
}
