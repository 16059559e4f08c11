package plots

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// LatencySeries holds latency percentiles against offered load for one
// configuration. Each percentile slice is optional (nil omits its line)
// and otherwise has the length of Load; at least one must be given.
type LatencySeries struct {
	Name          string    // legend label prefix, e.g. "cpumap"
	Load          []float64 // offered load, strictly increasing
	P50, P90, P99 []float64 // latency percentiles at each load
}

// LatencyVsLoad draws latency percentiles against offered load: one line
// per percentile per series, coloured by series and dashed by percentile
// (P50 solid, P90 dashed, P99 dotted), labelled "name P50" and so on.
// opts.LogX and opts.LogY select logarithmic axes.
func LatencyVsLoad(title string, series []LatencySeries, opts Options) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("plots: LatencyVsLoad: no series")
	}
	type pct struct {
		label string
		y     []float64
	}
	pcts := func(s LatencySeries) []pct {
		return []pct{{"P50", s.P50}, {"P90", s.P90}, {"P99", s.P99}}
	}
	for i, s := range series {
		name := seriesName(s.Name, i)
		if len(s.Load) == 0 {
			return nil, fmt.Errorf("plots: series %s: Load is empty", name)
		}
		if err := checkFinite(name, "Load", s.Load); err != nil {
			return nil, err
		}
		if err := checkIncreasing(name, "Load", s.Load); err != nil {
			return nil, err
		}
		if opts.LogX {
			if err := checkPositive(name, "Load", s.Load); err != nil {
				return nil, err
			}
		}
		n := 0
		for _, q := range pcts(s) {
			if q.y == nil {
				continue
			}
			n++
			if len(q.y) != len(s.Load) {
				return nil, fmt.Errorf("plots: series %s: %s has %d values, Load has %d", name, q.label, len(q.y), len(s.Load))
			}
			if err := checkFinite(name, q.label, q.y); err != nil {
				return nil, err
			}
			if opts.LogY {
				if err := checkPositive(name, q.label, q.y); err != nil {
					return nil, err
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("plots: series %s: none of P50, P90, P99 is given", name)
		}
	}
	p := newPlot(title)
	p.X.Label.Text = label(opts.XLabel, "offered load")
	p.Y.Label.Text = label(opts.YLabel, "latency")
	if opts.LogX {
		setLogX(p)
	}
	if opts.LogY {
		setLogY(p)
	}
	for i, s := range series {
		for k, q := range pcts(s) {
			if q.y == nil {
				continue
			}
			line, points, err := plotter.NewLinePoints(xys(s.Load, q.y))
			if err != nil {
				return nil, fmt.Errorf("plots: series %s: %s: %w", seriesName(s.Name, i), q.label, err)
			}
			c := plotutil.Color(i)
			line.Color, points.Color = c, c
			line.Dashes = plotutil.Dashes(k)
			points.Shape = plotutil.Shape(i)
			p.Add(line, points)
			p.Legend.Add(s.Name+" "+q.label, line, points)
		}
	}
	if !opts.LogY {
		p.Y.Min = min(0, p.Y.Min)
	}
	return p, nil
}

// MaxCDFSteps is the most steps LatencyCDF draws for a series given as
// samples; larger samples are thinned to evenly spaced ranks (always
// keeping the largest value), which changes the curve by less than
// 1/MaxCDFSteps in cumulative fraction.
const MaxCDFSteps = 4096

// CDFSeries is one latency distribution, given either as raw samples or
// as a histogram, not both.
type CDFSeries struct {
	// Name labels the series in the legend.
	Name string

	// Samples are individual latencies, in any order.
	Samples []float64

	// Bounds are histogram bucket upper bounds, strictly increasing; the
	// last may be +Inf (an overflow bucket, counted in the total but not
	// drawn). Counts[i] is the number of values in (Bounds[i−1], Bounds[i]].
	Bounds []float64
	Counts []uint64
}

// LatencyCDF draws the empirical cumulative distribution of each series
// as a step line (plotter.PostStep), with the cumulative fraction of
// values ≤ x on the Y axis. For a histogram the steps are at the bucket
// upper bounds, so the line is a lower bound of the true CDF within each
// bucket. opts.LogX selects a logarithmic latency axis, which shows the
// tail; values must then be positive.
func LatencyCDF(title string, series []CDFSeries, opts Options) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("plots: LatencyCDF: no series")
	}
	curves := make([]plotter.XYs, len(series))
	for i, s := range series {
		pts, err := cdfPoints(s, i, opts.LogX)
		if err != nil {
			return nil, err
		}
		curves[i] = pts
	}
	p := newPlot(title)
	p.Legend.Left = false
	p.Legend.Top = false
	p.X.Label.Text = label(opts.XLabel, "latency")
	p.Y.Label.Text = label(opts.YLabel, "fraction ≤ latency")
	if opts.LogX {
		setLogX(p)
	}
	for i, s := range series {
		line, err := plotter.NewLine(curves[i])
		if err != nil {
			return nil, fmt.Errorf("plots: series %s: %w", seriesName(s.Name, i), err)
		}
		line.StepStyle = plotter.PostStep
		line.Color = plotutil.Color(i)
		p.Add(line)
		p.Legend.Add(s.Name, line)
	}
	p.Y.Min, p.Y.Max = 0, 1
	return p, nil
}

func cdfPoints(s CDFSeries, idx int, logX bool) (plotter.XYs, error) {
	name := seriesName(s.Name, idx)
	hasSamples := len(s.Samples) > 0
	hasHist := len(s.Bounds) > 0 || len(s.Counts) > 0
	switch {
	case hasSamples && hasHist:
		return nil, fmt.Errorf("plots: series %s: both Samples and Bounds/Counts are given", name)
	case !hasSamples && !hasHist:
		return nil, fmt.Errorf("plots: series %s: neither Samples nor Bounds/Counts is given", name)
	}
	if hasSamples {
		if err := checkFinite(name, "Samples", s.Samples); err != nil {
			return nil, err
		}
		if logX {
			if err := checkPositive(name, "Samples", s.Samples); err != nil {
				return nil, err
			}
		}
		x := slices.Clone(s.Samples)
		slices.Sort(x)
		n := len(x)
		step := max(1, (n+MaxCDFSteps-1)/MaxCDFSteps)
		pts := plotter.XYs{{X: x[0], Y: 0}}
		for i := step - 1; ; i += step {
			i = min(i, n-1)
			// Skip to the last of a run of equal values.
			for i+1 < n && x[i+1] == x[i] {
				i++
			}
			pts = append(pts, plotter.XY{X: x[i], Y: float64(i+1) / float64(n)})
			if i == n-1 {
				break
			}
		}
		return pts, nil
	}
	if len(s.Counts) != len(s.Bounds) {
		return nil, fmt.Errorf("plots: series %s: Counts has %d values, Bounds has %d", name, len(s.Counts), len(s.Bounds))
	}
	for i, b := range s.Bounds {
		last := i == len(s.Bounds)-1
		if math.IsNaN(b) || math.IsInf(b, -1) || (math.IsInf(b, 1) && !last) {
			return nil, fmt.Errorf("plots: series %s: Bounds[%d] is %v", name, i, b)
		}
		if i > 0 && !(b > s.Bounds[i-1]) {
			return nil, fmt.Errorf("plots: series %s: Bounds is not strictly increasing at %d (%g after %g)", name, i, b, s.Bounds[i-1])
		}
		if logX && !(b > 0) {
			return nil, fmt.Errorf("plots: series %s: Bounds[%d] = %g is not positive (log axis)", name, i, b)
		}
	}
	var total uint64
	for _, c := range s.Counts {
		total += c
	}
	if total == 0 {
		return nil, fmt.Errorf("plots: series %s: Counts are all zero", name)
	}
	var pts plotter.XYs
	var cum uint64
	for i, b := range s.Bounds {
		cum += s.Counts[i]
		if math.IsInf(b, 1) {
			break
		}
		pts = append(pts, plotter.XY{X: b, Y: float64(cum) / float64(total)})
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("plots: series %s: only an overflow bucket", name)
	}
	return pts, nil
}
