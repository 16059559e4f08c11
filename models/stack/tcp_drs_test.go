package stack

import (
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// drsSocket returns a socket of a TCP with the given receive-buffer
// configuration (MSS 1448, 2048 B segment buffers: 2304 B of truesize per
// 1448 B of window).
func drsSocket(cfg TCPConfig) *TCPSocket {
	cfg.MSS, cfg.SegTruesize = 1448, 2048
	return newTCPSocket(&TCP{cfg: cfg}, 0)
}

// TestRcvRTTUpdate: tcp_rcv_rtt_update latches a smaller sample, averages
// a larger timestamp sample in with weight 1/8 only while the receive
// queue is empty, and ignores a larger window-dependent one.
func TestRcvRTTUpdate(t *testing.T) {
	for _, c := range []struct {
		name    string
		start   uint32 // rtt_us << 3 before
		sample  uint32 // us
		winDep  bool
		queued  uint32 // bytes received and not copied
		wantRTT uint32 // rtt_us << 3 after
	}{
		{"first sample", 0, 100, true, 0, 800},
		{"smaller sample latched", 800, 40, false, 5000, 320},
		{"larger TS sample, queue empty: EWMA", 800, 500, false, 0, 800 - 100 + 500},
		{"larger TS sample, queue not empty: ignored", 800, 500, false, 1448, 800},
		{"larger window-dependent sample: ignored", 800, 500, true, 0, 800},
	} {
		t.Run(c.name, func(t *testing.T) {
			sk := drsSocket(TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20})
			sk.drs.rttUs = c.start
			sk.rcvNxt, sk.copiedSeq = 10000+c.queued, 10000
			sk.rttUpdate(c.sample, c.winDep)
			if sk.drs.rttUs != c.wantRTT {
				t.Errorf("rtt_us<<3 %d, want %d", sk.drs.rttUs, c.wantRTT)
			}
		})
	}
}

// TestRcvRTTMeasureTS: one sample per new TSecr, from a full-sized segment,
// in whole milliseconds of the timestamp clock; a zero difference is no
// sample.
func TestRcvRTTMeasureTS(t *testing.T) {
	full := pkt.Packet{Payload: 1448}
	now := 10*sim.Millisecond + 300*sim.Microsecond // TSVal 10
	for _, c := range []struct {
		name    string
		p       pkt.Packet
		last    uint16
		wantRTT uint32
	}{
		{"2 ms old echo", pkt.Packet{Payload: 1448, TSecr: 8}, 0, 2000 << 3},
		{"same ms: zero sample dropped", pkt.Packet{Payload: 1448, TSecr: 10}, 0, 0},
		{"TSecr seen before", pkt.Packet{Payload: 1448, TSecr: 8}, 8, 0},
		{"short segment", pkt.Packet{Payload: 100, TSecr: 8}, 0, 0},
		{"across the 16-bit wrap", pkt.Packet{Payload: 1448, TSecr: 65534}, 0, 12000 << 3},
		{"no timestamp", full, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			sk := drsSocket(TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20})
			sk.drs.lastTsecr = c.last
			sk.rttMeasureTS(now, c.p)
			if sk.drs.rttUs != c.wantRTT {
				t.Errorf("rtt_us<<3 %d, want %d", sk.drs.rttUs, c.wantRTT)
			}
		})
	}
}

// TestRcvRTTMeasure: the window-dependent sample is the time rcv_nxt took
// to pass the window advertised when the measurement began.
func TestRcvRTTMeasure(t *testing.T) {
	sk := drsSocket(TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20})
	sk.wnd = 10 * 1448
	sk.rttMeasure(0) // begins: rcv_nxt 0 + rcv_wnd
	sk.rcvNxt = 9 * 1448
	sk.rttMeasure(30 * sim.Microsecond) // not yet a window
	if sk.drs.rttUs != 0 {
		t.Fatalf("sample before a window was received: %d", sk.drs.rttUs)
	}
	sk.rcvNxt = 10 * 1448
	sk.rttMeasure(45 * sim.Microsecond)
	if sk.drs.rttUs != 45<<3 || sk.drs.rttSeq != 20*1448 {
		t.Errorf("rtt_us<<3 %d, next at %d; want %d and %d", sk.drs.rttUs, sk.drs.rttSeq, 45<<3, 20*1448)
	}
}

// TestRcvSpaceAdjust: once an estimated RTT has passed, the bytes copied
// in it less what is queued become rcvq_space.space if they are more, and
// sk_rcvbuf grows to the space of 2 x space + 2 x 2 x space x growth/old
// (tcp_rcvbuf_grow), capped at tcp_rmem[2]; a locked socket keeps its
// size; less than before leaves everything.
func TestRcvSpaceAdjust(t *testing.T) {
	const rtt = 50 * sim.Microsecond
	// 14,480 -> 28,960 copied: rcvwin 57,920 + 2 x 57,920 x 1 = 173,760 B
	// of window = 120 segments of 2304 B = 276,480 B of buffer.
	for _, c := range []struct {
		name       string
		cfg        TCPConfig
		copied     uint32
		queued     uint32
		at         sim.Time
		wantSpace  int
		wantRcvbuf int
	}{
		{"doubled", TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20}, 28960, 0, rtt, 28960, 276480},
		{"before an RTT", TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20}, 28960, 0, rtt - sim.Microsecond, 14480, 131072},
		{"inq subtracted: no growth", TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20}, 28960, 14480, rtt, 14480, 131072},
		{"capped at tcp_rmem[2]", TCPConfig{Rcvbuf: 131072, RmemMax: 200000}, 28960, 0, rtt, 28960, 200000},
		{"locked (SO_RCVBUF)", TCPConfig{Rcvbuf: 131072, RmemMax: 32 << 20, Locked: true}, 28960, 0, rtt, 28960, 131072},
	} {
		t.Run(c.name, func(t *testing.T) {
			sk := drsSocket(c.cfg)
			sk.drs.rttUs = uint32(rtt/sim.Microsecond) << 3
			sk.copiedSeq, sk.rcvNxt = c.copied, c.copied+c.queued
			sk.spaceAdjust(c.at)
			if sk.drs.space != c.wantSpace || sk.rcvbuf != c.wantRcvbuf {
				t.Errorf("space %d, rcvbuf %d; want %d and %d", sk.drs.space, sk.rcvbuf, c.wantSpace, c.wantRcvbuf)
			}
		})
	}
}
