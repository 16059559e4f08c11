package stack_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/nic"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/sim"
)

// The bdw-e5-1650v4 stack costs (ns).
var costs = stack.Costs{
	BuildSkb: 75, RecvCall: 25, RecvPkt: 30, IPCall: 15, IPPkt: 55, UDPRcv: 35, UDPEnqueue: 40, UDPNoPort: 20,
	Wake: 150, RecvmsgCall: 150, RecvmsgPkt: 280, RecvmsgByte: 0.1,
}

type irq func(w *sim.Work)

func (f irq) Run(now sim.Time, w *sim.Work) { f(w) }
func (f irq) Done(now sim.Time) bool        { return false }

// Per-packet delivery pays the per-call parts of netif_receive_skb and
// ip_rcv for every packet; a list of n pays them once.
func TestSingleVsListCost(t *testing.T) {
	noPort := 30.0 + 55 + 35 + 20 // per-skb parts to UdpNoPorts
	for _, tc := range []struct {
		name string
		n    int
		list bool
		want sim.Time
	}{
		{"single x1", 1, false, 25 + 15 + 140},
		{"single x8", 8, false, 8 * (25 + 15 + 140)},
		{"list of 1", 1, true, 25 + 15 + 140},
		{"list of 8", 8, true, 25 + 15 + 8*140},
		{"list of 64", 64, true, 25 + 15 + 64*140},
	} {
		var led pkt.Ledger
		st := stack.New(costs, sim.NewFuncs(), nil, &led, nil)
		u := stack.NewUDP(st, sim.NewFuncs())
		got := deliver(st, &led, modeltest.Constant(tc.n, 0, 0, 60, 1), tc.list)
		if got != tc.want {
			t.Errorf("%s: %d ns, want %d (%.1f ns/pkt; per-skb part %.0f)", tc.name, got, tc.want, float64(got)/float64(tc.n), noPort)
		}
		if int(u.Stats.NoPorts) != tc.n || int(led.Dropped[pkt.UDPNoPorts]) != tc.n {
			t.Errorf("%s: NoPorts %d, ledger %d, want %d", tc.name, u.Stats.NoPorts, led.Dropped[pkt.UDPNoPorts], tc.n)
		}
		modeltest.Conservation(t, &led)
	}
}

// deliver offers skbs to led and hands them to st on CPU 0 in one step, as
// one netif_receive_skb_list (list) or a netif_receive_skb each, and
// returns the step's cost.
func deliver(st *stack.Stack, led *pkt.Ledger, skbs []pkt.Packet, list bool) sim.Time {
	var w sim.Work
	led.Offer(len(skbs))
	if list {
		st.ReceiveList(&w, 0, skbs)
	} else {
		for _, p := range skbs {
			st.Receive(&w, 0, p)
		}
	}
	return w.Total()
}

// The raw-table rule drops UDP after ip_rcv's per-call part, for its own
// per-skb cost instead of ip_rcv's, udp_rcv's and the no-port path's; the
// buffers return to their queue; other protocols pass.
func TestRawDropUDP(t *testing.T) {
	c := costs
	c.RawDrop = 9
	for _, tc := range []struct {
		name  string
		proto pkt.Proto
		list  bool
		want  sim.Time
	}{
		{"udp single", pkt.UDP, false, 8 * (25 + 30 + 15 + 9)},
		{"udp list", pkt.UDP, true, 25 + 15 + 8*(30+9)},
		{"tcp passes", pkt.TCP, true, 25 + 15 + 8*(30+55)},
	} {
		var led pkt.Ledger
		released := 0
		st := stack.New(c, sim.NewFuncs(), nil, &led, func(_ uint16, n int) { released += n })
		st.RawDropUDP = true
		u := stack.NewUDP(st, sim.NewFuncs())
		skbs := modeltest.Constant(8, 0, 0, 60, 1)
		for i := range skbs {
			skbs[i].Proto = tc.proto
		}
		if got := deliver(st, &led, skbs, tc.list); got != tc.want {
			t.Errorf("%s: %d ns, want %d", tc.name, got, tc.want)
		}
		wantDrops := 0
		if tc.proto == pkt.UDP {
			wantDrops = 8
		}
		if int(st.Stats.RawDrops) != wantDrops || int(led.Dropped[pkt.NFRaw]) != wantDrops || u.Stats.NoPorts != 0 || released != 8 {
			t.Errorf("%s: raw drops %d (ledger %d), NoPorts %d, released %d; want %d, %d, 0, 8",
				tc.name, st.Stats.RawDrops, led.Dropped[pkt.NFRaw], u.Stats.NoPorts, released, wantDrops, wantDrops)
		}
		modeltest.Conservation(t, &led)
	}
}

// sk_rcvbuf admits an skb while sk_rmem_alloc <= sk_rcvbuf before its
// truesize is charged: a buffer of 10 truesizes takes 11 skbs.
func TestRcvbufErrors(t *testing.T) {
	for _, tc := range []struct{ rcvbuf, offered, queued int }{
		{10 * stack.SkbTruesize, 12, 11},
		{10*stack.SkbTruesize - 1, 12, 10},
		{212992, 200, 93}, // rmem_default: 212992/2304 = 92.4 -> 93 skbs
	} {
		var led pkt.Ledger
		st := stack.New(costs, sim.NewFuncs(), nil, &led, nil)
		u := stack.NewUDP(st, sim.NewFuncs())
		sk := u.Bind(tc.rcvbuf)
		deliver(st, &led, modeltest.Constant(tc.offered, 0, 0, 60, 1), false)
		if sk.Len() != tc.queued || int(u.Stats.RcvbufErrors) != tc.offered-tc.queued || sk.Rmem() != tc.queued*stack.SkbTruesize {
			t.Errorf("rcvbuf %d: queued %d errors %d rmem %d, want %d %d %d", tc.rcvbuf, sk.Len(), u.Stats.RcvbufErrors, sk.Rmem(),
				tc.queued, tc.offered-tc.queued, tc.queued*stack.SkbTruesize)
		}
		// No reader: the socket is where packets end (delivered at enqueue).
		modeltest.Conservation(t, &led, sk)
	}
}

// A sleeping reader is woken by sk_data_ready (the waker pays the wake-up),
// reads with recvmsg (150 + 280 + 18 B x 0.1 = 432 ns) and records the
// latency from wire arrival; InDatagrams counts at recvmsg.
func TestAppWakeAndRead(t *testing.T) {
	h := modeltest.New(modeltest.Config{CPUs: 2})
	st := stack.New(costs, h.Funcs, h.Softnet, &h.Led, nil)
	u := stack.NewUDP(st, h.Funcs)
	sk := u.Bind(212992)
	var hist stack.Histogram
	app := stack.NewApp(sk, h.CPUs[1], 1, &hist, h.Funcs)
	var wakeCost sim.Time
	h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
		h.Led.Offer(1)
		before := w.Total()
		st.Receive(w, 0, modeltest.Packet(0, 0, 60))
		wakeCost = w.Total() - before
	}))
	h.Run(sim.Millisecond)
	// 25+30 + 15+55 + 35 + 40 + wake 150.
	if wakeCost != 350 {
		t.Errorf("softirq side %d ns, want 350 (incl. the 150 ns wake-up)", wakeCost)
	}
	if app.Reads != 1 || u.Stats.InDatagrams != 1 || app.Thread().Wakeups != 1 || app.Thread().Runnable() {
		t.Errorf("reads %d InDatagrams %d wakeups %d runnable %v; want 1 1 1 false", app.Reads, u.Stats.InDatagrams, app.Thread().Wakeups, app.Thread().Runnable())
	}
	if got := h.Busy(1, "app"); got != 432 {
		t.Errorf("app CPU time %d, want 432", got)
	}
	if hist.Count() != 1 || hist.Mean() != 432 || hist.Quantile(0.5) != 433 {
		t.Errorf("latency n=%d mean %.0f p50 %.0f; want 1, 432, 433 (bucket [432,434) midpoint)", hist.Count(), hist.Mean(), hist.Quantile(0.5))
	}
	modeltest.Conservation(t, &h.Led, sk)
}

// Nearest-rank percentiles: values below 256 ns are exact.
func TestHistogramQuantiles(t *testing.T) {
	var hs stack.Histogram
	for v := sim.Time(1); v <= 60; v++ {
		hs.Record(v)
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 30}, {0.9, 54}, {0.99, 60}, {1, 60}, {0.01, 1}} {
		if got := hs.Quantile(tc.q); got != tc.want {
			t.Errorf("q%.2f = %g, want %g", tc.q, got, tc.want)
		}
	}
	if hs.Mean() != 30.5 {
		t.Errorf("mean %g, want 30.5", hs.Mean())
	}
	var big stack.Histogram
	big.Record(1_000_000) // 1 ms: bucket of width 2^12 starting at 244 x 4096 = 999424
	if got := big.Quantile(0.5); got != 999424+2048 {
		t.Errorf("1 ms sample in bucket with midpoint %g, want %d", got, 999424+2048)
	}
}

// rxPath builds an RX queue on CPU 0 with the XDP_PASS (no program) path
// into the stack, a socket, and its reader on appCPU.
func rxPath(t *testing.T, appCPU int, pkts []pkt.Packet) (*modeltest.Harness, *stack.UDP, *stack.App, *stack.Socket, *stack.DriverRx) {
	h := modeltest.New(modeltest.Config{CPUs: 2, NAPI: modeltest.NAPICosts{RxAction: 80, Poll: 40, Complete: 60}})
	q := h.AddQueue(modeltest.QueueConfig{CPU: 0, Pkts: pkts, ITRUsecs: 20,
		Costs: nic.Costs{IRQ: 500, RxCall: 60, RxPkt: 16, RefillCall: 80, RefillPk: 3}, NAPI: napi.Config{Name: "rx0", Weight: 64}})
	st := stack.New(costs, h.Funcs, h.Softnet, &h.Led, func(_ uint16, n int) { q.Release(n) })
	u := stack.NewUDP(st, h.Funcs)
	sk := u.Bind(212992)
	app := stack.NewApp(sk, h.CPUs[appCPU], 1, nil, h.Funcs)
	d := stack.NewDriverRx(st, 0, gro.DefaultConfig(), gro.Costs{Attempt: 26}, h.Funcs)
	q.Hook.Stack = d
	q.NAPI.GRO = &stack.NAPIGRO{E: d.GRO, Jiffy: sim.Millisecond}
	h.Start()
	return h, u, app, sk, d
}

// 1.5 Mpps for 2 ms into one socket. Read on CPU 1 the application keeps up
// (432 ns x 1.5 Mpps = 65% of a CPU). Read on CPU 0, the RX softirq takes
// its share of that CPU first and the reader gets only the rest: it falls
// behind and the socket overflows (the 2.31 vs 0.718 Mpps of §9).
func TestAppLosesCPUToSoftirq(t *testing.T) {
	const n = 3000
	pkts := modeltest.Constant(n, 0, 667, 60, 1)
	end := 3 * sim.Millisecond
	reads := map[int]uint64{}
	for _, cpu := range []int{1, 0} {
		h, u, app, sk, d := rxPath(t, cpu, pkts)
		h.Run(end)
		reads[cpu] = app.Reads
		soft := h.Busy(0, "softirq") + h.Busy(0, "ksoftirqd") + h.Busy(0, "hardirq")
		appT := h.Busy(cpu, "app")
		if cpu == 1 {
			if app.Reads != n || u.Stats.RcvbufErrors != 0 {
				t.Errorf("reader on CPU 1: %d reads, %d rcvbuf errors; want %d, 0", app.Reads, u.Stats.RcvbufErrors, n)
			}
		} else {
			if u.Stats.RcvbufErrors == 0 || app.Reads >= reads[1] {
				t.Errorf("reader on CPU 0: %d reads (CPU 1: %d), %d rcvbuf errors; want fewer reads and drops", app.Reads, reads[1], u.Stats.RcvbufErrors)
			}
			// Softirq and the reader share CPU 0's time; while the socket
			// has data the reader takes all the softirq leaves.
			if soft+appT > end || soft < end/4 {
				t.Errorf("CPU 0: softirq %v + app %v over %v", soft, appT, end)
			}
			if got := sim.Time(app.Reads) * 432; got != appT {
				t.Errorf("app time %v, want reads x 432 ns = %v", appT, got)
			}
		}
		modeltest.Conservation(t, &h.Led, sk, d, pkt.Queuer(queued(h.Queued)))
	}
}

type queued func() int

func (f queued) Queued() int { return f() }

// A UDP datagram without checksum status is summed once per L4 byte:
// in __udp4_lib_rcv's no-socket path (__skb_checksum_complete, in
// softirq), or, for a socket, by the reader's copy in udp_recvmsg
// (skb_copy_and_csum_datagram). A datagram sent without a checksum
// (pktgen's check 0) or one the NIC validated is not summed.
func TestUDPChecksum(t *testing.T) {
	const l4 = 1400 - 14 - 20
	perByte := 0.1
	sum := sim.Time(perByte*l4 + 0.5)
	for _, c := range []struct {
		name             string
		csumOK, zero     bool
		socket           bool
		softirq, readerT sim.Time // checksum time on CPU 0 and on the reader's CPU 1
	}{
		{"validated, no socket", true, false, false, 0, 0},
		{"no status, no socket", false, false, false, sum, 0},
		{"no status, zero checksum, no socket", false, true, false, 0, 0},
		{"validated, socket", true, false, true, 0, 0},
		{"no status, socket", false, false, true, 0, sum},
		{"no status, zero checksum, socket", false, true, true, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := costs
			sc.CsumByte = 0.1
			h := modeltest.New(modeltest.Config{CPUs: 2})
			st := stack.New(sc, h.Funcs, h.Softnet, &h.Led, nil)
			u := stack.NewUDP(st, h.Funcs)
			var sk *stack.Socket
			if c.socket {
				sk = u.Bind(212992)
				stack.NewApp(sk, h.CPUs[1], 1, nil, h.Funcs)
			}
			p := modeltest.Packet(0, 0, 1400)
			p.CsumOK, p.ZeroCsum = c.csumOK, c.zero
			h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
				h.Led.Offer(1)
				st.Receive(w, 0, p)
			}))
			h.Run(sim.Millisecond)
			if got := fnTime(h, 0, "__skb_checksum_complete"); got != c.softirq {
				t.Errorf("softirq checksum %d ns, want %d", got, c.softirq)
			}
			if got := fnTime(h, 1, "skb_copy_and_csum_datagram"); got != c.readerT {
				t.Errorf("reader's checksum %d ns, want %d", got, c.readerT)
			}
			if c.socket {
				modeltest.Conservation(t, &h.Led, sk)
			} else {
				modeltest.Conservation(t, &h.Led)
			}
		})
	}
}

// udp_recvmsg's deferred free (v6.18+): with DeferUDP the reader on CPU 1
// pushes a datagram built on CPU 0 onto CPU 0's defer list, and CPU 0's
// next net_rx_action frees it and releases its buffer; without it, or for
// a datagram built on the reader's CPU, the reader frees it. Every buffer
// is released once.
func TestUDPDeferFree(t *testing.T) {
	for _, c := range []struct {
		name                  string
		defer_                bool
		allocCPU              uint16
		deferred, readerFrees int
	}{
		{"off", false, 0, 0, 4},
		{"on, built on another CPU", true, 0, 4, 0},
		{"on, built on the reader's CPU", true, 1, 0, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := costs
			sc.FreeSkb, sc.FreeSeg = 100, 20
			h := modeltest.New(modeltest.Config{CPUs: 2})
			released := 0
			rel := func(_ uint16, n int) { released += n }
			for _, sn := range h.Softnet {
				sn.EnableDefer(64, napi.DeferCosts{Push: 10, FreeSkb: 100, FreeSeg: 20, Flush: 5}, h.Funcs, rel)
			}
			st := stack.New(sc, h.Funcs, h.Softnet, &h.Led, rel)
			st.DeferUDP = c.defer_
			u := stack.NewUDP(st, h.Funcs)
			sk := u.Bind(212992)
			stack.NewApp(sk, h.CPUs[1], 1, nil, h.Funcs)
			pkts := modeltest.Constant(4, 0, 0, 60, 1)
			for i := range pkts {
				pkts[i].AllocCPU = c.allocCPU
			}
			h.CPUs[0].RaiseIRQ(irq(func(w *sim.Work) {
				h.Led.Offer(len(pkts))
				st.ReceiveList(w, 0, pkts)
			}))
			h.Run(sim.Millisecond)
			if got := int(u.Stats.DeferredFrees); got != c.deferred {
				t.Errorf("%d frees deferred, want %d", got, c.deferred)
			}
			if got, want := fnTime(h, 1, "skb_release_data"), sim.Time(c.readerFrees*120); got != want {
				t.Errorf("reader's frees %v, want %v", got, want)
			}
			if got, want := fnTime(h, 1, "skb_attempt_defer_free"), sim.Time(c.deferred*10); got != want {
				t.Errorf("reader's pushes %v, want %v", got, want)
			}
			if c.deferred > 0 {
				// CPU 0 frees them at its next net_rx_action.
				h.CPUs[0].RaiseSoftirq()
				h.Run(2 * sim.Millisecond)
				if got, want := fnTime(h, 0, "skb_release_data")+fnTime(h, 0, "skb_defer_free_flush"), sim.Time(c.deferred*125); got != want {
					t.Errorf("CPU 0's flush %v, want %v", got, want)
				}
			}
			if released != len(pkts) {
				t.Errorf("%d buffers released, want %d", released, len(pkts))
			}
			modeltest.Conservation(t, &h.Led, sk)
		})
	}
}
