package plots

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// DefaultSaturationTol is the default relative tolerance of SaturationIndex.
const DefaultSaturationTol = 0.01

// SaturationIndex returns the index of the last point to draw for a
// throughput series y (ordered by increasing offered load): the first
// point whose throughput is within tol of the series' maximum,
// y[i] ≥ max(y) − tol·|max(y)|. The points after it add only the flat
// part of the curve, or its fall under overload (livelock), which the XDP
// paper's charts leave out ("each line stops at the method's maximum
// processing capacity"). A series that keeps rising ends at its last point
// (or, with points closer together than tol, slightly before it). tol ≤ 0
// means DefaultSaturationTol. It returns -1 for an empty y and len(y)−1
// when max(y) ≤ 0.
func SaturationIndex(y []float64, tol float64) int {
	if len(y) == 0 {
		return -1
	}
	if tol <= 0 {
		tol = DefaultSaturationTol
	}
	maxY := y[0]
	for _, v := range y[1:] {
		maxY = max(maxY, v)
	}
	if maxY <= 0 {
		return len(y) - 1
	}
	lim := maxY - tol*maxY
	for i, v := range y {
		if v >= lim {
			return i
		}
	}
	return len(y) - 1 // unreachable for finite y
}

// ThroughputVsLoad draws throughput against offered load, one line with
// points per series. Each series ends at its saturation point
// (SaturationIndex with opts.SaturationTol) unless opts.FullSeries is set;
// series with YErrLow/YErrHigh get error bars; opts.Ideal adds the
// diagonal y = x. Both axes start at 0.
func ThroughputVsLoad(title string, series []Series, opts Options) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("plots: ThroughputVsLoad: no series")
	}
	for i, s := range series {
		if err := checkSeries(s, i); err != nil {
			return nil, err
		}
	}
	p := newPlot(title)
	p.X.Label.Text = label(opts.XLabel, "offered load")
	p.Y.Label.Text = label(opts.YLabel, "throughput")
	for i, s := range series {
		end := len(s.Y) - 1
		if !opts.FullSeries {
			end = SaturationIndex(s.Y, opts.SaturationTol)
		}
		pts := xys(s.X[:end+1], s.Y[:end+1])
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("plots: series %s: %w", seriesName(s.Name, i), err)
		}
		c := plotutil.Color(i)
		line.Color = c
		points.Color = c
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		if s.YErrLow != nil {
			e := make(plotter.YErrors, end+1)
			for k := range e {
				e[k].Low, e[k].High = s.Y[k]-s.YErrLow[k], s.YErrHigh[k]-s.Y[k]
			}
			bars, err := plotter.NewYErrorBars(yErrPoints{pts, e})
			if err != nil {
				return nil, fmt.Errorf("plots: series %s: %w", seriesName(s.Name, i), err)
			}
			bars.Color = c
			bars.CapWidth = vg.Points(4)
			p.Add(bars)
		}
	}
	p.X.Min = min(0, p.X.Min)
	p.Y.Min = min(0, p.Y.Min)
	if opts.Ideal {
		f := plotter.NewFunction(func(x float64) float64 { return x })
		f.Samples = 2 // a straight line
		f.Color = gray
		f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(f)
		p.Legend.Add("ideal (y = x)", f)
	}
	return p, nil
}

// yErrPoints joins points and their Y errors for plotter.NewYErrorBars.
type yErrPoints struct {
	plotter.XYs
	plotter.YErrors
}
