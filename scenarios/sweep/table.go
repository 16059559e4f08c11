package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// DefaultColumns are the metrics the text table shows when they are
// present (the cpumap, UDP and latency ones only with those models).
var DefaultColumns = []string{
	"offered_pps", "rx_pps", "delivered_pps", "loss_pct", "cpumap.drop_pps",
	"latency_us.p99", "cpu_busy_pct", "ns_per_pkt",
}

// Columns returns the metrics of cols that at least one point of r has.
func (r *Report) Columns(cols []string) []string {
	var out []string
	for _, c := range cols {
		for _, p := range r.Points {
			if _, ok := p.Stats[c]; ok {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// MetricNames returns every metric some point of r has, sorted.
func (r *Report) MetricNames() []string { return r.metricNames() }

// WriteText writes the table of a complete Report: one row per point,
// the swept values, n, and for each column the centre ± the half-width of
// its 95% confidence interval in % of the centre.
func (r *Report) WriteText(w io.Writer, cols []string) error {
	if !r.Complete {
		return fmt.Errorf("sweep: the result is incomplete (%d of %d runs); run the missing shards and merge", r.have(), len(r.Plan.Jobs()))
	}
	p := r.Plan
	np := len(r.Points)
	fmt.Fprintf(w, "sweep %s: %d point(s) x %d rep(s), seeds %d..%d", p.Scenario, np, p.Reps, p.Seed, p.Seed+uint64(p.Reps)-1)
	if len(p.Sets) > 0 {
		fmt.Fprintf(w, ", --set %s", strings.Join(p.Sets, " "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "each cell: mean (median for latency) ± 95% CI half-width in % of it; ±? = undefined (n too small)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var hdr []string
	for _, pr := range p.Params {
		hdr = append(hdr, pr.Key)
	}
	hdr = append(hdr, "n")
	hdr = append(hdr, cols...)
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, pt := range r.Points {
		var row []string
		for _, v := range pt.Values {
			row = append(row, Display(v))
		}
		row = append(row, strconv.Itoa(pt.N))
		for _, c := range cols {
			row = append(row, cell(pt.Stats, c))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

func (r *Report) have() int {
	n := 0
	have := map[runKey]bool{}
	for _, run := range r.Runs {
		have[run.key()] = true
	}
	for _, j := range r.Plan.Jobs() {
		if have[runKey{r.Configs[j.Point], j.Seed}] {
			n++
		}
	}
	return n
}

func cell(st map[string]Stat, name string) string {
	s, ok := st[name]
	if !ok {
		return "-"
	}
	if ci := FormatCI(s); ci != "" {
		return Human(s.Center) + " " + ci
	}
	return Human(s.Center)
}

// FormatCI formats the half-width of a Stat's 95% confidence interval in
// % of its centre, "±1.6%"; "±?" when the interval is undefined although
// there are several values, and "" for a single value.
func FormatCI(s Stat) string {
	if s.Low == nil || s.High == nil {
		if len(s.Values) <= 1 {
			return ""
		}
		return "±?"
	}
	return "±" + pct((*s.High-*s.Low)/2, s.Center)
}

func pct(half, center float64) string {
	if center == 0 {
		if half == 0 {
			return "0%"
		}
		return "?"
	}
	p := 100 * half / math.Abs(center)
	switch {
	case p == 0:
		return "0%"
	case p < 0.05:
		return "<0.1%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// Human formats v with four significant digits and an SI suffix (k, M,
// G), as benchstat does: 14880952 is "14.88M", 0.5123 is "0.5123".
func Human(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	a := math.Abs(v)
	suffix := ""
	switch {
	case a >= 1e9:
		v, suffix = v/1e9, "G"
	case a >= 1e6:
		v, suffix = v/1e6, "M"
	case a >= 1e4:
		v, suffix = v/1e3, "k"
	}
	prec := 3
	for _, lim := range []float64{10, 100, 1000} {
		if math.Abs(v) < lim {
			break
		}
		prec--
	}
	if math.Abs(v) < 1 {
		prec = 4
	}
	if v == 0 {
		prec = 0
	}
	out := strconv.FormatFloat(v, 'f', max(prec, 0), 64)
	// Rounding can reach the next decade (99.999 -> "100.00"): drop a digit.
	if r, _ := strconv.ParseFloat(out, 64); prec > 0 && math.Abs(v) >= 1 && digitsBefore(r) > digitsBefore(v) {
		out = strconv.FormatFloat(v, 'f', prec-1, 64)
	}
	return out + suffix
}

func digitsBefore(v float64) int {
	n := 1
	for a := math.Abs(v); a >= 10; a /= 10 {
		n++
	}
	return n
}

// WriteCSV writes one row per point of a complete Report: the index, the
// swept values, n, then for every metric its centre and the low and high
// ends of the 95% CI (empty when undefined). Metrics are sorted by name.
func (r *Report) WriteCSV(w io.Writer) error {
	if !r.Complete {
		return fmt.Errorf("sweep: the result is incomplete (%d of %d runs)", r.have(), len(r.Plan.Jobs()))
	}
	names := r.metricNames()
	cw := csv.NewWriter(w)
	hdr := []string{"point"}
	for _, p := range r.Plan.Params {
		hdr = append(hdr, p.Key)
	}
	hdr = append(hdr, "n")
	for _, n := range names {
		hdr = append(hdr, n, n+"_ci_low", n+"_ci_high")
	}
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, pt := range r.Points {
		row := []string{strconv.Itoa(pt.Index)}
		for _, v := range pt.Values {
			row = append(row, Display(v))
		}
		row = append(row, strconv.Itoa(pt.N))
		for _, n := range names {
			s, ok := pt.Stats[n]
			if !ok {
				row = append(row, "", "", "")
				continue
			}
			row = append(row, num(s.Center), optNum(s.Low), optNum(s.High))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func (r *Report) metricNames() []string {
	seen := map[string]bool{}
	var ms []Metrics
	for _, p := range r.Points {
		m := Metrics{}
		for k := range p.Stats {
			if !seen[k] {
				seen[k] = true
				m[k] = 0
			}
		}
		ms = append(ms, m)
	}
	return Names(ms...)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func optNum(v *float64) string {
	if v == nil {
		return ""
	}
	return num(*v)
}
