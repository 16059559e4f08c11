package validate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
)

// requireBPF skips the test where privileges or the kernel lack what the
// harness needs, with the reason.
func requireBPF(t *testing.T) {
	t.Helper()
	if err := checkPrivileges(); err != nil {
		t.Skipf("skip: %v", err)
	}
	if err := features.HaveProgramType(ebpf.XDP); err != nil {
		t.Skipf("skip: kernel lacks XDP programs: %v", err)
	}
}

func newTestHarness(t *testing.T) *Harness {
	t.Helper()
	h, err := NewHarness()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("skip: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

func send(t *testing.T, h *Harness, g GenKind, n uint64) {
	t.Helper()
	var sent atomic.Uint64
	err := RunGenerator(context.Background(), h, GenOptions{Kind: g, PktSize: 60, Flows: 4, Count: n, CPU: 0, Duration: 20 * time.Second}, &sent)
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("skip: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sent.Load() != n {
		t.Fatalf("%s generator sent %d, want %d", g, sent.Load(), n)
	}
}

// waitCounter polls until slot reaches want or a deadline passes; packets
// in a cpumap queue or listener need a moment.
func waitCount(read func() uint64, want uint64) uint64 {
	var v uint64
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if v = read(); v >= want {
			time.Sleep(20 * time.Millisecond)
			return read()
		}
	}
	return v
}

// TestProgramsCountExactly attaches each program to a fresh veth pair, sends
// a known number of packets with each generator, and checks that the
// counters see exactly that number.
func TestProgramsCountExactly(t *testing.T) {
	requireBPF(t)
	const n = 20000
	specs := []XDPSpec{
		{Program: ProgDrop},
		{Program: ProgPass},
		{Program: ProgTx},
		{Program: ProgRedirectCPU, Mode: ModeNoTouch, CPUs: []int{1}, Qsize: 192},
		{Program: ProgRedirectCPU, Mode: ModeRoundRobin, CPUs: []int{0, 1}, Qsize: 192, RemoteAction: RemotePass},
		{Program: ProgRedirectCPU, Mode: ModeL4Hash, CPUs: []int{0, 1}, Qsize: 2048, RemoteAction: RemoteDrop},
	}
	for _, spec := range specs {
		for _, g := range []GenKind{GenLive, GenAFPacket, GenUDP} {
			name := fmt.Sprintf("%s-%s-%s-%s", spec.Program, spec.Mode, spec.RemoteAction, g)
			t.Run(name, func(t *testing.T) {
				h := newTestHarness(t)
				x, err := LoadXDP(spec)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Close()
				if err := h.AttachXDP(x.Prog, false); err != nil {
					t.Fatal(err)
				}
				if x.Sink != nil {
					if err := h.AttachSenderXDP(x.Sink); err != nil {
						t.Fatal(err)
					}
				}
				if err := h.Configure(NetSettings{SenderTxCsumOff: spec.Program == ProgRedirectCPU}); err != nil {
					t.Fatal(err)
				}
				var pr *Probes
				if spec.Program == ProgRedirectCPU {
					if pr, err = AttachProbes(h.Rcv); err != nil {
						if errors.Is(err, ErrNotSupported) {
							t.Skipf("skip: %v", err)
						}
						t.Fatal(err)
					}
					defer pr.Close()
				}
				snmp0, _ := h.SNMP()
				send(t, h, g, n)
				rx := waitCount(func() uint64 { c, _, _ := ReadCounter(x.Counters, SlotRx); return c.Packets }, n)
				if rx != n {
					snd, _ := h.LinkStats(false)
					rcv, _ := h.LinkStats(true)
					st, _ := h.EthtoolStats()
					t.Fatalf("XDP counter %d, want exactly %d; sender %+v receiver %+v ethtool %v", rx, n, snd, rcv, st)
				}
				c, _, _ := ReadCounter(x.Counters, SlotRx)
				if c.Bytes != n*60 {
					t.Errorf("XDP byte counter %d, want %d", c.Bytes, n*60)
				}
				st, err := h.EthtoolStats()
				if err != nil {
					t.Fatal(err)
				}
				if g != GenLive && st["rx_queue_0_xdp_packets"] != n {
					t.Errorf("ethtool rx_queue_0_xdp_packets %d, want %d", st["rx_queue_0_xdp_packets"], n)
				}
				udp := func() uint64 {
					s, _ := h.SNMP()
					return uint64(s.Get("Udp", "NoPorts") - snmp0.Get("Udp", "NoPorts") + s.Get("Udp", "InErrors") - snmp0.Get("Udp", "InErrors"))
				}
				switch spec.Program {
				case ProgPass:
					if v := waitCount(udp, n); v != n {
						t.Errorf("Udp NoPorts+InErrors %d, want %d", v, n)
					}
				case ProgTx:
					sink := waitCount(func() uint64 { c, _, _ := ReadCounter(x.Counters, SlotSink); return c.Packets }, n)
					if st["rx_queue_0_xdp_tx"] != n && g != GenLive {
						t.Errorf("ethtool xdp_tx %d, want %d", st["rx_queue_0_xdp_tx"], n)
					}
					if sink > n || (g != GenLive && sink != n) {
						t.Errorf("XDP_TX'd packets seen on the sender %d, want %d", sink, n)
					}
				case ProgRedirectCPU:
					// The raw tracepoints against the program's counters.
					var pc ProbeCounts
					for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
						pc, _ = pr.Read()
						var kth, enq, drops uint64
						for _, k := range pc.Kth {
							kth += k.Processed
						}
						for _, row := range pc.Enq {
							for _, e := range row {
								enq += e.Processed
								drops += e.Drops
							}
						}
						if enq == n && kth == enq-drops {
							break
						}
					}
					var kth, enq, drops uint64
					for _, k := range pc.Kth {
						kth += k.Processed
					}
					for from, row := range pc.Enq {
						for to, e := range row {
							enq += e.Processed
							drops += e.Drops
							if e.Processed > 0 && !contains(spec.CPUs, to) {
								t.Errorf("enqueue %d->%d not to a target CPU", from, to)
							}
						}
					}
					if enq != n {
						t.Errorf("xdp_cpumap_enqueue processed %d, want %d (= XDP rx)", enq, n)
					}
					if kth != enq-drops {
						t.Errorf("xdp_cpumap_kthread processed %d, want enqueue processed-drops %d", kth, enq-drops)
					}
					if spec.RemoteAction != RemoteDisabled && spec.RemoteAction != "" {
						rem, _, _ := ReadCounter(x.Counters, SlotRemote)
						if rem.Packets != kth {
							t.Errorf("cpumap program counted %d, kthread tracepoint %d", rem.Packets, kth)
						}
					}
					if spec.RemoteAction != RemoteDrop {
						if v := waitCount(udp, kth); v != kth {
							t.Errorf("Udp NoPorts+InErrors %d, want kthread processed %d", v, kth)
						}
					}
					t.Logf("enqueue %d drops %d kthread %d", enq, drops, kth)
				}
			})
		}
	}
}

func contains(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// TestRatesAgreeWithKernelCounters checks that the rates Run reports agree
// within 2% with counters the kernel keeps independently of rxsim's
// programs: veth's rx_queue_0_xdp_packets and softnet_stat.
func TestRatesAgreeWithKernelCounters(t *testing.T) {
	requireBPF(t)
	within := func(name string, got, want float64) {
		t.Helper()
		if want == 0 || got < want*0.98 || got > want*1.02 {
			t.Errorf("%s: validate %.0f pps, kernel %.0f pps: not within 2%%", name, got, want)
		} else {
			t.Logf("%s: validate %.0f pps, kernel %.0f pps", name, got, want)
		}
	}
	runs := []Options{
		{Config: "agree-drop", Program: ProgDrop, Gen: GenOptions{Kind: GenAFPacket}},
		{Config: "agree-redirect", Program: ProgRedirectCPU, Mode: ModeNoTouch, CPUs: []int{1}, Qsize: 192, Gen: GenOptions{Kind: GenAFPacket}},
	}
	for _, o := range runs {
		o.Duration, o.Warmup, o.Reps = 2*time.Second, 500*time.Millisecond, 1
		o.Net.ThreadedCPU = -1
		res, err := Run(context.Background(), o)
		if errors.Is(err, ErrNotSupported) {
			t.Skipf("skip: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		var rx, eth, kth, softnet float64
		for _, s := range res.PerSecond {
			rx += s.Rx * s.Period
			eth += s.EthtoolXDP * s.Period
			kth += s.Kthread * s.Period
			softnet += s.Softnet.Processed * s.Period
		}
		within(o.Config+" rx_pps vs ethtool rx_queue_0_xdp_packets", rx, eth)
		within(o.Config+" median rx_pps vs ethtool", res.RxPPS, res.Median["ethtool_rx_xdp_pps"])
		if o.Program == ProgRedirectCPU {
			within(o.Config+" kthread_pps vs softnet_stat processed", kth, softnet)
		}
	}
}
