package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Group is one distribution of a box plot, such as a metric's values
// across the seeds of side A of a comparison.
type Group struct {
	Name   string    // axis label of the box
	Values []float64 // the observations; at least one
}

// BoxPlots draws one Tukey box plot (plotter.NewBoxPlot: median,
// quartiles, whiskers to the most extreme values within 1.5 IQR, outliers
// as points) per group, side by side in input order. For an A/B
// comparison pass the two sides as two groups.
func BoxPlots(title string, groups []Group, opts Options) (*plot.Plot, error) {
	if len(groups) == 0 {
		return nil, errors.New("plots: BoxPlots: no groups")
	}
	for i, g := range groups {
		name := seriesName(g.Name, i)
		if len(g.Values) == 0 {
			return nil, fmt.Errorf("plots: group %s: Values is empty", name)
		}
		for k, v := range g.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("plots: group %s: Values[%d] is %v", name, k, v)
			}
		}
	}
	width := opts.BarWidth
	if width <= 0 {
		width = vg.Points(max(10, min(40, 240/float64(len(groups)))))
	}
	p := newPlot(title)
	p.X.Label.Text = label(opts.XLabel, "")
	p.Y.Label.Text = label(opts.YLabel, "")
	names := make([]string, len(groups))
	for i, g := range groups {
		b, err := plotter.NewBoxPlot(width, float64(i), plotter.Values(g.Values))
		if err != nil {
			return nil, fmt.Errorf("plots: group %s: %w", seriesName(g.Name, i), err)
		}
		b.FillColor = lighten(plotutil.Color(i))
		p.Add(b)
		names[i] = g.Name
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	return p, nil
}

// lighten mixes c halfway with white, for box fills.
func lighten(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8 + 255) / 2) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}
