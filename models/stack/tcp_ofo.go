package stack

import (
	"slices"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// The out-of-order queue (tcp_data_queue_ofo, tcp_ofo_queue) and the SACKs
// it sends (tcp_sack_new_ofo_skb, compressed SACK):
//
//   - A segment above rcv_nxt and within the window is held in
//     out_of_order_queue, charged to sk_rmem_alloc; one whose data is
//     already there or below rcv_nxt is a duplicate and dropped (TCPDup,
//     with an immediate duplicate ACK, as tcp_data_queue's DSACK path).
//   - Each held segment is SACKed. __tcp_ack_snd_check sends the first
//     TCP_FASTRETRANS_THRESH (3) of them at once for a given rcv_nxt and
//     then compresses: one ACK per net.ipv4.tcp_comp_sack_nr (44). The
//     compressed-SACK hrtimer (5% of the RTT, at most 1 ms) is not
//     modelled; the next in-order data sends what is pending.
//   - When in-order data reaches the queue's head, tcp_ofo_queue moves what
//     is now contiguous to the receive queue (the reader sees it, the
//     ledger delivers it) and the ACK goes at once (ICSK_ACK_NOW).
//   - The ACK reports every held range as a SACK block. The kernel sends at
//     most 3 blocks per ACK (4 without timestamps), newest first, so a
//     sender learns of many holes over several ACKs; the model's sender
//     learns them all at once.
//   - A held skb pays tcp_data_queue_ofo (measured, hw profile) beyond
//     tcp_v4_do_rcv, for its insert now and its move in order later.

// tcpFastRetransThresh is TCP_FASTRETRANS_THRESH, the duplicate ACKs sent
// at once before SACKs are compressed.
const tcpFastRetransThresh = 3

// tcpCompSackNr is net.ipv4.tcp_comp_sack_nr's default: compressed SACKs
// between two that are sent.
const tcpCompSackNr = 44

// ofoSkb is one skb held in the out-of-order queue.
type ofoSkb struct {
	p        pkt.Packet
	truesize int
	cpu      *sim.CPU
}

// end is the sequence number after p's payload.
func (o *ofoSkb) end() uint32 { return o.p.Seq + uint32(o.p.Payload) }

// trimOld drops the segments of p below rcv_nxt (tcp_data_queue's
// "partial packet" case: their data arrived already) and reports whether
// anything is left. A GRO super-skb or a coalesced backlog skb can start
// below rcv_nxt when a retransmission was merged with data that followed
// it. The senders' segments are whole MSS, so the overlap is whole
// segments.
func (sk *TCPSocket) trimOld(p *pkt.Packet) bool {
	if int32(sk.rcvNxt-p.Seq) <= 0 {
		return true
	}
	segs := p.WireSegs()
	per := int(p.Payload) / segs // payload per segment
	old := min(int(sk.rcvNxt-p.Seq)/max(per, 1), segs)
	if old == 0 {
		return true
	}
	sk.dropDup(p.Queue, old)
	if old == segs {
		return false
	}
	frame := int(p.Len) / segs
	p.Seq += uint32(old * per)
	p.Payload -= int32(old * per)
	p.Len -= int32(old * frame)
	p.Segs = uint16(segs - old)
	return true
}

// rcvOfo is tcp_data_queue for p, which is not at rcv_nxt: hold it, or
// drop it as a duplicate or beyond the window. It reports whether p was
// held.
func (sk *TCPSocket) rcvOfo(w *sim.Work, cpu *sim.CPU, p pkt.Packet) bool {
	t := sk.t
	segs := p.WireSegs()
	end := p.Seq + uint32(p.Payload)
	i, _ := slices.BinarySearchFunc(sk.ofo, p.Seq, func(o ofoSkb, seq uint32) int { return int(int32(o.p.Seq - seq)) })
	if int32(end-sk.rcvNxt) <= 0 || sk.ofoOverlaps(i, p.Seq, end) {
		sk.dropDup(p.Queue, segs)
		sk.dupAck(w)
		return false
	}
	if int32(end-(sk.rcvWup+sk.wnd)) > 0 {
		t.st.Led.Drop(pkt.TCPOutOfWindow, segs)
		sk.drop(w, p)
		return false
	}
	truesize := segs*t.cfg.SegTruesize + tcpSkbShell
	if sk.rmem+truesize > sk.rcvbuf {
		t.Stats.RcvbufDrops += uint64(segs)
		t.st.Led.Drop(pkt.Rcvbuf, segs)
		sk.drop(w, p)
		return false
	}
	w.Add(t.fnOfo, t.cOfo)
	sk.ofo = slices.Insert(sk.ofo, i, ofoSkb{p: p, truesize: truesize, cpu: cpu})
	sk.rmem += truesize
	sk.ofoSegs += segs
	t.Stats.OfoQueued += uint64(segs)
	sk.incrQuickack() // tcp_enter_quickack_mode on out-of-order data
	sk.sackSndCheck(w)
	return true
}

// ofoOverlaps reports whether the out-of-order queue already holds any of
// [seq, end), i being where seq would be inserted. The queue is sorted and
// its skbs do not overlap, so only the neighbours of i can.
func (sk *TCPSocket) ofoOverlaps(i int, seq, end uint32) bool {
	return (i > 0 && int32(seq-sk.ofo[i-1].end()) < 0) || (i < len(sk.ofo) && int32(sk.ofo[i].p.Seq-end) < 0)
}

// dropDup drops segs segments of an skb from RX queue whose data the
// socket already has (TCPDup) and returns their buffers.
func (sk *TCPSocket) dropDup(queue uint16, segs int) {
	sk.t.Stats.DupDrops += uint64(segs)
	sk.t.st.Led.Drop(pkt.TCPDup, segs)
	sk.t.st.Release(queue, segs)
}

// sackSndCheck is __tcp_ack_snd_check with out-of-order data: the first
// TCP_FASTRETRANS_THRESH duplicate ACKs for this rcv_nxt go at once, then
// one per tcp_comp_sack_nr.
func (sk *TCPSocket) sackSndCheck(w *sim.Work) {
	if sk.sackRcvNxt != sk.rcvNxt {
		sk.sackRcvNxt, sk.dupAckCounter, sk.compressed = sk.rcvNxt, 0, 0
	}
	if sk.dupAckCounter < tcpFastRetransThresh {
		sk.dupAckCounter++
		sk.sendSack(w)
		return
	}
	sk.compressed++
	if sk.compressed > tcpCompSackNr {
		sk.compressed = 0
		sk.sendSack(w)
	}
}

// sendSack sends a duplicate ACK with the SACK blocks.
func (sk *TCPSocket) sendSack(w *sim.Work) {
	sk.t.Stats.DupAcks++
	sk.t.sendAck(w, sk)
}

// ofoQueue is tcp_ofo_queue after rcv_nxt advanced: the held skbs that are
// now in order move to the receive queue. It reports whether any did.
func (sk *TCPSocket) ofoQueue(w *sim.Work) bool {
	t := sk.t
	moved := false
	for len(sk.ofo) > 0 && int32(sk.ofo[0].p.Seq-sk.rcvNxt) <= 0 {
		o := sk.ofo[0]
		sk.ofo = sk.ofo[1:]
		sk.rmem -= o.truesize
		sk.ofoSegs -= o.p.WireSegs()
		if !sk.trimOld(&o.p) { // covered by what arrived
			continue
		}
		segs := o.p.WireSegs()
		o.truesize = segs*t.cfg.SegTruesize + tcpSkbShell
		sk.enqueue(w.Now(), o.p, o.truesize, o.cpu, w.Class())
		t.Stats.Segs += uint64(segs)
		t.Stats.Bytes += uint64(o.p.Payload)
		t.st.Led.Deliver(pkt.ToSocket, segs)
		moved = true
	}
	if len(sk.ofo) == 0 {
		sk.ofo = nil // let the backing array go
	}
	return moved
}

// sackBlocks returns the out-of-order queue's contiguous ranges.
func (sk *TCPSocket) sackBlocks() []pkt.SackBlock {
	var out []pkt.SackBlock
	for i := range sk.ofo {
		o := &sk.ofo[i]
		if n := len(out); n > 0 && out[n-1].End == o.p.Seq {
			out[n-1].End = o.end()
			continue
		}
		out = append(out, pkt.SackBlock{Start: o.p.Seq, End: o.end()})
	}
	return out
}
