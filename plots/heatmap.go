package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Grid is the result of a two-parameter sweep, such as drop rate over
// cpumap qsize × offered load.
type Grid struct {
	// X and Y are the parameter values along the columns and the rows,
	// drawn in the order given, evenly spaced whatever their values (so
	// that power-of-two sweeps read well), and labelled with the values.
	X, Y []float64

	// Z[r][c] is the value at (X[c], Y[r]); NaN marks a missing point,
	// drawn in the NaN colour (white).
	Z [][]float64
}

// HeatMapFigure is a heat map with its colour bar on the right. It
// implements Chart.
type HeatMapFigure struct {
	Map      *plot.Plot // the heat map
	Bar      *plot.Plot // the colour bar, drawn to the right of Map
	BarWidth vg.Length  // width reserved for Bar, including its axis
}

// Draw draws the heat map and, beside it, the colour bar aligned with the
// map's data area.
func (f *HeatMapFigure) Draw(c draw.Canvas) {
	split := c.Max.X - f.BarWidth
	left := c
	left.Max.X = split
	f.Map.Draw(left)
	da := f.Map.DataCanvas(left)
	right := c
	right.Min.X = split + vg.Points(6)
	right.Min.Y, right.Max.Y = da.Min.Y, da.Max.Y
	f.Bar.Draw(right)
}

// HeatMap draws a two-parameter sweep as a heat map (plotter.HeatMap)
// with a viridis-like palette (perceptually uniform luminance, from dark
// purple for low values to yellow for high ones; missing points are
// white) and a vertical colour bar (plotter.ColorBar) labelled opts.ZLabel.
// opts.XLabel and opts.YLabel name the two parameters.
func HeatMap(title string, g Grid, opts Options) (*HeatMapFigure, error) {
	if len(g.X) == 0 || len(g.Y) == 0 {
		return nil, errors.New("plots: HeatMap: X and Y must not be empty")
	}
	if len(g.Z) != len(g.Y) {
		return nil, fmt.Errorf("plots: HeatMap: Z has %d rows, Y has %d values", len(g.Z), len(g.Y))
	}
	zmin, zmax := math.Inf(1), math.Inf(-1)
	for r, row := range g.Z {
		if len(row) != len(g.X) {
			return nil, fmt.Errorf("plots: HeatMap: Z[%d] has %d values, X has %d", r, len(row), len(g.X))
		}
		for c, z := range row {
			if math.IsInf(z, 0) {
				return nil, fmt.Errorf("plots: HeatMap: Z[%d][%d] is %v", r, c, z)
			}
			if !math.IsNaN(z) {
				zmin, zmax = min(zmin, z), max(zmax, z)
			}
		}
	}
	for _, v := range []struct {
		field string
		vals  []float64
	}{{"X", g.X}, {"Y", g.Y}} {
		for i, x := range v.vals {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("plots: HeatMap: %s[%d] is %v", v.field, i, x)
			}
		}
	}
	if zmin > zmax {
		return nil, errors.New("plots: HeatMap: Z has no values (all NaN)")
	}
	if zmin == zmax { // a flat grid still needs a colour range
		zmin, zmax = zmin-0.5, zmax+0.5
	}

	cm, err := moreland.NewLuminance(viridis)
	if err != nil {
		panic(err) // the control colours are fixed
	}
	cm.SetMin(zmin)
	cm.SetMax(zmax)
	const ncolors = 64
	h := plotter.NewHeatMap(indexGrid{g}, cm.Palette(ncolors))
	h.Min, h.Max = zmin, zmax
	h.NaN = color.White

	m := plot.New()
	m.Title.Text = title
	m.X.Label.Text = opts.XLabel
	m.Y.Label.Text = opts.YLabel
	m.Add(h)
	m.X.Tick.Marker = valueTicks(g.X)
	m.Y.Tick.Marker = valueTicks(g.Y)
	m.X.Padding, m.Y.Padding = 0, 0
	m.X.Min, m.X.Max = -0.5, float64(len(g.X))-0.5
	m.Y.Min, m.Y.Max = -0.5, float64(len(g.Y))-0.5

	b := plot.New()
	b.HideX()
	b.X.Padding, b.Y.Padding = 0, 0
	b.Y.Label.Text = opts.ZLabel
	b.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: ncolors})
	return &HeatMapFigure{Map: m, Bar: b, BarWidth: vg.Points(72)}, nil
}

// indexGrid places cell (c, r) at (c, r), so cells are evenly spaced.
type indexGrid struct{ g Grid }

func (ig indexGrid) Dims() (c, r int)   { return len(ig.g.X), len(ig.g.Y) }
func (ig indexGrid) Z(c, r int) float64 { return ig.g.Z[r][c] }
func (ig indexGrid) X(c int) float64    { return float64(c) }
func (ig indexGrid) Y(r int) float64    { return float64(r) }

var _ plotter.GridXYZ = indexGrid{}

// valueTicks labels index positions with the parameter values.
func valueTicks(vals []float64) plot.ConstantTicks {
	t := make(plot.ConstantTicks, len(vals))
	for i, v := range vals {
		t[i] = plot.Tick{Value: float64(i), Label: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return t
}

// viridis holds control colours of matplotlib's viridis colour map
// (van der Walt and Smith, 2015), whose luminance rises monotonically.
var viridis = []color.Color{
	color.RGBA{R: 0x44, G: 0x01, B: 0x54, A: 0xff},
	color.RGBA{R: 0x3b, G: 0x52, B: 0x8b, A: 0xff},
	color.RGBA{R: 0x21, G: 0x91, B: 0x8c, A: 0xff},
	color.RGBA{R: 0x5e, G: 0xc9, B: 0x62, A: 0xff},
	color.RGBA{R: 0xfd, G: 0xe7, B: 0x25, A: 0xff},
}
