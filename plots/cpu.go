package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CPUClasses is one CPU's time split by the class of work that ran on it,
// in percent of the measured interval (0–100). The classes are those of
// rxsim's scheduler; Kthread covers cpumap kthreads and threaded NAPI.
type CPUClasses struct {
	HardIRQ     float64 // hard interrupt handlers
	SoftIRQ     float64 // softirq run at IRQ exit (NET_RX in net_rx_action)
	Ksoftirqd   float64 // softirq deferred to ksoftirqd
	Kthread     float64 // kernel threads (cpumap kthread, NAPI threads)
	Application float64 // the receiving application
	Idle        float64 // idle time
}

func (c CPUClasses) values() [numClasses]float64 {
	return [numClasses]float64{c.HardIRQ, c.SoftIRQ, c.Ksoftirqd, c.Kthread, c.Application, c.Idle}
}

const numClasses = 6

// classNames and classColors are in stacking order, bottom to top.
var (
	classNames  = [numClasses]string{"hardirq", "softirq", "ksoftirqd", "kthread", "application", "idle"}
	classColors = [numClasses]color.Color{
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // hardirq: red
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // softirq: orange
		color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // ksoftirqd: olive
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // kthread: blue
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // application: green
		color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}, // idle: light grey
	}
)

// CPUConfig is the per-CPU utilisation of one configuration.
type CPUConfig struct {
	// Name labels the configuration's bars when several are grouped;
	// it may be empty when there is only one configuration.
	Name string

	// CPUs holds one entry per CPU, in CPU order.
	CPUs []CPUClasses

	// Labels, if not nil, names each CPU on the axis ("cpu0", "cpu1", …
	// by default). Only the first configuration's labels are used.
	Labels []string
}

// CPUStack draws per-CPU utilisation as stacked bars, one segment per
// class (hardirq, softirq, ksoftirqd, kthread, application, idle, from
// the bottom), with a legend of the classes. Several configurations are
// grouped by CPU: for each CPU one bar per configuration, in input order,
// labelled with the CPU and the configuration name. All configurations
// must have the same number of CPUs. Values are percentages: each must be
// non-negative and a CPU's classes must not sum to more than 100 (with a
// 0.5 allowance for rounding).
//
// The legend is drawn to the right of the bars, outside the data area, so
// the result is a *Figure rather than a *plot.Plot.
func CPUStack(title string, configs []CPUConfig, opts Options) (*Figure, error) {
	if len(configs) == 0 {
		return nil, errors.New("plots: CPUStack: no configurations")
	}
	ncpu := len(configs[0].CPUs)
	for j, cfg := range configs {
		name := fmt.Sprintf("%d (%q)", j, cfg.Name)
		if len(cfg.CPUs) == 0 {
			return nil, fmt.Errorf("plots: configuration %s: CPUs is empty", name)
		}
		if len(cfg.CPUs) != ncpu {
			return nil, fmt.Errorf("plots: configuration %s: CPUs has %d entries, configuration 0 has %d", name, len(cfg.CPUs), ncpu)
		}
		if cfg.Labels != nil && len(cfg.Labels) != ncpu {
			return nil, fmt.Errorf("plots: configuration %s: Labels has %d entries, CPUs has %d", name, len(cfg.Labels), ncpu)
		}
		for i, c := range cfg.CPUs {
			var sum float64
			for k, v := range c.values() {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					return nil, fmt.Errorf("plots: configuration %s: cpu %d: %s = %v, want a percentage ≥ 0", name, i, classNames[k], v)
				}
				sum += v
			}
			if sum > 100.5 {
				return nil, fmt.Errorf("plots: configuration %s: cpu %d: classes sum to %.1f%%, more than 100%%", name, i, sum)
			}
		}
	}

	// Slot s holds the bar of CPU s/stride for configuration s%stride;
	// the last slot of each group is an empty gap when grouping.
	nc := len(configs)
	stride := nc
	if nc > 1 {
		stride = nc + 1
	}
	nslots := ncpu*stride - (stride - nc)
	width := opts.BarWidth
	if width <= 0 {
		width = vg.Points(max(4, min(30, 320/float64(nslots))))
	}

	p := newPlot(title)
	p.X.Label.Text = label(opts.XLabel, "")
	p.Y.Label.Text = label(opts.YLabel, "CPU time (%)")
	var below *plotter.BarChart
	bars := make([]*plotter.BarChart, numClasses)
	for k := range numClasses {
		vals := make(plotter.Values, nslots)
		for j, cfg := range configs {
			for i, c := range cfg.CPUs {
				vals[i*stride+j] = c.values()[k]
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("plots: CPUStack: %w", err)
		}
		b.Color = classColors[k]
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		bars[k] = b
		p.Add(b)
	}
	// Legend from the top of the stack down, as the bars read.
	legend := plot.NewLegend()
	legend.Top = true
	for k := numClasses - 1; k >= 0; k-- {
		legend.Add(classNames[k], bars[k])
	}

	labels := configs[0].Labels
	var ticks []plot.Tick
	for i := range ncpu {
		cpu := fmt.Sprintf("cpu%d", i)
		if labels != nil {
			cpu = labels[i]
		}
		for j, cfg := range configs {
			l := cpu
			if nc > 1 {
				l = cpu + "\n" + cfg.Name
			}
			ticks = append(ticks, plot.Tick{Value: float64(i*stride + j), Label: l})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Length = 0
	p.X.Min, p.X.Max = -0.5, float64(nslots)-0.5
	p.Y.Min = 0
	p.Y.Max = max(100, p.Y.Max)
	return &Figure{Plot: p, Legend: legend}, nil
}
