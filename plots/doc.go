// Package plots draws rxsim's charts with gonum.org/v1/plot: throughput
// and latency against offered load, latency CDFs, per-CPU utilisation
// stacked by class, heat maps of two-parameter sweeps and A/B box plots.
//
// The package knows nothing about the simulator: its inputs are small
// value types (Series, LatencySeries, CDFSeries, CPUConfig, Grid, Group)
// that the CLI fills from sweep and compare results. Each chart function
// validates its input up front and returns an error prefixed with
// "plots: " that names the series and field at fault; it never panics on
// bad data.
//
// # Output
//
// Chart functions return a Chart (a *plot.Plot, or a *HeatMapFigure for
// heat maps with their colour bar). Save writes a Chart to a file, choosing
// the format from the extension: .svg (also the default when there is no
// extension), .png or .pdf. Save renders in memory first and replaces the
// file atomically, so a failed call leaves no half-written file. Write
// renders to an io.Writer.
//
// SVG output is deterministic: the same input gives byte-identical files
// on every run (fonts are referenced by name, not embedded; the colour bar
// of a heat map is an embedded PNG, which Go encodes deterministically).
// gonum/plot shares its own SVG goldens across architectures. PNG output is rasterised and may differ in its pixels between
// platforms; PDF output embeds its creation time. Golden tests therefore
// compare SVG only.
//
// # Conventions
//
// Throughput charts follow the XDP paper (Høiland-Jørgensen et al.,
// CoNEXT 2018): "each line stops at the method's maximum processing
// capacity". See SaturationIndex for the rule. Series colours come from
// plotutil.Color in input order; CPU classes always use the same colours.
package plots
