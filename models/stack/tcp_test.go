package stack_test

import (
	"reflect"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/sim"
)

// The bdw-e5-1650v4 TCP costs (ns).
// (tcp_v4_rcv's own part and tcp_v4_do_rcv add up to the 400 + 8 per
// segment the hand-computed expectations below use).
var tcpCosts = stack.TCPCosts{RcvSkb: 45, DoRcvSkb: 355, DoRcvSeg: 8, AddBacklog: 50, SendAck: 880, RecvCall: 430,
	RecvSkb: 60, CopyByte: 0.1, SendCall: 1500, SendByte: 0.1, Wake: 150}

const mss = 1448

// ack is what the fake peer saw.
type ack struct {
	Ack, Wnd uint32
	Sack     []pkt.SackBlock
	Data     int // response bytes (0: a pure ACK)
}

type peer struct{ got []ack }

func (p *peer) Ack(t sim.Time, flow, a, wnd uint32, sack []pkt.SackBlock) {
	p.got = append(p.got, ack{Ack: a, Wnd: wnd, Sack: sack})
}
func (p *peer) Data(t sim.Time, flow, a uint32, bytes int) {
	p.got = append(p.got, ack{Ack: a, Data: bytes})
}

// seg is a TCP skb of flow 0 with segs segments of MSS from seq.
func seg(seq uint32, segs int, txn uint32) pkt.Packet {
	return pkt.Packet{Flow: 0, Hash: 1, Len: int32(segs * (mss + 66)), Payload: int32(segs * mss), Segs: uint16(segs),
		Seq: seq, Proto: pkt.TCP, Flags: pkt.FlagACK, CsumOK: true, Txn: txn}
}

type tcpBed struct {
	h   *modeltest.Harness
	st  *stack.Stack
	tcp *stack.TCP
	sk  *stack.TCPSocket
	p   *peer
}

func newTCPBed(cfg stack.TCPConfig) *tcpBed {
	h := modeltest.New(modeltest.Config{CPUs: 2})
	b := &tcpBed{h: h, p: &peer{}}
	b.st = stack.New(costs, h.Funcs, h.Softnet, &h.Led, nil)
	b.tcp = stack.NewTCP(b.st, cfg, tcpCosts, h.Funcs, b.p, h.Eng)
	b.sk = b.tcp.Listen(0, h.CPUs[1])
	return b
}

// softirq delivers skbs as one gro_normal list on CPU 0 and returns the
// step's cost.
func (b *tcpBed) softirq(skbs ...pkt.Packet) *sim.Time {
	cost := new(sim.Time)
	b.h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
		for _, p := range skbs {
			b.h.Led.Offer(p.WireSegs())
		}
		b.st.ReceiveList(w, 0, skbs)
		*cost = w.Total()
	}))
	return cost
}

const fullWnd = 212992 / (2048 + 256) * mss // 92 segments of truesize 2304

// TestTCPRcvAcks (quick-ACK mode off: the delayed-ACK rules alone):
// tcp_v4_rcv per skb + per segment, an immediate ACK once
// more than one full segment is unacknowledged (one per super-skb), a
// duplicate ACK carrying the sender's round for an out-of-order segment,
// and drops when the receive buffer is full.
func TestTCPRcvAcks(t *testing.T) {
	list := 25.0 + 15 // netif_receive_skb + ip_rcv per-call parts, once per list
	perSkb := 30.0 + 55 + 400
	cases := []struct {
		name    string
		rcvbuf  int
		skbs    []pkt.Packet
		cost    float64
		acks    []ack
		drops   map[pkt.Reason]uint64
		queued  int // bytes in the socket after the step
		pending bool
	}{
		{name: "one segment: delayed ACK", rcvbuf: 212992, skbs: []pkt.Packet{seg(0, 1, 0)},
			cost: list + perSkb + 8 + 150, queued: mss, pending: true},
		// The second segment makes 2 MSS unacknowledged: ACK 2896 with the
		// window of 212992 - 2 x 2304 B of truesize (90 segments).
		{name: "two segments: ACK every second", rcvbuf: 212992, skbs: []pkt.Packet{seg(0, 1, 0), seg(mss, 1, 0), seg(2*mss, 1, 0)},
			cost: list + 3*(perSkb+8) + 880 + 150, acks: []ack{{Ack: 2 * mss, Wnd: 90 * mss}}, queued: 3 * mss, pending: true},
		// A 45-segment super-skb: one tcp_v4_rcv, one ACK; truesize 45 x 2048
		// + 256 leaves 212992 - 92416 = 120576 B = 52 segments of window.
		{name: "GRO super-skb: one ACK for 45 segments", rcvbuf: 212992, skbs: []pkt.Packet{seg(0, 45, 0)},
			cost: list + perSkb + 45*8 + 880 + 150, acks: []ack{{Ack: 45 * mss, Wnd: 52 * mss}}, queued: 45 * mss},
		// Above a hole: held in the out-of-order queue and SACKed at once;
		// not yet delivered. Its truesize comes off the free space, but the
		// advertised right edge does not shrink (tcp_select_window).
		{name: "out of order: held and SACKed", rcvbuf: 212992, skbs: []pkt.Packet{seg(mss, 1, 3)},
			cost: list + perSkb + 8 + 880, acks: []ack{{Ack: 0, Wnd: fullWnd, Sack: []pkt.SackBlock{{Start: mss, End: 2 * mss}}}}},
		// rcvbuf of two segments' truesize: the third does not fit.
		{name: "receive buffer full", rcvbuf: 2 * 2304, skbs: []pkt.Packet{seg(0, 1, 0), seg(mss, 1, 0), seg(2*mss, 1, 0)},
			cost: list + 3*(perSkb+8) + 880 + 880 + 150, drops: map[pkt.Reason]uint64{pkt.Rcvbuf: 1}, queued: 2 * mss,
			// The window check uses the queue as the step began (empty, 2
			// segments of window): the second segment is ACKed with the
			// window left then (0); the dropped third gets a dup ACK.
			acks: []ack{{Ack: 2 * mss, Wnd: 0}, {Ack: 2 * mss, Wnd: 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newTCPBed(stack.TCPConfig{Rcvbuf: c.rcvbuf, MSS: mss, MaxQuickAcks: -1})
			cost := b.softirq(c.skbs...)
			b.h.Eng.Run(1) // the softirq step only: the reader wakes at its clock
			if want := sim.Time(c.cost + 0.5); *cost != want {
				t.Errorf("softirq cost %d ns, want %d", *cost, want)
			}
			if !reflect.DeepEqual(b.p.got, c.acks) {
				t.Errorf("acks %+v, want %+v", b.p.got, c.acks)
			}
			for r := pkt.Reason(0); r < pkt.NumReasons; r++ {
				if b.h.Led.Dropped[r] != c.drops[r] {
					t.Errorf("drops %s = %d, want %d", r, b.h.Led.Dropped[r], c.drops[r])
				}
			}
			if b.sk.QueuedBytes() != c.queued {
				t.Errorf("queued %d bytes, want %d", b.sk.QueuedBytes(), c.queued)
			}
			modeltest.Conservation(t, &b.h.Led, b.tcp)
		})
	}
}

// TestTCPReaderAndWindow: the reader woken by sk_data_ready copies what
// was queued by its clock (recvmsg per call + per skb + per byte), frees
// the receive space, and tcp_cleanup_rbuf sends the pending ACK.
func TestTCPReaderAndWindow(t *testing.T) {
	b := newTCPBed(stack.TCPConfig{Rcvbuf: 212992, MSS: mss, MaxQuickAcks: -1})
	b.softirq(seg(0, 1, 0))
	b.h.Run(sim.Millisecond)
	// 430 + 60 + 0.1 x 1448 = 634.8 -> 635 for the read, then the ACK
	// (1 MSS unacknowledged is not > 1 MSS, and the window did not double):
	// none. The delayed-ACK timer sends it 40 ms later (not yet).
	if got := b.h.Busy(1, "app"); got != 635 {
		t.Errorf("reader CPU %d ns, want 635", got)
	}
	if b.tcp.Stats.BytesRead != mss || b.sk.Rmem() != 0 || len(b.p.got) != 0 {
		t.Errorf("read %d rmem %d acks %+v", b.tcp.Stats.BytesRead, b.sk.Rmem(), b.p.got)
	}
	b.h.Run(stack.TCPDelackMin + 2*sim.Millisecond)
	if want := []ack{{Ack: mss, Wnd: fullWnd}}; !reflect.DeepEqual(b.p.got, want) || b.tcp.Stats.AcksDelack != 1 {
		t.Errorf("delayed ACK %+v, want %+v", b.p.got, want)
	}
	modeltest.Conservation(t, &b.h.Led, b.tcp)
}

// TestTCPRequestResponse: a 1-byte request is not ACKed alone; the server
// reads it and its response carries the ACK.
func TestTCPRequestResponse(t *testing.T) {
	b := newTCPBed(stack.TCPConfig{Rcvbuf: 212992, MSS: mss, ReqSize: 1, RespSize: 1})
	req := pkt.Packet{Flow: 0, Hash: 1, Len: 67, Payload: 1, Segs: 1, Proto: pkt.TCP, Flags: pkt.FlagACK | pkt.FlagPSH, CsumOK: true}
	b.softirq(req)
	b.h.Run(sim.Millisecond)
	if want := []ack{{Ack: 1, Data: 1}}; !reflect.DeepEqual(b.p.got, want) {
		t.Errorf("peer got %+v, want %+v", b.p.got, want)
	}
	// 430 + 60 + 0.1 (copy) + 1500 + 0.1 (response copy).
	if got := b.h.Busy(1, "app"); got != 1990 {
		t.Errorf("server CPU %d ns, want 1990", got)
	}
	if b.tcp.Stats.Responses != 1 || b.tcp.Stats.Acks() != 0 {
		t.Errorf("responses %d acks %d", b.tcp.Stats.Responses, b.tcp.Stats.Acks())
	}
	b.h.Run(100 * sim.Millisecond)
	if len(b.p.got) != 1 {
		t.Errorf("the delayed-ACK timer sent %+v after the response acknowledged everything", b.p.got[1:])
	}
	modeltest.Conservation(t, &b.h.Led, b.tcp)
}

// at is a sim.Handler that runs f when it fires.
type at func()

func (f at) Fire(sim.Time, int64) { f() }

// TestTCPBacklog: skbs that arrive while the reader is inside tcp_recvmsg
// (here: the softirq preempts it on the same CPU) go to the socket
// backlog; the softirq pays tcp_v4_rcv's own part and tcp_add_backlog, the
// reader runs tcp_v4_do_rcv for them before its next read, and nothing is
// reordered: every segment is read, none dropped out of order.
func TestTCPBacklog(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 1})
	p := &peer{}
	st := stack.New(costs, h.Funcs, h.Softnet, &h.Led, nil)
	tcp := stack.NewTCP(st, stack.TCPConfig{Rcvbuf: 1 << 20, MSS: mss, MaxQuickAcks: -1}, tcpCosts, h.Funcs, p, h.Eng)
	tcp.Listen(0, h.CPUs[0])
	var second sim.Time
	deliver := func(from, n int, cost *sim.Time) {
		skbs := make([]pkt.Packet, n)
		for i := range skbs {
			skbs[i] = seg(uint32((from+i)*mss), 1, 0)
		}
		h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
			h.Led.Offer(n)
			st.ReceiveList(w, 0, skbs)
			*cost = w.Total()
		}))
	}
	var first sim.Time
	deliver(0, 40, &first)
	// The first softirq step takes 37.5 us (40 skbs and 20 ACKs); the reader
	// then copies 40 segments for about 9 us. Two more segments arrive 3.5
	// us into that.
	h.Eng.Schedule(41*sim.Microsecond, at(func() { deliver(40, 2, &second) }), 0)
	h.Run(sim.Millisecond)
	if tcp.Stats.Backlogged != 2 {
		t.Fatalf("%d skbs backlogged, want 2 (the reader owned the socket)", tcp.Stats.Backlogged)
	}
	list := 25.0 + 15
	if want := sim.Time(list + 2*(30+55+45+50)); second != want {
		t.Errorf("second softirq step %d ns, want %d (tcp_v4_rcv's own part + tcp_add_backlog, no tcp_v4_do_rcv)", second, want)
	}
	if tcp.Stats.DupDrops != 0 || tcp.Stats.BytesRead != 42*mss {
		t.Errorf("ofo drops %d, read %d bytes, want 0 and %d", tcp.Stats.DupDrops, tcp.Stats.BytesRead, 42*mss)
	}
	// The two backlogged segments are coalesced into one skb
	// (tcp_add_backlog), so the reader runs tcp_v4_do_rcv once for both.
	if tcp.Stats.BacklogCoalesced != 1 {
		t.Errorf("%d skbs coalesced in the backlog, want 1", tcp.Stats.BacklogCoalesced)
	}
	if got, want := h.Acct.ByFunc[0][h.Funcs.ID("tcp_v4_do_rcv")], sim.Time(40*(355+8)+355+2*8); got != want {
		t.Errorf("tcp_v4_do_rcv charged %d ns, want %d (40 skbs in softirq, one coalesced skb of 2 by the reader)", got, want)
	}
	modeltest.Conservation(t, &h.Led, tcp)
}

// TestTCPQuickAck: the first data puts the socket in quick-ACK mode
// (tcp_incr_quickack: min(window / 2 MSS, TCP_MAX_QUICKACKS) = 16 here), so
// the first 16 segments are each ACKed at once; then an ACK every second
// segment. An out-of-order segment re-enters quick-ACK mode. A
// request/response socket (pingpong) never quick-ACKs.
func TestTCPQuickAck(t *testing.T) {
	b := newTCPBed(stack.TCPConfig{Rcvbuf: 1 << 20, MSS: mss})
	var skbs []pkt.Packet
	for i := 0; i < 40; i++ {
		skbs = append(skbs, seg(uint32(i*mss), 1, 0))
	}
	b.softirq(skbs...)
	b.h.Eng.Run(1)
	// 16 quick ACKs, then every second of the remaining 24 segments.
	if got, q := b.tcp.Stats.AcksSoftirq, b.tcp.Stats.QuickAcks; q != 16 || got != 16+12 {
		t.Errorf("%d ACKs, %d quick, want 28 and 16", got, q)
	}
	// Out of order (after the reader has read and let the socket go, so
	// that the segments are processed in softirq, not from the socket
	// backlog): segment 41 is held and SACKed at once and re-enters
	// quick-ACK mode; 40 fills the hole, 41 moves to the receive queue and
	// the ACK goes at once; 41 again is a duplicate, dropped with a dup
	// ACK; 42 is quick-ACKed.
	b.h.Eng.Run(sim.Millisecond)
	b.softirq(seg(41*mss, 1, 1))
	b.softirq(seg(40*mss, 1, 0), seg(41*mss, 1, 0), seg(42*mss, 1, 0))
	b.h.Eng.Run(2 * sim.Millisecond)
	st := b.tcp.Stats
	if st.QuickAcks != 16+1 || st.OfoQueued != 1 || st.DupDrops != 1 || st.DupAcks != 2 || st.BytesRead != 43*mss {
		t.Errorf("after the hole: %d quick ACKs, %d held out of order, %d duplicates dropped, %d dup ACKs, %d bytes read; want 17, 1, 1, 2, %d",
			st.QuickAcks, st.OfoQueued, st.DupDrops, st.DupAcks, st.BytesRead, 43*mss)
	}
	modeltest.Conservation(t, &b.h.Led, b.tcp)

	rr := newTCPBed(stack.TCPConfig{Rcvbuf: 1 << 20, MSS: mss, ReqSize: 1 << 20, RespSize: 1})
	rr.softirq(seg(0, 1, 0))
	rr.h.Eng.Run(1)
	if rr.tcp.Stats.QuickAcks != 0 {
		t.Errorf("request/response socket sent %d quick ACKs, want none (pingpong)", rr.tcp.Stats.QuickAcks)
	}
}

// TestTCPRcvCoalesce: tcp_try_coalesce merges an in-order skb into the
// receive queue's tail while the tail holds at most MAX_SKB_FRAGS + 1
// segments: 40 one-segment skbs queued in one softirq step become skbs of
// 18, 18 and 4 segments (37 merges). A merged skb charges only its buffers
// to sk_rmem_alloc (its own head is freed). Super-skbs merge while they fit
// in 18 segments. The reader frees one skb per queued skb, with the
// buffers of all the segments it carries.
func TestTCPRcvCoalesce(t *testing.T) {
	for _, c := range []struct {
		name            string
		segs            []int // segments of each skb, in order
		merges, skbsOut int
	}{
		{"40 single segments", repeat(1, 40), 37, 3},
		{"super-skbs of 8", []int{8, 8, 8}, 1, 2},
		{"super-skbs of 10", []int{10, 10}, 0, 2},
		{"a super-skb of 20 and a segment", []int{20, 1}, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := costs
			sc.FreeSkb, sc.FreeSeg = 100, 20
			h := modeltest.New(modeltest.Config{CPUs: 2})
			b := &tcpBed{h: h, p: &peer{}}
			b.st = stack.New(sc, h.Funcs, h.Softnet, &h.Led, nil)
			b.tcp = stack.NewTCP(b.st, stack.TCPConfig{Rcvbuf: 1 << 20, MSS: mss}, tcpCosts, h.Funcs, b.p, h.Eng)
			b.sk = b.tcp.Listen(0, h.CPUs[1])
			var skbs []pkt.Packet
			seq, total := uint32(0), 0
			for _, n := range c.segs {
				skbs = append(skbs, seg(seq, n, 0))
				seq += uint32(n * mss)
				total += n
			}
			b.softirq(skbs...)
			h.Eng.Run(1) // the softirq step has run; the woken reader has not
			if got := int(b.tcp.Stats.RcvCoalesced); got != c.merges {
				t.Errorf("%d merges, want %d", got, c.merges)
			}
			if got, want := b.sk.Rmem(), total*2048+c.skbsOut*256; got != want {
				t.Errorf("sk_rmem_alloc %d, want %d (%d buffers, %d skb shells)", got, want, total, c.skbsOut)
			}
			h.Eng.Run(sim.Millisecond)
			if b.tcp.Stats.BytesRead != uint64(total*mss) || b.sk.Rmem() != 0 {
				t.Errorf("read %d of %d bytes, rmem %d left", b.tcp.Stats.BytesRead, total*mss, b.sk.Rmem())
			}
			if got, want := fnTime(h, 1, "skb_release_data"), sim.Time(100*c.skbsOut+20*total); got != want {
				t.Errorf("reader's frees %v, want %v (%d skbs, %d segment buffers)", got, want, c.skbsOut, total)
			}
			modeltest.Conservation(t, &h.Led, b.tcp)
		})
	}
}

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// fnTime is the CPU time cpu spent in function name.
func fnTime(h *modeltest.Harness, cpu int, name string) sim.Time {
	id := h.Funcs.ID(name)
	if f := h.Acct.ByFunc[cpu]; int(id) < len(f) {
		return f[id]
	}
	return 0
}

// TestTCPChecksum: an skb without checksum status (a cpumap-built skb that
// did not pass GRO) is checksummed once over its L4 length, in tcp_v4_rcv's
// path on the CPU that runs it, whether it is processed at once or put on
// the socket backlog; an skb the NIC (or GRO) validated is not.
func TestTCPChecksum(t *testing.T) {
	const l4 = mss + 66 - 14 - 20 // TCP header with timestamps + payload
	for _, c := range []struct {
		name    string
		csumOK  bool
		owned   bool // the reader owns the socket: the skbs are backlogged
		wantSum int  // skbs summed
	}{
		{"validated by the NIC", true, false, 0},
		{"no checksum status", false, false, 3},
		{"no checksum status, backlogged", false, true, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := costs
			sc.CsumByte = 0.1
			h := modeltest.New(modeltest.Config{CPUs: 2})
			b := &tcpBed{h: h, p: &peer{}}
			b.st = stack.New(sc, h.Funcs, h.Softnet, &h.Led, nil)
			b.tcp = stack.NewTCP(b.st, stack.TCPConfig{Rcvbuf: 1 << 20, MSS: mss}, tcpCosts, h.Funcs, b.p, h.Eng)
			b.sk = b.tcp.Listen(0, h.CPUs[1])
			mk := func(from int) []pkt.Packet {
				var skbs []pkt.Packet
				for i := from; i < from+3; i++ {
					p := seg(uint32(i*mss), 1, 0)
					p.CsumOK = c.csumOK
					skbs = append(skbs, p)
				}
				return skbs
			}
			if c.owned {
				// The first skbs wake the reader; the next arrive while it
				// copies them (it owns the socket).
				b.softirq(mk(0)...)
				h.Eng.Run(1)
				b.tcp.Stats.CsumSkbs = 0
				h.Acct.ByFunc[0][h.Funcs.ID("__skb_checksum_complete")] = 0
				h.Eng.Schedule(h.Eng.Now()+3*sim.Microsecond, at(func() { b.softirq(mk(3)...) }), 0)
			} else {
				b.softirq(mk(0)...)
			}
			h.Run(sim.Millisecond)
			if c.owned && b.tcp.Stats.Backlogged == 0 {
				t.Fatalf("no skb backlogged; the test wants the reader to own the socket")
			}
			if got := int(b.tcp.Stats.CsumSkbs); got != c.wantSum {
				t.Errorf("%d skbs checksummed, want %d", got, c.wantSum)
			}
			perSkb := 0.1 * float64(l4)
			want := sim.Time(c.wantSum) * sim.Time(perSkb+0.5)
			if got := fnTime(h, 0, "__skb_checksum_complete"); got != want {
				t.Errorf("softirq CPU spent %v in __skb_checksum_complete, want %v (%d x 0.1 ns x %d bytes)", got, want, c.wantSum, l4)
			}
			if got := fnTime(h, 1, "__skb_checksum_complete"); got != 0 {
				t.Errorf("the reader spent %v in __skb_checksum_complete, want 0 (checksummed once, before the backlog)", got)
			}
			modeltest.Conservation(t, &h.Led, b.tcp)
		})
	}
}

// TestTCPWokenWake: sk_wait_data's wait entry stays queued until the
// reader runs, so every sk_data_ready between the wake-up and the reader's
// run pays sock_def_readable_woken. With the reader on the softirq's CPU it
// cannot run before the softirq ends: the first of a list of 10 skbs wakes
// it and the other 9 pay. A reader on another CPU that has run and slept
// again before each skb pays nothing beyond the wake-ups.
func TestTCPWokenWake(t *testing.T) {
	tc := tcpCosts
	tc.WakeQueued = 40
	for _, c := range []struct {
		name        string
		readerCPU   int
		lists, size int
		wantQueued  uint64
		wantWakeups uint64
	}{
		{"reader on the softirq's CPU", 0, 1, 10, 9, 1},
		{"reader on another CPU, one skb at a time", 1, 5, 1, 0, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := modeltest.New(modeltest.Config{CPUs: 2})
			st := stack.New(costs, h.Funcs, h.Softnet, &h.Led, nil)
			tcp := stack.NewTCP(st, stack.TCPConfig{Rcvbuf: 1 << 20, MSS: mss, MaxQuickAcks: -1}, tc, h.Funcs, &peer{}, h.Eng)
			tcp.Listen(0, h.CPUs[c.readerCPU])
			for l := 0; l < c.lists; l++ {
				skbs := make([]pkt.Packet, c.size)
				for i := range skbs {
					skbs[i] = seg(uint32((l*c.size+i)*mss), 1, 0)
				}
				h.Eng.Schedule(sim.Time(l)*100*sim.Microsecond, at(func() {
					h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
						h.Led.Offer(len(skbs))
						st.ReceiveList(w, 0, skbs)
					}))
				}), 0)
			}
			h.Run(sim.Millisecond)
			if tcp.Stats.WakeQueued != c.wantQueued || tcp.Stats.Wakeups != c.wantWakeups {
				t.Errorf("woken-reader calls %d, wake-ups %d; want %d and %d", tcp.Stats.WakeQueued, tcp.Stats.Wakeups, c.wantQueued, c.wantWakeups)
			}
			if got, want := h.Acct.FuncTime(0, h.Funcs.ID("sock_def_readable_woken")), sim.Time(40*c.wantQueued); got != want {
				t.Errorf("sock_def_readable_woken charged %d ns, want %d", got, want)
			}
			if n := uint64(c.lists * c.size * mss); tcp.Stats.BytesRead != n {
				t.Errorf("read %d bytes, want %d", tcp.Stats.BytesRead, n)
			}
			modeltest.Conservation(t, &h.Led, tcp)
		})
	}
}
