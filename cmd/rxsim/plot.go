package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rxsim/rxsim/plots"
	"github.com/rxsim/rxsim/scenarios/sweep"
)

// plotKinds are the charts rxsim plot draws.
var plotKinds = []string{"throughput", "latency", "cdf", "cpu", "heatmap", "box"}

// plotSpec says what to draw.
type plotSpec struct {
	Kind   string // one of plotKinds
	X      string // sweep parameter on the X axis (heatmap: columns)
	Metric string // Y metric (heatmap: Z)
	Title  string
}

// studyPlots are the default plots of the built-in studies.
var studyPlots = map[string]plotSpec{
	"qsize-sweep":     {Kind: "heatmap", X: "traffic.rate", Metric: "cpumap.drop_pct"},
	"batch-sweep":     {Kind: "throughput", X: "gro.normal_batch", Metric: "rx_pps"},
	"delivery-modes":  {Kind: "throughput", X: "traffic.rate", Metric: "udp.no_ports"},
	"busy-poll-sweep": {Kind: "latency", X: "stack.busy_read"},
}

func cmdPlot(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ps plotSpec
	fs.StringVar(&ps.Kind, "kind", "", "chart: "+strings.Join(plotKinds, "|")+" (default: the study's plot; throughput for a sweep, box for a compare)")
	out := fs.String("o", "", "output `FILE`: .svg (default), .png or .pdf (default RESULT-KIND.svg)")
	fs.StringVar(&ps.X, "x", "", "sweep parameter on the X axis (default: traffic.rate if swept, else the first)")
	fs.StringVar(&ps.Metric, "y", "", "metric to plot (default: rx_pps; heatmap loss_pct; cdf of a sweep: latency, the per-packet or per-transaction histograms merged over seeds, or any metric across seeds; box/cdf of a compare: cpu_busy_pct)")
	fs.StringVar(&ps.Title, "title", "", "chart title")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim plot RESULT.json [--kind "+strings.Join(plotKinds, "|")+"] [-o out.svg] [--x PARAM] [--y METRIC]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	if fs.NArg() != 1 {
		return usagef("plot: one result file expected, got %d", fs.NArg())
	}
	in := fs.Arg(0)
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("plot: %s: %w", in, err)
	}
	var chart plots.Chart
	switch head.Kind {
	case sweep.Kind:
		rep, err := sweep.ReadReport(in)
		if err != nil {
			return err
		}
		if !rep.Complete {
			return fmt.Errorf("plot: %s is a partial result; merge the shards first", in)
		}
		chart, err = plotSweep(rep, ps)
		if err != nil {
			return err
		}
		if ps.Kind == "" {
			ps.Kind = defaultSweepPlot(rep).Kind
		}
	case compareKind:
		var doc compareDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("plot: %s: %w", in, err)
		}
		if ps.Kind == "" {
			ps.Kind = "box"
		}
		chart, err = plotCompare(&doc, ps)
		if err != nil {
			return err
		}
	default:
		return usagef("plot: %s: kind %q, expected a sweep (--json/--save) or compare (--save) result", in, head.Kind)
	}
	if *out == "" {
		*out = strings.TrimSuffix(in, filepath.Ext(in)) + "-" + ps.Kind + ".svg"
	}
	if err := plots.Save(chart, *out, 0, 0); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rxsim plot: wrote %s\n", *out)
	return nil
}

// defaultSweepPlot returns the study's plot or the generic default.
func defaultSweepPlot(rep *sweep.Report) plotSpec {
	if ps, ok := studyPlots[rep.Plan.Scenario]; ok {
		return ps
	}
	return plotSpec{Kind: "throughput"}
}

// plotSweep draws a sweep report.
func plotSweep(rep *sweep.Report, ps plotSpec) (plots.Chart, error) {
	def := defaultSweepPlot(rep)
	if ps.Kind == "" {
		ps.Kind = def.Kind
		if ps.X == "" {
			ps.X = def.X
		}
		if ps.Metric == "" {
			ps.Metric = def.Metric
		}
	}
	title := ps.Title
	if title == "" {
		title = rep.Plan.Scenario
	}
	if ps.Kind == "cdf" && (ps.Metric == "" || ps.Metric == "latency") {
		return latencyCDF(title, rep) // needs no X parameter
	}
	if ps.X == "" {
		ps.X = "traffic.rate"
	}
	xi := paramIndex(rep.Plan.Params, ps.X)
	if xi < 0 {
		if len(rep.Plan.Params) == 0 {
			return nil, usagef("plot: the sweep has no parameters")
		}
		xi = 0
	}
	if ps.Metric == "" {
		switch ps.Kind {
		case "heatmap":
			ps.Metric = "loss_pct"
		case "cdf":
			ps.Metric = "latency"
		default:
			ps.Metric = "rx_pps"
		}
	}
	g := groupPoints(rep, xi)
	switch ps.Kind {
	case "throughput":
		return throughputChart(title, rep, g, xi, ps.Metric)
	case "latency":
		return latencyChart(title, rep, g, xi)
	case "cdf":
		var ss []plots.CDFSeries
		for _, p := range rep.Points {
			ss = append(ss, plots.CDFSeries{Name: p.Label, Samples: p.Stats[ps.Metric].Values})
		}
		return plots.LatencyCDF(title+": "+ps.Metric+" across seeds", ss, plots.Options{XLabel: ps.Metric})
	case "cpu":
		return cpuChart(title, rep)
	case "heatmap":
		return heatChart(title, rep, xi, ps.Metric)
	case "box":
		var gs []plots.Group
		for _, p := range rep.Points {
			gs = append(gs, plots.Group{Name: p.Label, Values: p.Stats[ps.Metric].Values})
		}
		return plots.BoxPlots(title+": "+ps.Metric, gs, plots.Options{YLabel: ps.Metric})
	}
	return nil, usagef("plot: --kind %q, expected one of %s", ps.Kind, strings.Join(plotKinds, ", "))
}

func paramIndex(ps []sweep.Param, key string) int {
	for i, p := range ps {
		if p.Key == key {
			return i
		}
	}
	return -1
}

// seriesGroup is the points of one series: the same values of every
// parameter but the X one, ordered by X.
type seriesGroup struct {
	name   string
	points []sweep.Summary
}

func groupPoints(rep *sweep.Report, xi int) []seriesGroup {
	var out []seriesGroup
	idx := map[string]int{}
	for _, p := range rep.Points {
		var parts []string
		for i, v := range p.Values {
			if i != xi {
				parts = append(parts, rep.Plan.Params[i].Key+"="+sweep.Display(v))
			}
		}
		name := strings.Join(parts, " ")
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, seriesGroup{name: name})
		}
		out[k].points = append(out[k].points, p)
	}
	for i := range out {
		pts := out[i].points
		sort.SliceStable(pts, func(a, b int) bool { return xValue(rep, xi, pts[a]) < xValue(rep, xi, pts[b]) })
	}
	return out
}

// xValue is a point's X coordinate: the offered load in Mpps for
// traffic.rate, the parameter's number otherwise, or its position among
// the parameter's values when it is not a number.
func xValue(rep *sweep.Report, xi int, p sweep.Summary) float64 {
	key := rep.Plan.Params[xi].Key
	if key == "traffic.rate" {
		if s, ok := p.Stats["offered_pps"]; ok {
			return math.Round(s.Center/1e4) / 100 // Mpps to 0.01, a readable tick label
		}
	}
	if v, err := strconv.ParseFloat(sweep.Display(p.Values[xi]), 64); err == nil {
		return v
	}
	for i, v := range rep.Plan.Params[xi].Values {
		if v == p.Values[xi] {
			return float64(i)
		}
	}
	return 0
}

func xLabel(key string) string {
	if key == "traffic.rate" {
		return "offered load (Mpps)"
	}
	return key
}

// isRate reports whether a metric is a packet rate (pkt/s).
func isRate(metric string) bool {
	return strings.HasSuffix(metric, "_pps") || metric == "udp.in_datagrams" || metric == "udp.no_ports" || metric == "udp.rcvbuf_errors"
}

// scale returns the divisor and unit label of a metric (pkt/s in Mpps).
func scale(metric string) (float64, string) {
	if isRate(metric) {
		return 1e6, metric + " (Mpps)"
	}
	return 1, metric
}

func throughputChart(title string, rep *sweep.Report, gs []seriesGroup, xi int, metric string) (plots.Chart, error) {
	div, ylab := scale(metric)
	var ss []plots.Series
	for _, g := range gs {
		s := plots.Series{Name: g.name}
		if s.Name == "" {
			s.Name = metric
		}
		ci := true
		for _, p := range g.points {
			st, ok := p.Stats[metric]
			if !ok {
				return nil, fmt.Errorf("plot: point %s has no metric %s", p.Label, metric)
			}
			s.X = append(s.X, xValue(rep, xi, p))
			s.Y = append(s.Y, st.Center/div)
			if st.Low == nil {
				ci = false
				continue
			}
			s.YErrLow = append(s.YErrLow, *st.Low/div)
			s.YErrHigh = append(s.YErrHigh, *st.High/div)
		}
		if !ci {
			s.YErrLow, s.YErrHigh = nil, nil
		}
		ss = append(ss, s)
	}
	key := rep.Plan.Params[xi].Key
	return plots.ThroughputVsLoad(title, ss, plots.Options{XLabel: xLabel(key), YLabel: ylab,
		Ideal: key == "traffic.rate" && isRate(metric), FullSeries: key != "traffic.rate"})
}

func latencyChart(title string, rep *sweep.Report, gs []seriesGroup, xi int) (plots.Chart, error) {
	var ss []plots.LatencySeries
	for _, g := range gs {
		s := plots.LatencySeries{Name: g.name}
		if s.Name == "" {
			s.Name = "latency"
		}
		for _, p := range g.points {
			for _, q := range []struct {
				m string
				y *[]float64
			}{{"latency_us.p50", &s.P50}, {"latency_us.p90", &s.P90}, {"latency_us.p99", &s.P99}} {
				st, ok := p.Stats[q.m]
				if !ok {
					return nil, fmt.Errorf("plot: point %s has no %s (the scenario has no latency model)", p.Label, q.m)
				}
				*q.y = append(*q.y, st.Center)
			}
			s.Load = append(s.Load, xValue(rep, xi, p))
		}
		ss = append(ss, s)
	}
	return plots.LatencyVsLoad(title, ss, plots.Options{XLabel: xLabel(rep.Plan.Params[xi].Key), YLabel: "latency (µs)"})
}

// cpuClasses maps a result's CPU class labels to the chart's classes.
func cpuClasses(st map[string]sweep.Stat, cpu int) plots.CPUClasses {
	v := func(class string) float64 { return st[fmt.Sprintf("cpu%d.%s_pct", cpu, class)].Center }
	return plots.CPUClasses{HardIRQ: v("hardirq"), SoftIRQ: v("softirq"), Ksoftirqd: v("ksoftirqd"),
		Kthread: v("kthread") + v("napi"), Application: v("app"), Idle: v("idle")}
}

func cpuChart(title string, rep *sweep.Report) (plots.Chart, error) {
	var cs []plots.CPUConfig
	for _, p := range rep.Points {
		c := plots.CPUConfig{Name: p.Label}
		for cpu := 0; ; cpu++ {
			if _, ok := p.Stats[fmt.Sprintf("cpu%d.idle_pct", cpu)]; !ok {
				break
			}
			c.CPUs = append(c.CPUs, cpuClasses(p.Stats, cpu))
		}
		cs = append(cs, c)
	}
	return plots.CPUStack(title, cs, plots.Options{})
}

func heatChart(title string, rep *sweep.Report, xi int, metric string) (plots.Chart, error) {
	if len(rep.Plan.Params) != 2 {
		return nil, usagef("plot: a heat map needs a two-parameter sweep, this one has %d", len(rep.Plan.Params))
	}
	yi := 1 - xi
	px, py := rep.Plan.Params[xi], rep.Plan.Params[yi]
	g := plots.Grid{}
	col := map[string]int{}
	row := map[string]int{}
	for i, v := range px.Values {
		col[v] = i
	}
	for i, v := range py.Values {
		row[v] = i
		g.Z = append(g.Z, make([]float64, len(px.Values)))
	}
	g.X = make([]float64, len(px.Values))
	g.Y = make([]float64, len(py.Values))
	for _, p := range rep.Points {
		c, r := col[p.Values[xi]], row[p.Values[yi]]
		g.X[c] = xValue(rep, xi, p)
		g.Y[r] = xValue(rep, yi, p)
		st, ok := p.Stats[metric]
		if !ok {
			return nil, fmt.Errorf("plot: point %s has no metric %s", p.Label, metric)
		}
		g.Z[r][c] = st.Center
	}
	return plots.HeatMap(title, g, plots.Options{XLabel: xLabel(px.Key), YLabel: xLabel(py.Key), ZLabel: metric})
}

// plotCompare draws a comparison: box plots or CDFs of A and B.
func plotCompare(d *compareDoc, ps plotSpec) (plots.Chart, error) {
	m := ps.Metric
	if m == "" {
		m = "cpu_busy_pct"
	}
	a, b := values(d.A.Runs, m), values(d.B.Runs, m)
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("plot: metric %s is missing on a side of the comparison", m)
	}
	title := ps.Title
	if title == "" {
		title = compareTitle(d)
	}
	switch ps.Kind {
	case "box":
		return plots.BoxPlots(title, []plots.Group{{Name: "A", Values: a}, {Name: "B", Values: b}}, plots.Options{YLabel: m})
	case "cdf":
		return plots.LatencyCDF(title, []plots.CDFSeries{{Name: "A", Samples: a}, {Name: "B", Samples: b}}, plots.Options{XLabel: m})
	}
	return nil, usagef("plot: a compare result draws --kind box or cdf, not %q", ps.Kind)
}

// compareTitle names the two sides briefly: "A: x; B: A --set k=v" when B
// is A with more sets.
func compareTitle(d *compareDoc) string {
	a, b := d.A, d.B
	if a.Scenario == b.Scenario && len(b.Sets) >= len(a.Sets) && slices.Equal(a.Sets, b.Sets[:len(a.Sets)]) {
		extra := b.Sets[len(a.Sets):]
		if len(extra) == 0 {
			return "A: " + a.Scenario + "; B: the same"
		}
		return "A: " + a.Scenario + "; B: A --set " + strings.Join(extra, " --set ")
	}
	return "A: " + a.Scenario + "; B: " + b.Scenario
}

// latencyCDF draws each point's per-packet (or per-transaction) latency
// distribution from the histograms of its replications, merged.
func latencyCDF(title string, rep *sweep.Report) (plots.Chart, error) {
	var ss []plots.CDFSeries
	lo, hi := math.Inf(1), 0.0
	lat := rep.PointLatencies()
	for i, p := range rep.Points {
		h := lat[i]
		if h == nil || len(h.UpperUS) == 0 {
			continue
		}
		// An empty bucket just below the first (bucket width <= 1/128 of
		// the value) starts the step line at fraction 0.
		first := h.UpperUS[0] * (1 - 1.0/128)
		ss = append(ss, plots.CDFSeries{Name: p.Label,
			Bounds: append([]float64{first}, h.UpperUS...), Counts: append([]uint64{0}, h.Counts...)})
		lo, hi = math.Min(lo, first), math.Max(hi, h.UpperUS[len(h.UpperUS)-1])
	}
	if len(ss) == 0 {
		return nil, usagef("plot: --kind cdf: no run of %s measured latency (a model with a socket reader or TCP_RR does); use --y METRIC for a metric's distribution across seeds", rep.Plan.Scenario)
	}
	// A log axis shows the tail when the latencies span a decade or more.
	return plots.LatencyCDF(title+": latency", ss, plots.Options{XLabel: "latency (us)", LogX: hi > 10*lo})
}
