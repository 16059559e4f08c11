package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart is a drawable chart: a *plot.Plot or a *HeatMapFigure.
type Chart interface {
	// Draw draws the chart on the canvas.
	Draw(c draw.Canvas)
}

var (
	_ Chart = (*plot.Plot)(nil)
	_ Chart = (*Figure)(nil)
	_ Chart = (*HeatMapFigure)(nil)
)

// Figure is a plot whose legend is drawn outside its data area, on the
// right, so that it never hides data. It implements Chart.
type Figure struct {
	Plot   *plot.Plot
	Legend plot.Legend // drawn at the right edge, top-aligned with the data area
}

// Draw draws the legend at the right edge of c and the plot in the rest.
func (f *Figure) Draw(c draw.Canvas) {
	r := f.Legend.Rectangle(c)
	w := r.Max.X - r.Min.X
	pc := draw.Crop(c, 0, -w-legendGap, 0, 0)
	f.Plot.Draw(pc)
	l := f.Legend
	// Align the legend's top with the top of the data area, below the title.
	l.YOffs += f.Plot.DataCanvas(pc).Max.Y - c.Max.Y
	l.Draw(c)
}

// legendGap separates an outside legend from the plot.
const legendGap = 3 * vg.Millimeter

// Series is one line of an X/Y chart, such as throughput against offered
// load for one configuration.
type Series struct {
	// Name labels the series in the legend.
	Name string

	// X and Y are the coordinates of the points; X must be strictly
	// increasing.
	X, Y []float64

	// YErrLow and YErrHigh, if not nil, are the lower and upper ends of
	// an error bar at each point (for example a 95% confidence interval
	// across seeds), in data units, not offsets from Y. Both must be
	// given, with the length of X, and YErrLow[i] ≤ Y[i] ≤ YErrHigh[i].
	YErrLow, YErrHigh []float64
}

// Options adjusts a chart. The zero value gives each chart's defaults;
// fields that a chart does not use are ignored.
type Options struct {
	// XLabel, YLabel override the chart's default axis labels.
	XLabel, YLabel string

	// ZLabel labels the colour bar of a HeatMap.
	ZLabel string

	// LogX uses a logarithmic X axis (LatencyVsLoad, LatencyCDF). All
	// X values must then be positive.
	LogX bool

	// LogY uses a logarithmic Y axis (LatencyVsLoad). All Y values must
	// then be positive.
	LogY bool

	// Ideal draws the ideal diagonal y = x (ThroughputVsLoad), for charts
	// whose axes share a unit.
	Ideal bool

	// FullSeries draws every point of a ThroughputVsLoad series instead
	// of stopping at its saturation point.
	FullSeries bool

	// SaturationTol is the relative tolerance of the saturation rule
	// (ThroughputVsLoad); 0 means DefaultSaturationTol.
	SaturationTol float64

	// BarWidth is the width of bars (CPUStack) and boxes (BoxPlots);
	// 0 chooses one from the number of bars.
	BarWidth vg.Length
}

func label(override, def string) string {
	if override != "" {
		return override
	}
	return def
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Legend.Top = true
	p.Legend.Left = true
	return p
}

// checkSeries validates one series; kind names the input in errors
// ("series"), idx its position.
func checkSeries(s Series, idx int) error {
	name := seriesName(s.Name, idx)
	if len(s.X) == 0 {
		return fmt.Errorf("plots: series %s: X is empty", name)
	}
	if err := checkLen(name, "Y", len(s.Y), len(s.X)); err != nil {
		return err
	}
	if (s.YErrLow == nil) != (s.YErrHigh == nil) {
		return fmt.Errorf("plots: series %s: YErrLow and YErrHigh must be given together", name)
	}
	if s.YErrLow != nil {
		if err := checkLen(name, "YErrLow", len(s.YErrLow), len(s.X)); err != nil {
			return err
		}
		if err := checkLen(name, "YErrHigh", len(s.YErrHigh), len(s.X)); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		field string
		v     []float64
	}{{"X", s.X}, {"Y", s.Y}, {"YErrLow", s.YErrLow}, {"YErrHigh", s.YErrHigh}} {
		if err := checkFinite(name, f.field, f.v); err != nil {
			return err
		}
	}
	if err := checkIncreasing(name, "X", s.X); err != nil {
		return err
	}
	for i := range s.YErrLow {
		if !(s.YErrLow[i] <= s.Y[i] && s.Y[i] <= s.YErrHigh[i]) {
			return fmt.Errorf("plots: series %s: error bar %d [%g, %g] does not contain Y=%g",
				name, i, s.YErrLow[i], s.YErrHigh[i], s.Y[i])
		}
	}
	return nil
}

func seriesName(name string, idx int) string {
	return fmt.Sprintf("%d (%q)", idx, name)
}

func checkLen(name, field string, got, want int) error {
	if got != want {
		return fmt.Errorf("plots: series %s: %s has %d values, X has %d", name, field, got, want)
	}
	return nil
}

func checkFinite(name, field string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("plots: series %s: %s[%d] is %v", name, field, i, x)
		}
	}
	return nil
}

func checkPositive(name, field string, v []float64) error {
	for i, x := range v {
		if !(x > 0) {
			return fmt.Errorf("plots: series %s: %s[%d] = %g is not positive (log axis)", name, field, i, x)
		}
	}
	return nil
}

func checkIncreasing(name, field string, v []float64) error {
	for i := 1; i < len(v); i++ {
		if !(v[i] > v[i-1]) {
			return fmt.Errorf("plots: series %s: %s is not strictly increasing at %d (%g after %g)",
				name, field, i, v[i], v[i-1])
		}
	}
	return nil
}

func xys(x, y []float64) plotter.XYs {
	pts := make(plotter.XYs, len(x))
	for i := range x {
		pts[i].X, pts[i].Y = x[i], y[i]
	}
	return pts
}

func setLogX(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
}

func setLogY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
}

// gray is the colour of reference lines.
var (
	gray  = color.Gray{Y: 128}
	white = color.White
)
