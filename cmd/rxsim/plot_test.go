package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotSVGGolden draws the throughput chart of a stored sweep result
// through the CLI and compares the SVG with the golden file.
func TestPlotSVGGolden(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.svg")
	rxsim(t, "plot", "testdata/plot-sweep.json", "--kind", "throughput", "-o", out)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "plot-throughput.golden.svg", got)
}

// TestPlotKinds draws every kind as PNG and checks that the files decode.
func TestPlotKinds(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		in, kind string
		more     []string
	}{
		{"plot-sweep.json", "throughput", nil}, {"plot-sweep.json", "cpu", nil}, {"plot-sweep.json", "heatmap", nil},
		{"plot-sweep.json", "box", nil}, {"plot-sweep.json", "cdf", []string{"--y", "rx_pps"}},
		{"plot-latency.json", "cdf", nil}, // per-transaction latency histograms of tcp-rr
		{"plot-compare.json", "box", nil}, {"plot-compare.json", "cdf", nil},
	}
	for _, tt := range tests {
		out := filepath.Join(dir, strings.TrimSuffix(tt.in, ".json")+"-"+tt.kind+".png")
		rxsim(t, append([]string{"plot", filepath.Join("testdata", tt.in), "--kind", tt.kind, "-o", out}, tt.more...)...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.in, tt.kind, err)
		}
		if r := img.Bounds(); r.Dx() < 100 || r.Dy() < 100 {
			t.Errorf("%s %s: %v image", tt.in, tt.kind, r)
		}
	}
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "part.json")
	rxsim(t, with(sweepArgs, "--shard", "0/2", "--save", part)...)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plot", part}, "partial result"},
		{[]string{"plot", "testdata/plot-sweep.json", "--kind", "cdf", "-o", filepath.Join(dir, "c.svg")}, "no run of xdp-drop-ixgbe measured latency"},
		{[]string{"plot", "testdata/plot-sweep.json", "--kind", "latency", "-o", filepath.Join(dir, "l.svg")}, "no latency_us.p50"},
		{[]string{"plot", "testdata/plot-compare.json", "--kind", "heatmap", "-o", filepath.Join(dir, "h.svg")}, "box or cdf"},
		{[]string{"plot", "testdata/compare.golden"}, "plot:"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := mainErr(&out, &errb, tt.args); code == 0 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", tt.args, code, errb.String(), tt.want)
		}
	}
}
