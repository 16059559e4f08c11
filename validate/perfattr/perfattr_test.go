package perfattr

import (
	"bytes"
	"os"
	"strings"
	"testing"
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

// TestTCPMeasurement re-derives the ratio the bdw-e5-1650v4 profile's
// tcp_v4_rcv cost is built on from the stored measurement.
func TestTCPMeasurement(t *testing.T) {
	f, err := os.Open("../testdata/perf/tcp-gro-off.folded.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	r := TCPReceiveOf(Attribute(st, Rules, Contexts))
	if r.TCP != 4314 || r.CoreIP != 2038 {
		t.Errorf("TCP %d core+IP %d samples, want 4314 and 2038 (the profile's source)", r.TCP, r.CoreIP)
	}
	if r.Ratio < 2.11 || r.Ratio > 2.13 {
		t.Errorf("ratio %.3f, want 2.12", r.Ratio)
	}
	// The split of the profile's tcp_v4_rcv, tcp_v4_do_rcv and
	// tcp_add_backlog.
	if sp := TCPSplitOf(st); sp != (TCPSplit{Own: 1017, DoRcvSoftirq: 2039, DoRcvReader: 918, AddBacklog: 360}) {
		t.Errorf("split %+v, want 1017/2039/918/360 (the profile's source)", sp)
	}
	// The ACK: TCP/IP part per ACK against core+IP per segment, with the
	// run's rates (tcp-gro-off.json): 545 samples for 21,431 ACKs/s vs
	// 2038 for 244,838 segments/s gives 3.06, the profile's tcp_send_ack.
	a := ACKTxOf(st)
	if a.TCPIP != 545 || a.Dev != 375 {
		t.Errorf("ACK TX %+v, want TCPIP 545 and Dev 375 (the profile's source)", a)
	}
	perACK := float64(a.TCPIP) / 21431
	perSeg := float64(r.CoreIP) / 244838
	if q := perACK / perSeg; q < 3.0 || q > 3.1 {
		t.Errorf("ACK TCP/IP per ACK / core+IP per segment = %.3f, want 3.06", q)
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
