package perfattr

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
)

const script = `[000] 
	ffffffff8206a1 ip_rcv_finish_core
	ffffffff8206b2 ip_sublist_rcv
	ffffffff8206c3 veth_poll

[000] 
	ffffffff8206d4 try_to_wake_up
	ffffffff8206e5 sock_def_readable
	ffffffff8206f6 tcp_v4_rcv
	ffffffff8206b2 ip_sublist_rcv
	ffffffff8206c3 veth_poll

[001] 
	ffffffff82070a tcp_rcv_established
	ffffffff82071b tcp_v4_do_rcv
	ffffffff82072c __release_sock
	ffffffff82073d tcp_recvmsg

[000] 
	ffffffff8206a1 ip_rcv_finish_core
	ffffffff8206b2 ip_sublist_rcv
	ffffffff8206c3 veth_poll
`

// TestAttribute checks the nearest-boundary rule, the contexts and the
// folded round trip on a hand-written perf script.
func TestAttribute(t *testing.T) {
	st, err := Read(strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || st[0].Count != 2 {
		t.Fatalf("stacks %+v, want 3 distinct with the first twice", st)
	}
	var b bytes.Buffer
	if err := WriteFolded(&b, st); err != nil {
		t.Fatal(err)
	}
	again, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]Stack{st, again} {
		tab := Attribute(s, Rules, Contexts)
		for k, want := range map[Key]int{
			{0, "veth", "ip"}:    2, // ip_rcv_finish_core is no boundary: ip_sublist_rcv is
			{0, "veth", "wake"}:  1, // sock_def_readable is nearer the leaf than tcp_v4_rcv
			{1, "reader", "tcp"}: 1, // the socket backlog run by the reader
		} {
			if got := tab.Cells[k]; got != want {
				t.Errorf("%+v = %d, want %d (table %v)", k, got, want, tab.Cells)
			}
		}
		if tab.Total[0] != 3 || tab.Total[1] != 1 {
			t.Errorf("totals %v", tab.Total)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, in := range []string{"\tffff tcp_v4_rcv\n", "[x]\n", "cpu0;a;b\n", "cpuX;a 3\n"} {
		if _, err := Read(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestTCPMeasurement re-derives the bdw-e5-1650v4 profile's TCP costs from
// the stored measurement: the folded perf stacks of a GRO-off stream
// (tcp-gro-off.folded.gz) and the counters of the same run
// (tcp-gro-off.json). Each cost is a ratio to the core+IP receive per
// segment of that run, times the profile's list-mode netif_receive_skb +
// ip_rcv (30 + 55 + (25 + 15) / 7.8 = 90.1 ns).
func TestTCPMeasurement(t *testing.T) {
	var run struct {
		Skbs     float64 `json:"tcp_in_segs_per_sec"`
		Acks     float64 `json:"tcp_out_segs_per_sec"`
		Coalesce float64 `json:"backlog_coalesce_per_sec"`
	}
	st := storedRun(t, "tcp-gro-off", &run)
	r := TCPReceiveOf(Attribute(st, Rules, Contexts))
	sp := TCPSplitOf(st)
	a := ACKTxOf(st)
	if r.CoreIP != 1806 || sp != (TCPSplit{Own: 942, DoRcvSoftirq: 2492, DoRcvReader: 976, AddBacklog: 474}) || a.TCPIP != 551 {
		t.Errorf("core+IP %d, split %+v, ACK %+v; want 1806, 942/2492/976/474, 551 (the profile's source)", r.CoreIP, sp, a)
	}
	c := TCPCostsOf(sp, r.CoreIP, a, Rates{Skbs: run.Skbs, Acks: run.Acks, BacklogCoalesce: run.Coalesce})
	p := bdwProfile(t)
	doRcv := p.Must("tcp_v4_do_rcv")
	for _, x := range []struct {
		name       string
		got, ratio float64
	}{
		{"tcp_v4_rcv per skb", p.Must("tcp_v4_rcv").Call, c.Rcv},
		{"tcp_v4_do_rcv per call", doRcv.Call + doRcv.Pkt*c.SegsPerCall, c.DoRcvCall},
		{"tcp_add_backlog per backlogged skb", p.Must("tcp_add_backlog").Call, c.AddBacklog},
		{"tcp_send_ack's TCP/IP part (less the 450 ns device part)", p.Must("tcp_send_ack").Call - 450, c.ACKTCPIP},
	} {
		if want := x.ratio * bdwCoreIP; math.Abs(x.got-want) > 1 {
			t.Errorf("%s: profile %.1f ns, measurement gives %.2f x %.1f = %.1f", x.name, x.got, x.ratio, bdwCoreIP, want)
		}
	}
	if c.Backlogged < 0.4 || c.Backlogged > 0.55 {
		t.Errorf("%.0f%% of skbs backlogged, want 47%% (the run's derivation)", 100*c.Backlogged)
	}
}

// FuzzRead: any input gives stacks or an error, never a panic, and stacks
// survive the folded round trip with their sample counts.
func FuzzRead(f *testing.F) {
	f.Add([]byte(script))
	f.Add([]byte("cpu0;a;b 3\ncpu1;c 1\n"))
	f.Add([]byte("[001]\n\tffff x\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteFolded(&buf, st); err != nil {
			t.Fatal(err)
		}
		again, err := Read(&buf)
		if err != nil {
			// Frames with spaces or semicolons cannot be folded losslessly;
			// perf symbols have neither.
			return
		}
		n, m := 0, 0
		for _, s := range st {
			n += s.Count
		}
		for _, s := range again {
			m += s.Count
		}
		if n != m && len(again) > 0 {
			t.Fatalf("samples %d before folding, %d after", n, m)
		}
	})
}

// TestDeferMeasurement re-derives the bdw profile's skb_attempt_defer_free
// and skb_release_data from the stored perf run with the counters that
// count the skbs left for the reader (TCPRcvCoalesce besides
// TCPBacklogCoalesce).
func TestDeferMeasurement(t *testing.T) {
	var run struct {
		Skbs     float64 `json:"tcp_in_segs_per_sec"`
		Backlog  float64 `json:"backlog_coalesce_per_sec"`
		Coalesce float64 `json:"rcv_coalesce_per_sec"`
	}
	st := storedRun(t, "tcp-gro-off-defer", &run)
	d := DeferOf(st, 0)
	if d != (Defer{Push: 37, FlushSkb: 321, FlushSeg: 448, RecvCoreIP: 1719, CoreIP: 1873}) {
		t.Errorf("samples %+v, want push 37, flush 321 per skb + 448 per segment, core+IP 1719 of 1873 on CPU 0 (the profile's source)", d)
	}
	c := DeferCostsOf(d, Rates{Skbs: run.Skbs, BacklogCoalesce: run.Backlog, RcvCoalesce: run.Coalesce})
	p := bdwProfile(t)
	for _, x := range []struct {
		name       string
		got, ratio float64
	}{
		{"skb_attempt_defer_free per deferred skb", p.Must("skb_attempt_defer_free").Call, c.PushPerSkb},
		{"skb_release_data per skb", p.Must("skb_release_data").Call, c.FlushPerSkb},
		{"skb_release_data per segment buffer", p.Must("skb_release_data").Pkt, c.FlushPerSeg},
	} {
		if want := x.ratio * bdwCoreIP; math.Abs(x.got-want) > 0.1 {
			t.Errorf("%s: profile %.1f ns, measurement gives %.3f x %.1f = %.2f", x.name, x.got, x.ratio, bdwCoreIP, want)
		}
	}
	if c.Deferred < 37000 || c.Deferred > 39000 || c.Local < 0.07 || c.Local > 0.09 {
		t.Errorf("%.0f deferred skbs/s, %.1f%% of segments local; want 38,037 and 8.2%%", c.Deferred, 100*c.Local)
	}
}

// bdwCoreIP is the bdw-e5-1650v4 profile's list-mode netif_receive_skb +
// ip_rcv per packet (ns), the scale of every measured TCP ratio.
const bdwCoreIP = 30 + 55 + (25.0+15)/7.8

// storedRun reads the stored perf run name: its folded stacks
// (testdata/perf/name.folded.gz), and its counters (name.json) into run.
// bdwProfile loads the bdw-e5-1650v4 profile whose measured items the
// tests re-derive.
func bdwProfile(t *testing.T) *hw.Profile {
	t.Helper()
	p, err := hw.Load("ixgbe", "bdw-e5-1650v4")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func storedRun(t *testing.T, name string, run any) []Stack {
	t.Helper()
	f, err := os.Open("../testdata/perf/" + name + ".folded.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../testdata/perf/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, run); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestCsumMeasurement re-derives the bdw profile's checksum rate
// (__skb_checksum_complete and __skb_gro_checksum_complete, both
// csum_partial) from the stored cpumap UDP run, and the fc-epyc profile's
// from the same run's absolute CPU time.
func TestCsumMeasurement(t *testing.T) {
	var run struct {
		PPS     float64 `json:"kthread_pps"`
		L4      int     `json:"l4_bytes"`
		Seconds float64 `json:"perf_seconds"`
		Hz      float64 `json:"perf_hz"`
	}
	st := storedRun(t, "udp-cpumap-csum", &run)
	c := CsumOf(st, 1)
	if c != (Csum{Csum: 1057, CoreIP: 1639}) {
		t.Errorf("samples %+v, want checksum 1057 and core+IP 1639 on the kthread's CPU 1 (the profiles' source)", c)
	}
	bdw, err := hw.Load("i40e", "bdw-e5-1650v4")
	if err != nil {
		t.Fatal(err)
	}
	want := c.PerByte(run.L4) * bdwCoreIP
	for _, f := range []string{"__skb_checksum_complete", "__skb_gro_checksum_complete"} {
		if got := bdw.Must(f).Byte; math.Abs(got-want) > 0.0005 {
			t.Errorf("bdw %s: profile %.4f ns/byte, measurement gives %.4f", f, got, want)
		}
	}
	fc, err := hw.Load("veth", "fc-epyc-2vcpu")
	if err != nil {
		t.Fatal(err)
	}
	abs := float64(c.Csum) / (run.Seconds * run.Hz) / (run.PPS * float64(run.L4)) * 1e9
	if got := fc.Must("__skb_gro_checksum_complete").Byte; math.Abs(got-abs) > 0.0005 {
		t.Errorf("fc-epyc checksum: profile %.4f ns/byte, measurement gives %.4f", got, abs)
	}
}

// TestCopyMeasurement re-derives the bdw profile's _copy_to_iter per byte
// from the two stored GRO-off runs (one segment of MSS 1448 per skb, each
// copied once and received once through core+IP): the mean of their
// ratios to core+IP, times the profile's core+IP.
func TestCopyMeasurement(t *testing.T) {
	const mss = 1448
	var perByte []float64
	for _, c := range []struct {
		run        string
		copy, core int
	}{
		{"tcp-gro-off", 1281, 1806},       // AMD-hosted VM
		{"tcp-gro-off-defer", 1947, 1873}, // Intel-hosted VM
	} {
		var rates struct{}
		tab := Attribute(storedRun(t, c.run, &rates), Rules, Contexts)
		got, core := CopyOf(tab), TCPReceiveOf(tab).CoreIP
		if got != c.copy || core != c.core {
			t.Errorf("%s: copy %d, core+IP %d samples; want %d, %d (the profile's source)", c.run, got, core, c.copy, c.core)
		}
		perByte = append(perByte, float64(got)/float64(core)/mss*bdwCoreIP)
	}
	p := bdwProfile(t)
	want := (perByte[0] + perByte[1]) / 2
	for _, f := range []string{"_copy_to_iter", "recvmsg", "tcp_sendmsg"} {
		if got := p.Must(f).Byte; math.Abs(got-want) > 0.0005 {
			t.Errorf("%s per byte: profile %.4f ns, the runs give %.4f and %.4f, mean %.4f", f, got, perByte[0], perByte[1], want)
		}
	}
}

// TestUDPFreeMeasurement re-derives the fc-epyc profile's free of a consumed
// datagram (this VM type, 6.18, where udp_recvmsg defers the free with
// skb_attempt_defer_free) from two stored runs, in the VM's own time:
// the local free from the cpumap listener run (skbs built by the kthread on
// the reader's CPU 1), the push and the flush from the XDP_PASS run (skbs
// built by the veth NAPI on CPU 0, read on CPU 1).
func TestUDPFreeMeasurement(t *testing.T) {
	var run struct {
		Delivered float64 `json:"delivered_pps"`
		Seconds   float64 `json:"perf_seconds"`
		Hz        float64 `json:"perf_hz"`
	}
	nsPer := func(samples int) float64 { return float64(samples) / (run.Seconds * run.Hz) / run.Delivered * 1e9 }
	local := UDPFreeOf(storedRun(t, "udp-cpumap-listener", &run), 1, 1)
	localNS := nsPer(local.Local)
	remote := UDPFreeOf(storedRun(t, "udp-xdp-pass", &run), 1, 0)
	pushNS, flushNS := nsPer(remote.Push), nsPer(remote.Flush)
	if local.Local != 580 || remote.Push != 897 || remote.Flush != 2406 {
		t.Errorf("samples: local free %d, push %d, flush %d; want 580, 897, 2406 (the profile's source)", local.Local, remote.Push, remote.Flush)
	}
	p, err := hw.Load("veth", "fc-epyc-2vcpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"skb_release_data (the local free)", p.Must("skb_release_data").Call, localNS},
		{"skb_attempt_defer_free (the push)", p.Must("skb_attempt_defer_free").Call, pushNS},
		{"skb_defer_free_flush (the flush beyond the free)", p.Must("skb_defer_free_flush").Call, flushNS - localNS},
	} {
		if math.Abs(x.got-x.want) > 0.5 {
			t.Errorf("%s: profile %.1f ns, measurement gives %.1f", x.name, x.got, x.want)
		}
	}
}

// TestItems: a sample counts for the model item of the frame nearest its
// leaf that has a rule; idle-loop samples are idle; a JIT-ed XDP program's
// own frames are bpf_prog_run_xdp; frames with no rule are other.
func TestItems(t *testing.T) {
	st, err := Read(strings.NewReader(strings.Join([]string{
		"cpu0;net_rx_action;__napi_poll;veth_poll;veth_xdp_rcv;bpf_prog_571d14cb96600519_rxsim_pass 3",
		"cpu0;net_rx_action;__napi_poll;veth_poll;gro_normal_list;netif_receive_skb_list_internal;ip_list_rcv;ip_sublist_rcv;fib_table_lookup 5",
		"cpu0;net_rx_action;__napi_poll;veth_poll;gro_normal_list;netif_receive_skb_list_internal;ip_list_rcv;ip_sublist_rcv;ip_local_deliver;__udp4_lib_rcv;udp_unicast_rcv_skb;sock_def_readable;try_to_wake_up 7",
		"cpu0;net_rx_action;skb_defer_free_flush;skb_release_data;napi_pp_put_page 2",
		"cpu0;net_rx_action;skb_defer_free_flush 4",
		"cpu1;do_idle;default_idle_call;pv_native_safe_halt 11",
		"cpu1;entry_SYSCALL_64;do_syscall_64;ksys_read;sock_read_iter;inet_recvmsg;udp_recvmsg;skb_attempt_defer_free 6",
		"cpu1;entry_SYSCALL_64;do_syscall_64;syscall_exit_to_user_mode 1",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	got := Items(st)
	want := map[int]map[string]int{
		0: {"bpf_prog_run_xdp": 3, "ip_rcv": 5, "sock_def_readable": 7, "skb_release_data": 2, "skb_defer_free_flush": 4},
		1: {Idle: 11, "skb_attempt_defer_free": 6, "other": 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items %v, want %v", got, want)
	}
}

// TestOneCPUMeasurement: the stored GRO-off run with the whole receive path
// on one CPU (threaded veth NAPI and the reader both on CPU 1) was limited
// by that CPU; it gives the bdw profile's sock_def_readable_woken; and its
// receive above core+IP costs what the model's does with netserver on the
// RX CPU, in the same units: each side's core+IP per segment. Apart from
// the woken-reader wake-up no profile item was derived from this run.
func TestOneCPUMeasurement(t *testing.T) {
	var run struct {
		Segs  float64   `json:"segments_per_sec"`
		Reads float64   `json:"reads_per_sec"`
		Busy  []float64 `json:"cpu_busy"`
	}
	st := storedRun(t, "tcp-gro-off-threaded", &run)
	o := OneCPUOf(Attribute(st, Rules, Contexts), 1)
	want := OneCPU{CoreIP: 1390, TCP: 3772, Wake: 634, Copy: 1969, Recvmsg: 871, Driver: 1122, VethCopy: 6255, Rest: 3428, Total: 19441}
	if o != want {
		t.Errorf("CPU 1: %+v, want %+v", o, want)
	}
	if len(run.Busy) != 2 || run.Busy[1] < 0.98 || run.Busy[0] > 0.6 {
		t.Errorf("CPU busy %v, want the receive CPU (1) saturated and the sender's (0) not", run.Busy)
	}
	measured := o.AboveRatio()
	p := bdwProfile(t)
	if got, want := p.Must("sock_def_readable_woken").Call, WokenWakeOf(o, run.Segs, run.Reads)*bdwCoreIP; math.Abs(got-want) > 0.1 {
		t.Errorf("sock_def_readable_woken: profile %.1f ns, measurement gives %.1f", got, want)
	}

	s, err := scenarios.Load("tcp-stream-gro", `duration="40ms"`, "nic.gro=false", "app.cpus=[0]")
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Build(s, s.Seed, host.Layers()...)
	if err != nil {
		t.Fatal(err)
	}
	r := h.Run()
	var coreIP, held, wake float64
	for _, f := range r.Funcs {
		if f.CPU != 0 {
			continue
		}
		switch f.Func {
		case "netif_receive_skb", "ip_rcv":
			coreIP += float64(f.NS)
		case "tcp_v4_rcv", "tcp_v4_do_rcv", "tcp_add_backlog", "tcp_send_ack", "_copy_to_iter", "tcp_recvmsg", "skb_release_data", "skb_attempt_defer_free":
			held += float64(f.NS)
		case "sock_def_readable", "sock_def_readable_local", "sock_def_readable_woken":
			wake += float64(f.NS)
		case "irq_handler", "driver_rx", "driver_refill", "build_skb", "net_rx_action", "napi_poll", "napi_complete_done", "timer_tick":
		default:
			t.Errorf("model item %s on the RX CPU is in neither part; classify it", f.Func)
		}
	}
	if coreIP == 0 {
		t.Fatal("model: no core+IP time on CPU 0")
	}
	model, modelHeld := (held+wake)/coreIP, held/coreIP
	measuredHeld := float64(o.TCP+o.Copy+o.Recvmsg) / float64(o.CoreIP)
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"receive above core+IP", model, measured},
		{"the same without the wake-ups (no item derived from this run)", modelHeld, measuredHeld},
	} {
		if math.Abs(c.got-c.want)/c.want > 0.2 {
			t.Errorf("%s: model %.2f x core+IP per segment, measurement %.2f x; want within 20%%", c.what, c.got, c.want)
		}
	}
	t.Logf("receive above core+IP per segment: measured %.2f x core+IP (%.2f without the wake-ups), model %.2f x (%.2f); RX CPU %.1f%% busy at %.3f Gbit/s",
		measured, measuredHeld, model, modelHeld, 100*r.CPU[0].Busy, r.GoodputGbps)
}

// TestOfoMeasurement re-derives the bdw profile's tcp_data_queue_ofo from
// the stored run with 1 frame in 100 dropped: the out-of-order work per
// held skb against core+IP per segment.
func TestOfoMeasurement(t *testing.T) {
	var run struct {
		Segs float64 `json:"segments_per_sec"`
		Ofo  float64 `json:"ofo_queue_per_sec"`
		Retx float64 `json:"retrans_per_sec"`
	}
	st := storedRun(t, "tcp-gro-off-loss", &run)
	o := OfoOf(st)
	if o.Samples != 427 || o.CoreIP != 1857 {
		t.Errorf("out-of-order samples %d, core+IP %d; want 427 and 1857 (the profile's source)", o.Samples, o.CoreIP)
	}
	p := bdwProfile(t)
	if got, want := p.Must("tcp_data_queue_ofo").Call, o.PerSkb(run.Segs, run.Ofo)*bdwCoreIP; math.Abs(got-want) > 0.1 {
		t.Errorf("tcp_data_queue_ofo: profile %.1f ns, measurement gives %.1f", got, want)
	}
	// SACK: the sender resent about what the program dropped (1 in 100)
	if d := run.Segs / 100; math.Abs(run.Retx-d)/d > 0.1 {
		t.Errorf("%.0f retransmissions/s for about %.0f drops/s, want one each", run.Retx, d)
	}
}
