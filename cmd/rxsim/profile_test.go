package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/models/host"
)

func TestProfileOf(t *testing.T) {
	r := &host.Result{Funcs: []host.FuncTime{
		{CPU: 0, Func: "driver_rx", NS: 600, Frac: 0.6},
		{CPU: 0, Func: "irq_handler", NS: 100, Frac: 0.1},
		{CPU: 1, Func: "driver_rx", NS: 200, Frac: 0.2},
		{CPU: 1, Func: "app", NS: 100, Frac: 0.1},
	}}
	tests := []struct {
		cpu   int
		total int64
		want  []string // func:share%
	}{
		{0, 700, []string{"driver_rx:85.71", "irq_handler:14.29"}},
		{1, 300, []string{"driver_rx:66.67", "app:33.33"}},
		{-1, 1000, []string{"driver_rx:80.00", "app:10.00", "irq_handler:10.00"}}, // ties by name
	}
	for _, tt := range tests {
		fs, total := profileOf(r, tt.cpu)
		var got []string
		for _, f := range fs {
			got = append(got, f.Func+":"+strconv.FormatFloat(100*f.Share, 'f', 2, 64))
		}
		if total != tt.total || strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("cpu %d: %v total %d, want %v total %d", tt.cpu, got, total, tt.want, tt.total)
		}
	}
}

func TestProfileCLI(t *testing.T) {
	out := rxsim(t, "profile", "xdp-drop-ixgbe", "--duration", "2ms")
	sum := 0.0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && strings.HasSuffix(f[0], "%") && !strings.HasPrefix(l, "#") {
			v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
			if err != nil {
				t.Fatal(err)
			}
			sum += v
		}
	}
	if !strings.Contains(out, "driver_rx") || sum < 99.9 || sum > 100.1 {
		t.Errorf("overheads sum to %.2f%%, want 100:\n%s", sum, out)
	}
	diff := rxsim(t, "profile", "--diff", "xdp-drop-ixgbe", "--duration", "2ms")
	for _, l := range strings.Split(diff, "\n") {
		if f := strings.Fields(l); len(f) == 3 && !strings.HasPrefix(l, "#") && f[1] != "+0.00%" {
			t.Errorf("A vs A: delta %s for %s", f[1], f[2])
		}
	}
}

// TestProfilePerf: the stored perf recording of validate's XDP_PASS
// configuration against the model's veth-xdp-pass-udp, item by item; a
// recording without its counters is refused with the file and field named.
func TestProfilePerf(t *testing.T) {
	out := rxsim(t, "profile", "--perf", "../../validate/testdata/perf/udp-xdp-pass.folded.gz",
		"veth-xdp-pass-udp", "--set", "traffic.generator=afpacket", "--duration", "5ms")
	checkGolden(t, "profile-perf-xdp-pass.golden", []byte(out))
	for _, want := range []string{"packet_sendmmsg", "skb_defer_free_flush", "recvmsg", "# cpu 1:", "total"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	folded := filepath.Join(dir, "run.folded")
	if err := os.WriteFile(folded, []byte("cpu0;net_rx_action 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ json, want string }{
		{"", "run.json"},
		{`{"perf_seconds": 4, "perf_hz": 4999}`, "rx_pps"},
		{`{"perf_seconds": 0, "perf_hz": 4999, "rx_pps": 1}`, "perf_seconds"},
	} {
		if c.json != "" {
			if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var o, e bytes.Buffer
		if code := mainErr(&o, &e, []string{"profile", "--perf", folded, "xdp-drop-ixgbe", "--duration", "1ms"}); code == 0 || !strings.Contains(e.String(), c.want) {
			t.Errorf("json %q: exit %d, stderr %q; want an error naming %q", c.json, code, e.String(), c.want)
		}
	}
}
