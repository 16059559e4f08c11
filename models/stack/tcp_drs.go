package stack

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Receive-buffer autotuning (dynamic right-sizing, net/ipv4/tcp_input.c),
// as in the kernel after Eric Dumazet's "tcp: receive side improvements"
// series (v6.16, backported to the 6.12+ stable trees) and its follow-up
// "tcp: fix too slow tcp_rcvbuf_grow() action" (aa251c84636c). The later
// tcp_rcvbuf_low_rtt damping for sub-millisecond RTTs is not modelled.
//
//   - The receiver's RTT estimate, rcv_rtt_est.rtt_us (in us << 3), takes
//     two kinds of samples. tcp_rcv_rtt_measure_ts: once per new TSecr, a
//     full-sized segment gives now - TSecr in the millisecond TCP timestamp
//     clock (tcp_time_stamp_ts); zero samples are dropped. tcp_rcv_rtt_measure
//     (window-dependent): the time rcv_nxt took to advance by the window
//     advertised when the measurement began. tcp_rcv_rtt_update latches any
//     sample below the estimate; a larger one is ignored when
//     window-dependent or when the receive queue is not empty, and
//     otherwise averaged in with weight 1/8.
//   - tcp_rcv_space_adjust, after every chunk tcp_recvmsg copies: once an
//     estimated RTT has passed since the last measurement, the bytes copied
//     in it less what is still queued (inq) become rcvq_space.space if they
//     are more, and tcp_rcvbuf_grow sizes sk_rcvbuf for twice that plus the
//     growth since the last measurement counted twice again ("slow start:
//     allow the sender to double its rate"), converted from window to
//     buffer space by the payload/truesize of a full-sized segment, capped
//     at tcp_rmem[2]. sk_rcvbuf never shrinks.
//
// A socket whose size the application set (SO_RCVBUF, TCPConfig.Locked)
// or a host with tcp_moderate_rcvbuf off keeps its sk_rcvbuf.

// tcpInitCwnd is TCP_INIT_CWND: tcp_init_buffer_space starts
// rcvq_space.space at TCP_INIT_CWND x advmss.
const tcpInitCwnd = 10

// drs is one socket's autotuning state.
type drs struct {
	rttUs      uint32   // rcv_rtt_est.rtt_us (us << 3; 0: none)
	rttSeq     uint32   // rcv_rtt_est.seq
	rttTime    sim.Time // rcv_rtt_est.time
	rttStarted bool     // rcv_rtt_est.time != 0
	lastTsecr  uint16   // rcv_rtt_last_tsecr
	space      int      // rcvq_space.space
	spaceSeq   uint32   // rcvq_space.seq
	spaceTime  sim.Time // rcvq_space.time
}

// initSpace is tcp_init_buffer_space's rcvq_space: TCP_INIT_CWND segments,
// measured from now.
func (sk *TCPSocket) initSpace(now sim.Time) {
	sk.drs.space = tcpInitCwnd * sk.t.cfg.MSS
	sk.drs.spaceSeq, sk.drs.spaceTime = sk.copiedSeq, now
}

// rttMeasureTS is tcp_rcv_rtt_measure_ts for an in-order data skb p.
func (sk *TCPSocket) rttMeasureTS(now sim.Time, p pkt.Packet) {
	if p.TSecr == 0 || p.TSecr == sk.drs.lastTsecr {
		return
	}
	sk.drs.lastTsecr = p.TSecr
	if int(p.Payload) < sk.t.cfg.MSS {
		return
	}
	if d := pkt.TSDelta(pkt.TSVal(now), p.TSecr); d > 0 {
		sk.rttUpdate(uint32(d*1e6/pkt.TCPTSHz), false)
	}
}

// rttMeasure is tcp_rcv_rtt_measure (tcp_event_data_recv), after rcv_nxt
// advanced: one sample per advertised window received.
func (sk *TCPSocket) rttMeasure(now sim.Time) {
	d := &sk.drs
	if d.rttStarted {
		if int32(sk.rcvNxt-d.rttSeq) < 0 {
			return
		}
		us := uint32(max((now-d.rttTime)/sim.Microsecond, 1))
		sk.rttUpdate(us, true)
	}
	d.rttSeq, d.rttTime, d.rttStarted = sk.rcvNxt+sk.wnd, now, true
}

// rttUpdate is tcp_rcv_rtt_update with a sample in us.
func (sk *TCPSocket) rttUpdate(sample uint32, winDep bool) {
	d := &sk.drs
	m := sample << 3
	switch {
	case d.rttUs == 0 || m < d.rttUs:
		d.rttUs = m
	case winDep || sk.rcvNxt != sk.copiedSeq:
		// a larger window-dependent sample, or one taken while the
		// receive queue is not empty, is not used
	default:
		d.rttUs = d.rttUs - d.rttUs>>3 + sample
	}
}

// spaceAdjust is tcp_rcv_space_adjust after the reader copied a chunk.
func (sk *TCPSocket) spaceAdjust(now sim.Time) {
	d := &sk.drs
	if d.rttUs == 0 || (now-d.spaceTime)/sim.Microsecond < sim.Time(d.rttUs>>3) {
		return
	}
	copied := int(int32(sk.copiedSeq-d.spaceSeq)) - int(int32(sk.rcvNxt-sk.copiedSeq))
	if copied > d.space {
		sk.rcvbufGrow(copied)
	}
	d.spaceSeq, d.spaceTime = sk.copiedSeq, now
}

// rcvbufGrow is tcp_rcvbuf_grow: rcvq_space.space becomes newval, and
// sk_rcvbuf grows to hold twice it plus twice the growth.
func (sk *TCPSocket) rcvbufGrow(newval int) {
	d := &sk.drs
	old := d.space
	d.space = newval
	c := sk.t.cfg
	if !c.autotune() {
		return
	}
	rcvwin := int64(newval) << 1
	rcvwin += rcvwin * int64(newval-old) / int64(max(old, 1)) << 1
	rcvbuf := int(min(sk.spaceFromWin(rcvwin), int64(c.RmemMax)))
	if rcvbuf > sk.rcvbuf {
		sk.rcvbuf = rcvbuf
	}
}

// spaceFromWin is tcp_space_from_win: the buffer space a window of win
// payload bytes takes, at the payload/truesize of a full-sized segment
// (the inverse of windowAt).
func (sk *TCPSocket) spaceFromWin(win int64) int64 {
	c := sk.t.cfg
	return win * int64(c.SegTruesize+tcpSkbShell) / int64(c.MSS)
}

// Rcvbuf returns sk_rcvbuf in bytes.
func (sk *TCPSocket) Rcvbuf() int { return sk.rcvbuf }

// RcvRTT returns the receiver's RTT estimate (rcv_rtt_est; 0 before the
// first sample).
func (sk *TCPSocket) RcvRTT() sim.Time { return sim.Time(sk.drs.rttUs>>3) * sim.Microsecond }

// RcvSpace returns rcvq_space.space: the bytes per estimated RTT that
// sk_rcvbuf was last sized from.
func (sk *TCPSocket) RcvSpace() int { return sk.drs.space }

// Autotuned reports whether receive-buffer autotuning may grow the
// sockets' sk_rcvbuf.
func (t *TCP) Autotuned() bool { return t.cfg.autotune() }
