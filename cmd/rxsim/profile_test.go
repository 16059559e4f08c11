package main

import (
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
