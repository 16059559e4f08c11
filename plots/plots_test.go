package plots

import (
	"bytes"
	"flag"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

var update = flag.Bool("update", false, "rewrite testdata/*_golden.svg")

// Fixtures shared by the tests: two cpumap configurations under a flood.
func throughputSeries() []Series {
	load := []float64{2, 4, 6, 8, 10, 12, 14}
	return []Series{
		{
			Name:     "xdp-drop",
			X:        load,
			Y:        []float64{2, 4, 6, 8, 10, 12, 14},
			YErrLow:  []float64{1.9, 3.9, 5.8, 7.8, 9.7, 11.8, 13.7},
			YErrHigh: []float64{2.1, 4.1, 6.2, 8.2, 10.3, 12.2, 14.3},
		},
		{
			Name: "cpumap",
			X:    load,
			Y:    []float64{2, 4, 5.9, 7.1, 7.15, 7.12, 6.4}, // saturates at 8, then livelock
		},
	}
}

func latencySeries() []LatencySeries {
	return []LatencySeries{{
		Name: "cpumap",
		Load: []float64{1, 2, 4, 8},
		P50:  []float64{8, 9, 12, 40},
		P90:  []float64{10, 12, 20, 90},
		P99:  []float64{14, 18, 35, 250},
	}}
}

func cdfSeries() []CDFSeries {
	return []CDFSeries{
		{Name: "samples", Samples: []float64{12, 3, 5, 5, 8, 40, 9, 7, 6, 5}},
		{Name: "histogram", Bounds: []float64{4, 8, 16, 32, math.Inf(1)}, Counts: []uint64{1, 5, 2, 1, 1}},
	}
}

func cpuConfigs() []CPUConfig {
	return []CPUConfig{
		{Name: "A", CPUs: []CPUClasses{
			{HardIRQ: 2, SoftIRQ: 60, Ksoftirqd: 30, Idle: 8},
			{Kthread: 70, Application: 20, Idle: 10},
		}},
		{Name: "B", CPUs: []CPUClasses{
			{HardIRQ: 2, SoftIRQ: 90, Idle: 8},
			{Kthread: 40, Application: 25, Idle: 35},
		}},
	}
}

func grid() Grid {
	return Grid{
		X: []float64{64, 128, 256, 512},
		Y: []float64{5, 10, 14.88},
		Z: [][]float64{
			{0, 0, 0, 0},
			{12, 3, 0, 0},
			{40, 25, 9, math.NaN()},
		},
	}
}

func boxGroups() []Group {
	return []Group{
		{Name: "A", Values: []float64{7.1, 7.0, 7.3, 7.2, 6.9, 7.1, 7.4, 7.0, 5.9}},
		{Name: "B", Values: []float64{7.8, 7.9, 7.7, 8.1, 7.8, 8.0, 7.9, 7.6, 7.8}},
	}
}

// charts builds one chart of every kind from the fixtures.
func charts(t *testing.T) map[string]Chart {
	t.Helper()
	must := func(c Chart, err error) Chart {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return map[string]Chart{
		"throughput": must(ThroughputVsLoad("rx vs offered load", throughputSeries(),
			Options{XLabel: "offered load (Mpps)", YLabel: "rx (Mpps)", Ideal: true})),
		"latency":   must(LatencyVsLoad("latency", latencySeries(), Options{YLabel: "latency (µs)", LogY: true})),
		"cdf":       must(LatencyCDF("latency CDF", cdfSeries(), Options{XLabel: "latency (µs)", LogX: true})),
		"cpustack":  must(CPUStack("CPU by class", cpuConfigs(), Options{})),
		"heatmap":   must(HeatMap("drops", grid(), Options{XLabel: "qsize", YLabel: "offered load (Mpps)", ZLabel: "drop %"})),
		"boxplots":  must(BoxPlots("rx across seeds", boxGroups(), Options{YLabel: "rx (Mpps)"})),
		"cpustack1": must(CPUStack("one config", cpuConfigs()[:1], Options{})),
	}
}

func render(t *testing.T, c Chart, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, c, format, 0, 0); err != nil {
		t.Fatalf("Write(_, _, %q, 0, 0): %v", format, err)
	}
	return buf.Bytes()
}

// TestGolden compares SVG output with testdata/<name>_golden.svg. The heat
// map golden embeds its colour bar as a PNG, whose zlib stream could change
// with a new Go release; regenerate it then.
// NB: if this test fails after an intended change, run
// `go test ./plots -update` and inspect the diff.
func TestGolden(t *testing.T) {
	all := charts(t)
	for _, name := range []string{"throughput", "heatmap", "cpustack"} {
		t.Run(name, func(t *testing.T) {
			got := render(t, all[name], SVG)
			path := filepath.Join("testdata", name+"_golden.svg")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./plots -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("SVG of %s differs from %s; run `go test ./plots -update` and inspect the diff", name, path)
			}
		})
	}
}

// TestDeterministic checks that every chart renders to byte-identical SVG
// when built and drawn twice.
func TestDeterministic(t *testing.T) {
	first, second := charts(t), charts(t)
	for name := range first {
		a, b := render(t, first[name], SVG), render(t, second[name], SVG)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: SVG differs between two renderings", name)
		}
		if !bytes.HasPrefix(a, []byte("<?xml")) || !bytes.Contains(a, []byte("</svg>")) {
			t.Errorf("%s: output is not an SVG document", name)
		}
		// Drawing the same chart value again gives the same bytes too.
		if c := render(t, first[name], SVG); !bytes.Equal(a, c) {
			t.Errorf("%s: SVG differs when the same chart is drawn twice", name)
		}
	}
}

func TestPNG(t *testing.T) {
	for name, c := range charts(t) {
		var buf bytes.Buffer
		if err := Write(&buf, c, PNG, 4*vg.Inch, 3*vg.Inch); err != nil {
			t.Fatalf("%s: Write(png): %v", name, err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: png.Decode: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 4*PNGDPI || b.Dy() != 3*PNGDPI {
			t.Errorf("%s: PNG is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), 4*PNGDPI, 3*PNGDPI)
		}
	}
}

func TestPDF(t *testing.T) {
	for name, c := range charts(t) {
		got := render(t, c, PDF)
		if len(got) < 100 || !bytes.HasPrefix(got, []byte("%PDF")) {
			t.Errorf("%s: PDF output (%d bytes) does not start with %%PDF", name, len(got))
		}
	}
}

func TestSave(t *testing.T) {
	c := charts(t)["throughput"]
	dir := t.TempDir()
	for _, tc := range []struct {
		file, magic string
	}{
		{"a.svg", "<?xml"}, {"b.PNG", "\x89PNG"}, {"c.pdf", "%PDF"}, {"d", "<?xml"},
	} {
		path := filepath.Join(dir, tc.file)
		if err := Save(c, path, 0, 0); err != nil {
			t.Fatalf("Save(_, %q, 0, 0): %v", path, err)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(tc.magic)) {
			t.Errorf("Save(_, %q): file starts %q (err %v), want %q", path, b[:min(len(b), 8)], err, tc.magic)
		}
	}
	// Overwriting replaces the file and leaves no temporary files.
	if err := Save(c, filepath.Join(dir, "a.svg"), 3*vg.Inch, 2*vg.Inch); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("after Save: directory holds %v, want only the four outputs", names)
	}

	// Errors leave nothing behind.
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "e.jpg"), `plots: ` + filepath.Join(dir, "e.jpg") + `: unsupported format ".jpg"`},
		{filepath.Join(dir, "missing", "f.svg"), "plots: open"},
	} {
		err := Save(c, tc.path, 0, 0)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Save(_, %q) = %v, want error starting %q", tc.path, err, tc.want)
		}
		if _, statErr := os.Stat(tc.path); !os.IsNotExist(statErr) {
			t.Errorf("Save(_, %q) failed but left a file", tc.path)
		}
	}
	if err := Write(new(bytes.Buffer), c, "gif", 0, 0); err == nil || !strings.HasPrefix(err.Error(), "plots: ") {
		t.Errorf(`Write(_, _, "gif") = %v, want a "plots: " error`, err)
	}
}

func TestSaturationIndex(t *testing.T) {
	tests := []struct {
		name string
		y    []float64
		tol  float64
		want int
	}{
		{name: "empty", y: nil, want: -1},
		{name: "single", y: []float64{3}, want: 0},
		{name: "linear", y: []float64{1, 2, 3, 4}, want: 3},
		{name: "plateau", y: []float64{1, 2, 3, 3, 3}, want: 2},
		{name: "plateau-noise", y: []float64{1, 2, 3, 2.995, 3.01, 3.0}, want: 2},
		{name: "livelock", y: []float64{2, 4, 5.9, 7.1, 7.15, 7.12, 6.4}, want: 3},
		{name: "tight-tol", y: []float64{2, 4, 5.9, 7.1, 7.15, 7.12, 6.4}, tol: 0.001, want: 4},
		{name: "wide-tol", y: []float64{1, 2, 3, 3.5, 3.6}, tol: 0.2, want: 2},
		{name: "zero", y: []float64{0, 0, 0}, want: 2},
		{name: "falls-from-start", y: []float64{5, 4, 3}, want: 0},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			if got := SaturationIndex(test.y, test.tol); got != test.want {
				t.Errorf("SaturationIndex(%v, %v) = %d, want %d", test.y, test.tol, got, test.want)
			}
		})
	}
}

// TestThroughputCutoff checks that the drawn line stops at saturation:
// the X axis, fitted to the data, ends at the last drawn point.
func TestThroughputCutoff(t *testing.T) {
	cpumap := throughputSeries()[1:]
	for _, test := range []struct {
		opts       Options
		xmax, ymax float64
	}{
		{opts: Options{}, xmax: 8, ymax: 7.1},
		{opts: Options{SaturationTol: 0.001}, xmax: 10, ymax: 7.15},
		{opts: Options{FullSeries: true}, xmax: 14, ymax: 7.15},
	} {
		p, err := ThroughputVsLoad("", cpumap, test.opts)
		if err != nil {
			t.Fatal(err)
		}
		if p.X.Max != test.xmax || p.Y.Max != test.ymax || p.X.Min != 0 || p.Y.Min != 0 {
			t.Errorf("ThroughputVsLoad(%+v): axes [%v, %v]×[%v, %v], want [0, %v]×[0, %v]",
				test.opts, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, test.xmax, test.ymax)
		}
	}
}

func TestValidation(t *testing.T) {
	good := throughputSeries()
	mod := func(f func(s []Series)) []Series {
		s := throughputSeries()
		f(s)
		return s
	}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"throughput/none", func() error { _, err := ThroughputVsLoad("", nil, Options{}); return err },
			"plots: ThroughputVsLoad: no series"},
		{"throughput/len-Y", func() error {
			_, err := ThroughputVsLoad("", mod(func(s []Series) { s[1].Y = s[1].Y[:3] }), Options{})
			return err
		}, `plots: series 1 ("cpumap"): Y has 3 values, X has 7`},
		{"throughput/len-YErrHigh", func() error {
			_, err := ThroughputVsLoad("", mod(func(s []Series) { s[0].YErrHigh = s[0].YErrHigh[:2] }), Options{})
			return err
		}, `plots: series 0 ("xdp-drop"): YErrHigh has 2 values, X has 7`},
		{"throughput/one-err-side", func() error {
			_, err := ThroughputVsLoad("", mod(func(s []Series) { s[0].YErrHigh = nil }), Options{})
			return err
		}, `plots: series 0 ("xdp-drop"): YErrLow and YErrHigh must be given together`},
		{"throughput/err-excludes-Y", func() error {
			_, err := ThroughputVsLoad("", mod(func(s []Series) { s[0].YErrLow = append([]float64{2.5}, s[0].YErrLow[1:]...) }), Options{})
			return err
		}, `plots: series 0 ("xdp-drop"): error bar 0 [2.5, 2.1] does not contain Y=2`},
		{"throughput/nan", func() error {
			_, err := ThroughputVsLoad("", mod(func(s []Series) { s[1].Y = []float64{1, 2, math.NaN(), 4, 5, 6, 7} }), Options{})
			return err
		}, `plots: series 1 ("cpumap"): Y[2] is NaN`},
		{"throughput/x-order", func() error {
			_, err := ThroughputVsLoad("", []Series{{Name: "s", X: []float64{1, 3, 2}, Y: []float64{1, 2, 3}}}, Options{})
			return err
		}, `plots: series 0 ("s"): X is not strictly increasing at 2 (2 after 3)`},
		{"throughput/empty", func() error {
			_, err := ThroughputVsLoad("", []Series{good[0], {Name: "e"}}, Options{})
			return err
		}, `plots: series 1 ("e"): X is empty`},
		{"latency/len-P99", func() error {
			s := latencySeries()
			s[0].P99 = s[0].P99[:2]
			_, err := LatencyVsLoad("", s, Options{})
			return err
		}, `plots: series 0 ("cpumap"): P99 has 2 values, Load has 4`},
		{"latency/none", func() error {
			_, err := LatencyVsLoad("", []LatencySeries{{Name: "x", Load: []float64{1}}}, Options{})
			return err
		}, `plots: series 0 ("x"): none of P50, P90, P99 is given`},
		{"latency/log-y", func() error {
			s := latencySeries()
			s[0].P50[0] = 0
			_, err := LatencyVsLoad("", s, Options{LogY: true})
			return err
		}, `plots: series 0 ("cpumap"): P50[0] = 0 is not positive (log axis)`},
		{"cdf/both", func() error {
			_, err := LatencyCDF("", []CDFSeries{{Name: "x", Samples: []float64{1}, Bounds: []float64{1}, Counts: []uint64{1}}}, Options{})
			return err
		}, `plots: series 0 ("x"): both Samples and Bounds/Counts are given`},
		{"cdf/neither", func() error { _, err := LatencyCDF("", []CDFSeries{{Name: "x"}}, Options{}); return err },
			`plots: series 0 ("x"): neither Samples nor Bounds/Counts is given`},
		{"cdf/len-Counts", func() error {
			_, err := LatencyCDF("", []CDFSeries{{Name: "h", Bounds: []float64{1, 2}, Counts: []uint64{1}}}, Options{})
			return err
		}, `plots: series 0 ("h"): Counts has 1 values, Bounds has 2`},
		{"cdf/bounds-order", func() error {
			_, err := LatencyCDF("", []CDFSeries{{Name: "h", Bounds: []float64{2, 1}, Counts: []uint64{1, 1}}}, Options{})
			return err
		}, `plots: series 0 ("h"): Bounds is not strictly increasing at 1 (1 after 2)`},
		{"cdf/log-x", func() error {
			_, err := LatencyCDF("", []CDFSeries{{Name: "s", Samples: []float64{0, 1}}}, Options{LogX: true})
			return err
		}, `plots: series 0 ("s"): Samples[0] = 0 is not positive (log axis)`},
		{"cpu/len", func() error {
			c := cpuConfigs()
			c[1].CPUs = c[1].CPUs[:1]
			_, err := CPUStack("", c, Options{})
			return err
		}, `plots: configuration 1 ("B"): CPUs has 1 entries, configuration 0 has 2`},
		{"cpu/sum", func() error {
			c := cpuConfigs()
			c[0].CPUs[1].Idle = 50
			_, err := CPUStack("", c, Options{})
			return err
		}, `plots: configuration 0 ("A"): cpu 1: classes sum to 140.0%, more than 100%`},
		{"cpu/negative", func() error {
			c := cpuConfigs()
			c[1].CPUs[0].Ksoftirqd = -1
			_, err := CPUStack("", c, Options{})
			return err
		}, `plots: configuration 1 ("B"): cpu 0: ksoftirqd = -1, want a percentage ≥ 0`},
		{"cpu/labels", func() error {
			c := cpuConfigs()
			c[0].Labels = []string{"cpu2"}
			_, err := CPUStack("", c, Options{})
			return err
		}, `plots: configuration 0 ("A"): Labels has 1 entries, CPUs has 2`},
		{"heatmap/rows", func() error {
			g := grid()
			g.Z = g.Z[:2]
			_, err := HeatMap("", g, Options{})
			return err
		}, "plots: HeatMap: Z has 2 rows, Y has 3 values"},
		{"heatmap/cols", func() error {
			g := grid()
			g.Z[1] = g.Z[1][:3]
			_, err := HeatMap("", g, Options{})
			return err
		}, "plots: HeatMap: Z[1] has 3 values, X has 4"},
		{"heatmap/all-nan", func() error {
			_, err := HeatMap("", Grid{X: []float64{1}, Y: []float64{1}, Z: [][]float64{{math.NaN()}}}, Options{})
			return err
		}, "plots: HeatMap: Z has no values (all NaN)"},
		{"box/empty", func() error {
			_, err := BoxPlots("", []Group{{Name: "A", Values: []float64{1}}, {Name: "B"}}, Options{})
			return err
		}, `plots: group 1 ("B"): Values is empty`},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			err := test.err()
			if err == nil || err.Error() != test.want {
				t.Errorf("error = %v, want %q", err, test.want)
			}
		})
	}
}

func TestCDFPoints(t *testing.T) {
	pts, err := cdfPoints(CDFSeries{Samples: []float64{3, 1, 2, 2}}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ x, y float64 }{{1, 0}, {1, 0.25}, {2, 0.75}, {3, 1}}
	if len(pts) != len(want) {
		t.Fatalf("cdfPoints = %v, want %v", pts, want)
	}
	for i, w := range want {
		if pts[i].X != w.x || pts[i].Y != w.y {
			t.Errorf("cdfPoints[%d] = %v, want %v", i, pts[i], w)
		}
	}
	// Histogram with an overflow bucket: the drawn CDF ends below 1.
	pts, err = cdfPoints(cdfSeries()[1], 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4 || pts[0].Y != 0.1 || pts[3].X != 32 || pts[3].Y != 0.9 {
		t.Errorf("cdfPoints(histogram) = %v, want 4 steps ending at (32, 0.9)", pts)
	}
	// Large samples are thinned to at most MaxCDFSteps steps, keeping the maximum.
	big := make([]float64, 3*MaxCDFSteps+7)
	for i := range big {
		big[i] = float64(i)
	}
	pts, err = cdfPoints(CDFSeries{Samples: big}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if last := pts[len(pts)-1]; len(pts) > MaxCDFSteps+1 || last.X != big[len(big)-1] || last.Y != 1 {
		t.Errorf("thinned CDF has %d points ending at %v, want ≤ %d ending at (%v, 1)", len(pts), last, MaxCDFSteps+1, big[len(big)-1])
	}
}

func TestHeatMapFlat(t *testing.T) {
	f, err := HeatMap("flat", Grid{X: []float64{1, 2}, Y: []float64{1}, Z: [][]float64{{3, 3}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(t, f, SVG); len(got) == 0 {
		t.Error("empty SVG for a flat heat map")
	}
}
