package gro

import (
	"reflect"
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

const (
	mss    = 1448
	hdrLen = 14 + 20 + 32 // Ethernet + IPv4 + TCP with timestamps
)

// recorder is a Deliverer that keeps every list and feeds a ledger.
type recorder struct {
	lists [][]pkt.Packet
	led   *pkt.Ledger
}

func (r *recorder) DeliverList(w *sim.Work, skbs []pkt.Packet) {
	r.lists = append(r.lists, append([]pkt.Packet(nil), skbs...))
	for i := range skbs {
		r.led.Deliver(pkt.ToStack, skbs[i].WireSegs())
	}
}

// segs returns the Segs of every skb of every list.
func (r *recorder) segs() [][]int32 {
	var out [][]int32
	for _, l := range r.lists {
		s := make([]int32, len(l))
		for i := range l {
			s[i] = int32(l[i].WireSegs())
		}
		out = append(out, s)
	}
	return out
}

// tcp builds one wire segment of flow f (hash h) at sequence seq.
func tcp(f, h, seq uint32, payload int32, flags uint8) pkt.Packet {
	return pkt.Packet{
		Flow: f, Hash: h, Seq: seq, Ack: 1000, Payload: payload,
		Len: payload + hdrLen, Segs: 1, Proto: pkt.TCP,
		Flags: pkt.FlagACK | flags, CsumOK: true,
	}
}

// stream returns n full-MSS segments of flow f starting at seq 0; flags[i]
// adds flags to segment i.
func stream(f, h uint32, n int, flags map[int]uint8) []pkt.Packet {
	out := make([]pkt.Packet, n)
	for i := range out {
		out[i] = tcp(f, h, uint32(i*mss), mss, flags[i])
	}
	return out
}

func cat(ps ...[]pkt.Packet) []pkt.Packet {
	var out []pkt.Packet
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

func repeat(r Result, n int) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func ones(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

type harness struct {
	e   *Engine
	rec *recorder
	led *pkt.Ledger
	w   *sim.Work
}

func newHarness(cfg Config, costs Costs) *harness {
	led := &pkt.Ledger{}
	rec := &recorder{led: led}
	return &harness{e: New(cfg, costs, sim.NewFuncs(), rec), rec: rec, led: led, w: &sim.Work{}}
}

func (h *harness) receive(p pkt.Packet) Result {
	h.led.Offer(p.WireSegs())
	return h.e.Receive(h.w, p)
}

func (h *harness) checkConservation(t *testing.T) {
	t.Helper()
	if d := h.led.Check(h.e.Queued()); d != 0 {
		t.Fatalf("conservation: offered %d, delivered %d, queued %d (imbalance %d)",
			h.led.Offered, h.led.DeliveredTotal(), h.e.Queued(), d)
	}
	s := h.e.Stats()
	if s.SegsIn != h.led.Offered || s.SegsDelivered != h.led.DeliveredTotal() {
		t.Fatalf("stats: in %d delivered %d, ledger %d %d", s.SegsIn, s.SegsDelivered,
			h.led.Offered, h.led.DeliveredTotal())
	}
}

func TestReceive(t *testing.T) {
	on := DefaultConfig()
	off := DefaultConfig()
	off.GRO = false
	batch := func(n int, gro bool) Config {
		c := DefaultConfig()
		c.NormalBatch, c.GRO = n, gro
		return c
	}
	udp := func(n int) []pkt.Packet {
		out := make([]pkt.Packet, n)
		for i := range out {
			out[i] = pkt.Packet{Flow: 9, Hash: 9, Len: 60, Payload: 18, Segs: 1, Proto: pkt.UDP, CsumOK: true}
		}
		return out
	}
	// 45 segments: skb_gro_receive's results, 17 frags per skb of the chain.
	maxRes := append([]Result{GROHeld}, repeat(GROMergedFree, 17)...)
	maxRes = append(maxRes, GROMerged)
	maxRes = append(maxRes, repeat(GROMergedFree, 17)...)
	maxRes = append(maxRes, GROMerged)
	maxRes = append(maxRes, repeat(GROMergedFree, 8)...)
	psh := func(f, h uint32, n int) []pkt.Packet { return stream(f, h, n, map[int]uint8{n - 1: pkt.FlagPSH}) }

	cases := []struct {
		name    string
		cfg     Config
		in      []pkt.Packet
		results []Result // nil: not checked
		flush   bool     // FlushAll(ReasonComplete) + NormalList at the end
		flushes map[string]uint64
		lists   [][]int32
		queued  int // after the sequence (and the flush)
	}{
		{
			name: "merge contiguous full-MSS", cfg: on, in: stream(1, 1, 4, nil),
			results: []Result{GROHeld, GROMergedFree, GROMergedFree, GROMergedFree},
			flush:   true, flushes: map[string]uint64{"complete": 1}, lists: [][]int32{{4}},
		},
		{
			name: "held until poll end", cfg: on, in: stream(1, 1, 4, nil),
			flushes: map[string]uint64{}, queued: 4,
		},
		{
			name: "PSH ends and is part of the super-packet", cfg: on,
			in: cat(stream(1, 1, 4, map[int]uint8{3: pkt.FlagPSH}),
				[]pkt.Packet{tcp(1, 1, 4*mss, mss, 0), tcp(1, 1, 5*mss, mss, 0)}),
			results: []Result{GROHeld, GROMergedFree, GROMergedFree, GROMergedFree, GROHeld, GROMergedFree},
			flush:   true, flushes: map[string]uint64{"psh": 1, "complete": 1}, lists: [][]int32{{4, 2}},
		},
		{
			name: "FIN", cfg: on, in: stream(1, 1, 3, map[int]uint8{2: pkt.FlagFIN}),
			results: []Result{GROHeld, GROMergedFree, GROMergedFree},
			flush:   true, flushes: map[string]uint64{"fin": 1}, lists: [][]int32{{3}},
		},
		{
			name: "short segment ends the super-packet", cfg: on,
			in:      cat(stream(1, 1, 2, nil), []pkt.Packet{tcp(1, 1, 2*mss, 500, 0), tcp(1, 1, 2*mss+500, mss, 0)}),
			results: []Result{GROHeld, GROMergedFree, GROMergedFree, GROHeld},
			flush:   true, flushes: map[string]uint64{"short": 1, "complete": 1}, lists: [][]int32{{3, 1}},
		},
		{
			name: "sequence gap", cfg: on,
			in:      cat(stream(1, 1, 2, nil), []pkt.Packet{tcp(1, 1, 3*mss, mss, 0)}),
			results: []Result{GROHeld, GROMergedFree, GROHeld},
			flush:   true, flushes: map[string]uint64{"mismatch": 1, "complete": 1}, lists: [][]int32{{2, 1}},
		},
		{
			name: "ACK number changes", cfg: on,
			in: func() []pkt.Packet {
				s := stream(1, 1, 3, nil)
				s[2].Ack++
				return s
			}(),
			results: []Result{GROHeld, GROMergedFree, GROHeld},
			flush:   true, flushes: map[string]uint64{"mismatch": 1, "complete": 1}, lists: [][]int32{{2, 1}},
		},
		{
			name: "CWR never merges, later segments merge into it", cfg: on,
			in:      stream(1, 1, 4, map[int]uint8{2: pkt.FlagCWR}),
			results: []Result{GROHeld, GROMergedFree, GROHeld, GROMergedFree},
			flush:   true, flushes: map[string]uint64{"mismatch": 1, "complete": 1}, lists: [][]int32{{2, 2}},
		},
		{
			name: "URG flags mismatch: held flushed, URG segment normal", cfg: on,
			in:      stream(1, 1, 3, map[int]uint8{2: pkt.FlagURG}),
			results: []Result{GROHeld, GROMergedFree, GRONormal},
			flush:   true, flushes: map[string]uint64{"mismatch": 1}, lists: [][]int32{{2, 1}},
		},
		{
			name: "RST flags mismatch", cfg: on,
			in:      stream(1, 1, 2, map[int]uint8{1: pkt.FlagRST}),
			results: []Result{GROHeld, GRONormal},
			flush:   true, flushes: map[string]uint64{"mismatch": 1}, lists: [][]int32{{1, 1}},
		},
		{
			name: "segment longer than held gso_size", cfg: on,
			in:      []pkt.Packet{tcp(1, 1, 0, 1000, 0), tcp(1, 1, 1000, mss, 0)},
			results: []Result{GROHeld, GROHeld},
			flush:   true, flushes: map[string]uint64{"mismatch": 1, "complete": 1}, lists: [][]int32{{1, 1}},
		},
		{
			name: "pure ACK: held flushed, ACK normal", cfg: on,
			in:      cat(stream(1, 1, 2, nil), []pkt.Packet{tcp(1, 1, 2*mss, 0, 0)}),
			results: []Result{GROHeld, GROMergedFree, GRONormal},
			flush:   true, flushes: map[string]uint64{"mismatch": 1}, lists: [][]int32{{2, 1}},
		},
		{
			name: "lone PSH segment is not held", cfg: on,
			in:      []pkt.Packet{tcp(1, 1, 0, 1, pkt.FlagPSH)},
			results: []Result{GRONormal},
			flush:   true, flushes: map[string]uint64{}, lists: [][]int32{{1}},
		},
		{
			name: "lone short segment without PSH is held", cfg: on,
			in:      []pkt.Packet{tcp(1, 1, 0, 1, 0)},
			results: []Result{GROHeld}, flushes: map[string]uint64{}, queued: 1,
		},
		{
			name: "gro_max_size 65536 at MSS 1448: 45 segments", cfg: on, in: stream(1, 1, 46, nil),
			results: append(append([]Result(nil), maxRes...), GROHeld),
			flushes: map[string]uint64{"max_size": 1}, lists: [][]int32{{45}}, queued: 1,
		},
		{
			name: "a 45-segment super-skb alone reaches gro_normal_batch", cfg: on, in: psh(1, 1, 45),
			results: maxRes, flushes: map[string]uint64{"psh": 1}, lists: [][]int32{{45}},
		},
		{
			name: "9 flows in bucket 0 (Hash 0): the oldest is flushed", cfg: on,
			in: func() []pkt.Packet {
				var s []pkt.Packet
				for f := uint32(0); f < 9; f++ {
					s = append(s, tcp(f, 0, 0, mss, 0))
				}
				return s
			}(),
			results: repeat(GROHeld, 9), flushes: map[string]uint64{"overflow": 1}, queued: 9,
		},
		{
			name: "interleaved flows sharing bucket 0 (cpumap skbs, Hash 0) merge separately", cfg: on,
			in: func() []pkt.Packet {
				a, b := stream(1, 0, 4, nil), stream(2, 0, 4, nil)
				var s []pkt.Packet
				for i := range a {
					s = append(s, a[i], b[i])
				}
				return s
			}(),
			results: append([]Result{GROHeld, GROHeld}, repeat(GROMergedFree, 6)...),
			flush:   true, flushes: map[string]uint64{"complete": 2}, lists: [][]int32{{4, 4}},
		},
		{
			name: "16 flows over 8 buckets (2 each) do not overflow", cfg: on,
			in: func() []pkt.Packet {
				var s []pkt.Packet
				for f := uint32(0); f < 16; f++ {
					s = append(s, tcp(f, f, 0, mss, 0))
				}
				return s
			}(),
			results: repeat(GROHeld, 16), flush: true,
			flushes: map[string]uint64{"complete": 16}, lists: [][]int32{ones(8), ones(8)},
		},
		{
			name: "UDP goes to the normal list", cfg: on, in: udp(3),
			results: repeat(GRONormal, 3), flush: true, flushes: map[string]uint64{}, lists: [][]int32{ones(3)},
		},
		{
			name: "GRO off: everything GRO_NORMAL", cfg: off, in: stream(1, 1, 4, nil),
			results: repeat(GRONormal, 4), flushes: map[string]uint64{}, queued: 4,
		},
		{
			name: "batch 8: 8 single-segment skbs make one delivery", cfg: off, in: stream(1, 1, 10, nil),
			flushes: map[string]uint64{}, lists: [][]int32{ones(8)}, queued: 2,
		},
		{
			name: "batch 8: poll end delivers the rest", cfg: off, in: stream(1, 1, 10, nil), flush: true,
			flushes: map[string]uint64{}, lists: [][]int32{ones(8), ones(2)},
		},
		{
			name: "batch 0 delivers each skb alone", cfg: batch(0, false), in: stream(1, 1, 3, nil),
			flushes: map[string]uint64{}, lists: [][]int32{{1}, {1}, {1}},
		},
		{
			name: "batch 1 delivers each skb alone", cfg: batch(1, true), in: udp(3),
			flushes: map[string]uint64{}, lists: [][]int32{{1}, {1}, {1}},
		},
		{
			name: "batch 16 single-segment skbs", cfg: batch(16, false), in: stream(1, 1, 20, nil),
			flushes: map[string]uint64{}, lists: [][]int32{ones(16)}, queued: 4,
		},
		{
			name: "batch 16 counts segments of super-skbs", cfg: batch(16, true),
			in:      cat(psh(1, 1, 6), psh(2, 2, 6), psh(3, 3, 6)),
			flushes: map[string]uint64{"psh": 3}, lists: [][]int32{{6, 6, 6}},
		},
		{
			name: "GRO_NORMAL skbs count 1, super-skbs count segs", cfg: on,
			in:      cat(udp(3), psh(1, 1, 5)),
			flushes: map[string]uint64{"psh": 1}, lists: [][]int32{{1, 1, 1, 5}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.cfg, Costs{})
			var got []Result
			for _, p := range tc.in {
				got = append(got, h.receive(p))
				h.checkConservation(t)
			}
			if tc.results != nil && !reflect.DeepEqual(got, tc.results) {
				t.Errorf("results\n got %v\nwant %v", got, tc.results)
			}
			if tc.flush {
				h.e.FlushAll(h.w, ReasonComplete)
				h.e.NormalList(h.w)
			}
			h.checkConservation(t)
			s := h.e.Stats()
			if fl := s.FlushesByName(); !reflect.DeepEqual(fl, tc.flushes) {
				t.Errorf("flushes %v, want %v", fl, tc.flushes)
			}
			if l := h.rec.segs(); !reflect.DeepEqual(l, tc.lists) {
				t.Errorf("lists\n got %v\nwant %v", l, tc.lists)
			}
			if q := h.e.Queued(); q != tc.queued {
				t.Errorf("queued %d, want %d", q, tc.queued)
			}
		})
	}
}

func TestSuperPacket(t *testing.T) {
	h := newHarness(DefaultConfig(), Costs{})
	in := stream(7, 3, 5, map[int]uint8{4: pkt.FlagPSH})
	for i := range in {
		in[i].Seq += 5000
		in[i].Arrival = sim.Time(100 * (i + 1))
		in[i].Txn = 42
		h.receive(in[i])
	}
	h.e.NormalList(h.w)
	if len(h.rec.lists) != 1 || len(h.rec.lists[0]) != 1 {
		t.Fatalf("lists %v", h.rec.segs())
	}
	got := h.rec.lists[0][0]
	want := in[0]
	want.Segs, want.Len, want.Payload = 5, 5*(mss+hdrLen), 5*mss
	want.Flags |= pkt.FlagPSH
	if got != want {
		t.Fatalf("super-packet\n got %+v\nwant %+v", got, want)
	}
	s := h.e.Stats()
	if s.MergedPerSuperSkb() != 5 || s.SegsPerSkb() != 5 {
		t.Fatalf("averages %v %v", s.MergedPerSuperSkb(), s.SegsPerSkb())
	}
	h.checkConservation(t)
}

func TestOverflowFlushesOldest(t *testing.T) {
	h := newHarness(DefaultConfig(), Costs{})
	for f := uint32(0); f < 9; f++ {
		h.receive(tcp(f, 0, 0, mss, 0))
	}
	// Flow 0 merged meanwhile would still be the oldest by hold time.
	h.e.NormalList(h.w)
	if l := h.rec.lists; len(l) != 1 || len(l[0]) != 1 || l[0][0].Flow != 0 {
		t.Fatalf("overflow delivered %+v, want flow 0", l)
	}
	// A tenth flow evicts flow 1; flows 2..9 stay and merge.
	h.receive(tcp(9, 0, 0, mss, 0))
	h.e.NormalList(h.w)
	if f := h.rec.lists[1][0].Flow; f != 1 {
		t.Fatalf("second eviction flow %d, want 1", f)
	}
	if r := h.receive(tcp(5, 0, mss, mss, 0)); r != GROMergedFree {
		t.Fatalf("flow 5 after evictions: %v", r)
	}
	// gro_flush order: oldest first (rx_count reaches 8 after flow 8, as
	// flow 5 counts 2 segments, so flow 9 is a second list).
	h.e.FlushAll(h.w, ReasonComplete)
	h.e.NormalList(h.w)
	var flows []uint32
	for _, l := range h.rec.lists[2:] {
		for _, p := range l {
			flows = append(flows, p.Flow)
		}
	}
	if want := []uint32{2, 3, 4, 5, 6, 7, 8, 9}; !reflect.DeepEqual(flows, want) {
		t.Fatalf("flush order %v, want %v", flows, want)
	}
	if s := h.e.Stats(); s.Flushes[ReasonOverflow] != 2 || s.Flushes[ReasonComplete] != 8 {
		t.Fatalf("flushes %v", s.FlushesByName())
	}
	h.checkConservation(t)
}

func TestFlushOld(t *testing.T) {
	const jiffy = sim.Millisecond // HZ=1000
	funcs := sim.NewFuncs()
	clock := funcs.ID("clock")
	led := &pkt.Ledger{}
	rec := &recorder{led: led}
	e := New(DefaultConfig(), Costs{}, funcs, rec)
	w := &sim.Work{}
	at := func(t sim.Time) { w.Add(clock, t-w.Now()) }
	rx := func(p pkt.Packet) { led.Offer(1); e.Receive(w, p) }

	at(500 * sim.Microsecond) // jiffy 0
	rx(tcp(1, 1, 0, mss, 0))  // A, bucket 1
	rx(tcp(2, 0, 0, mss, 0))  // B, bucket 0
	at(sim.Millisecond)       // jiffy 1 starts
	rx(tcp(3, 0, 0, mss, 0))  // C, bucket 0, after B
	rx(tcp(1, 1, mss, mss, 0))
	at(1999 * sim.Microsecond)
	e.FlushOld(w, w.Now(), jiffy, ReasonOld)
	e.NormalList(w)
	var flows []uint32
	for _, p := range rec.lists[0] {
		flows = append(flows, p.Flow)
	}
	// A (held in jiffy 0 with a merge in jiffy 1: age is the hold time)
	// and B go; C, held in the current jiffy, stays.
	if want := []uint32{2, 1}; !reflect.DeepEqual(flows, want) {
		t.Fatalf("old flush %v, want %v (bucket order)", flows, want)
	}
	if rec.lists[0][1].Segs != 2 || e.HeldSkbs() != 1 || e.Queued() != 1 {
		t.Fatalf("after old flush: held %d queued %d", e.HeldSkbs(), e.Queued())
	}
	// Still jiffy 1: nothing more.
	e.FlushOld(w, w.Now(), jiffy, ReasonOld)
	if e.HeldSkbs() != 1 {
		t.Fatalf("C flushed in its own jiffy")
	}
	at(2 * sim.Millisecond)
	e.FlushOld(w, w.Now(), jiffy, ReasonCpumap64)
	e.NormalList(w)
	if e.HeldSkbs() != 0 || len(rec.lists) != 2 || rec.lists[1][0].Flow != 3 {
		t.Fatalf("C not flushed at the next jiffy")
	}
	if s := e.Stats(); s.Flushes[ReasonOld] != 2 || s.Flushes[ReasonCpumap64] != 1 {
		t.Fatalf("flushes %v", s.FlushesByName())
	}
	if d := led.Check(e.Queued()); d != 0 {
		t.Fatalf("conservation %d", d)
	}
}

func TestCosts(t *testing.T) {
	costs := Costs{Attempt: 26, MergePerSeg: 10, HoldNew: 5, Flush: 40, CsumPerByte: 0.5}
	noCsum := func(p pkt.Packet) pkt.Packet { p.CsumOK = false; return p }
	udp := pkt.Packet{Flow: 2, Hash: 2, Len: 1514, Payload: 1472, Segs: 1, Proto: pkt.UDP}
	cases := []struct {
		name string
		cfg  Config
		in   []pkt.Packet
		want sim.Time
	}{
		// 3 x Attempt + HoldNew + 2 x Merge + one napi_gro_complete.
		{"three merged segments", DefaultConfig(), stream(1, 1, 3, nil), 3*26 + 5 + 2*10 + 40},
		// A single-segment held skb: no gro_complete callbacks.
		{"single held", DefaultConfig(), stream(1, 1, 1, nil), 26 + 5},
		// UDP: the attempt, plus checksum of 1514-34 = 1480 L4 bytes.
		{"udp no csum", DefaultConfig(), []pkt.Packet{udp}, 26 + 740},
		{"tcp no csum", DefaultConfig(), []pkt.Packet{noCsum(tcp(1, 1, 0, mss, 0)), noCsum(tcp(1, 1, mss, mss, 0))},
			2*26 + 5 + 10 + 40 + 2*sim.Time((mss+hdrLen-34)/2)},
		{"GRO off costs nothing", Config{NormalBatch: 8}, cat(stream(1, 1, 3, nil), []pkt.Packet{udp}), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.cfg, costs)
			for _, p := range tc.in {
				h.receive(p)
			}
			h.e.FlushAll(h.w, ReasonComplete)
			h.e.NormalList(h.w)
			if got := h.w.Total(); got != tc.want {
				t.Fatalf("w.Total() = %d, want %d", got, tc.want)
			}
			for _, l := range h.rec.lists {
				for _, p := range l {
					if tc.cfg.GRO && !p.CsumOK {
						t.Fatalf("checksum validated by GRO but CsumOK false")
					}
				}
			}
			h.checkConservation(t)
		})
	}
}

type nopDeliverer struct{ segs int }

func (d *nopDeliverer) DeliverList(w *sim.Work, skbs []pkt.Packet) {
	for i := range skbs {
		d.segs += skbs[i].WireSegs()
	}
}

// feed4 drives 4 interleaved TCP streams through Receive with a NAPI-like
// poll end every 64 segments.
func feed4(e *Engine, w *sim.Work, seq *[4]uint32, n int) {
	p := pkt.Packet{Ack: 1, Len: mss + hdrLen, Payload: mss, Segs: 1, Proto: pkt.TCP,
		Flags: pkt.FlagACK, CsumOK: true}
	for i := 0; i < n; i++ {
		f := uint32(i & 3)
		p.Flow, p.Hash, p.Seq = f, 0x9e3779b9*(f+1), seq[f]
		e.Receive(w, p)
		seq[f] += mss
		if i&63 == 63 {
			e.FlushAll(w, ReasonComplete)
			e.NormalList(w)
		}
	}
}

func TestNoAllocSteadyState(t *testing.T) {
	d := &nopDeliverer{}
	e := New(DefaultConfig(), Costs{Attempt: 26, MergePerSeg: 10}, sim.NewFuncs(), d)
	w := &sim.Work{}
	var seq [4]uint32
	feed4(e, w, &seq, 1024)
	if a := testing.AllocsPerRun(20, func() { feed4(e, w, &seq, 1024) }); a != 0 {
		t.Fatalf("%v allocations per 1024 segments", a)
	}
}

func TestNames(t *testing.T) {
	for r := FlushReason(0); r < NumReasons; r++ {
		if r.String() == "" || r.String() == "unknown" {
			t.Fatalf("reason %d has no name", r)
		}
	}
	if NumReasons.String() != "unknown" || GRONormal.String() != "normal" {
		t.Fatal("names")
	}
}

func BenchmarkReceive4Streams(b *testing.B) {
	d := &nopDeliverer{}
	e := New(DefaultConfig(), Costs{Attempt: 26, MergePerSeg: 10, HoldNew: 5, Flush: 40}, sim.NewFuncs(), d)
	w := &sim.Work{}
	var seq [4]uint32
	const chunk = 4096
	b.ResetTimer()
	for b.Loop() {
		feed4(e, w, &seq, chunk)
	}
	b.ReportMetric(float64(b.N)*chunk/b.Elapsed().Seconds(), "segs/s")
}
