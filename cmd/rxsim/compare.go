package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/scenarios/sweep"
	"github.com/rxsim/rxsim/sim/stats"
)

// compareKind identifies a compare result document.
const compareKind = "rxsim-compare"

// compareMetrics are the metrics compare reports, in order, when present.
var compareMetrics = []string{
	"offered_pps", "rx_pps", "delivered_pps", "loss_pct", "cpumap.drop_pps",
	"cpu_busy_pct", "ns_per_pkt", "irqs_per_sec", "pkts_per_poll", "time_squeeze_per_sec",
	"cpumap.bulk_avg", "udp.in_datagrams", "latency_us.p50", "latency_us.p90", "latency_us.p99",
	"goodput_gbps", "transactions_per_sec", "acks_per_sec", "tcp.segs_per_skb", "gro.merged_per_super_skb",
}

// costMetrics are the CPU-cost metrics compared when throughput is pinned at a ceiling.
var costMetrics = []string{"cpu_busy_pct", "ns_per_pkt"}

// ceilinged maps a throughput metric to the metric that bounds it.
var ceilinged = map[string]string{"rx_pps": "offered_pps", "delivered_pps": "offered_pps"}

// compareConfig is one A/B comparison.
type compareConfig struct {
	A, B      string   // scenario names or files
	Both      []string // --both: sets for both sides (after --duration)
	SetsB     []string // --set: sets for B only
	Reps      int
	Seed      uint64 // 0: A's scenario seed
	Paired    bool   // B uses A's seeds (common random numbers)
	MinEffect float64
	Workers   int
	Metrics   []string
	// Progress, if not nil, is called once per finished replication.
	Progress func()
}

// compareSide is one side of a comparison.
type compareSide struct {
	Scenario string          `json:"scenario"`
	Sets     []string        `json:"sets,omitempty"`
	Seeds    []uint64        `json:"seeds"`
	Runs     []sweep.Metrics `json:"runs"`
}

// compareRow is one metric's comparison.
type compareRow struct {
	Metric string     `json:"metric"`
	Test   string     `json:"test"` // welch or mann-whitney
	A      sweep.Stat `json:"a"`
	B      sweep.Stat `json:"b"`
	P      *float64   `json:"p,omitempty"`
	Delta  string     `json:"delta"`
	// Notes are footnote numbers (1-based indexes into compareDoc.Notes).
	Notes []int `json:"notes,omitempty"`
}

// compareDoc is the result of rxsim compare (--json, --save).
type compareDoc struct {
	Kind      string       `json:"kind"`
	Version   int          `json:"version"`
	Reps      int          `json:"reps"`
	Paired    bool         `json:"paired"`
	MinEffect float64      `json:"min_effect"`
	A         compareSide  `json:"a"`
	B         compareSide  `json:"b"`
	Rows      []compareRow `json:"rows"`
	Notes     []string     `json:"notes,omitempty"`
}

func cmdCompare(stdout, stderr io.Writer, args []string) error {
	parallelGC()
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o runOpts
	o.register(fs)
	var both multiFlag
	fs.Var(&both, "both", "override a field on both sides (repeatable)")
	reps := fs.Int("reps", 20, "replications per side")
	minEff := fs.String("min-effect", "2%", "smallest relative effect of interest; warns when --reps is too small to detect it")
	paired := fs.Bool("paired", false, "B reuses A's seeds (common random numbers) instead of independent seeds")
	workers := fs.Int("workers", 0, "simulations run in parallel (0 = GOMAXPROCS)")
	asJSON := fs.Bool("json", false, "print the result document")
	save := fs.String("save", "", "also save the result document to `FILE` (for rxsim plot --kind box|cdf)")
	metrics := fs.String("metrics", "", "comma-separated metrics to compare (default: the main ones present)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rxsim compare A [B] [--set k=v]... [--both k=v]... [--reps 20] [--min-effect 2%] [--json] [--save FILE]")
		fmt.Fprintln(stderr, "B defaults to A; --set changes B only.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return usageError{err}
	}
	cfg := compareConfig{Reps: *reps, Seed: o.seed, Paired: *paired, Workers: *workers, SetsB: o.sets}
	switch fs.NArg() {
	case 1:
		cfg.A, cfg.B = fs.Arg(0), fs.Arg(0)
	case 2:
		cfg.A, cfg.B = fs.Arg(0), fs.Arg(1)
	default:
		return usagef("compare: expected A [B], got %d scenarios", fs.NArg())
	}
	if o.duration > 0 {
		cfg.Both = append(cfg.Both, fmt.Sprintf("duration=%q", o.duration.String()))
	}
	cfg.Both = append(cfg.Both, both...)
	me, err := parsePercent(*minEff)
	if err != nil {
		return usagef("compare: --min-effect: %v", err)
	}
	cfg.MinEffect = me
	if *metrics != "" {
		cfg.Metrics = strings.Split(*metrics, ",")
	}
	bar := newBar(stderr, 2*cfg.Reps, *asJSON)
	cfg.Progress = bar.add
	doc, err := runCompare(cfg)
	bar.finish()
	if err != nil {
		return err
	}
	if *save != "" {
		if err := writeJSONFile(*save, doc); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	return doc.writeText(stdout)
}

// parsePercent parses "2%" or "0.02".
func parsePercent(s string) (float64, error) {
	s = strings.TrimSpace(s)
	div := 1.0
	if strings.HasSuffix(s, "%") {
		s, div = strings.TrimSuffix(s, "%"), 100
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: expected a positive percentage such as 2%%", s)
	}
	return v / div, nil
}

// runCompare runs both sides, interleaved (A0 B0 A1 B1 ...), on workers,
// and compares every metric.
func runCompare(cfg compareConfig) (*compareDoc, error) {
	if cfg.Reps < 2 {
		return nil, usagef("compare: --reps %d, expected >= 2", cfg.Reps)
	}
	setsB := append(append([]string(nil), cfg.Both...), cfg.SetsB...)
	sa, err := scenarios.Load(cfg.A, cfg.Both...)
	if err != nil {
		return nil, usageError{err}
	}
	sb, err := scenarios.Load(cfg.B, setsB...)
	if err != nil {
		return nil, usageError{err}
	}
	base := cfg.Seed
	if base == 0 {
		base = sa.Seed
	}
	doc := &compareDoc{Kind: compareKind, Version: 1, Reps: cfg.Reps, Paired: cfg.Paired, MinEffect: cfg.MinEffect,
		A: compareSide{Scenario: cfg.A, Sets: cfg.Both}, B: compareSide{Scenario: cfg.B, Sets: setsB}}
	var jobs []sweep.Job
	for i := 0; i < cfg.Reps; i++ {
		sA := base + uint64(i)
		sB := base + uint64(cfg.Reps+i)
		if cfg.Paired {
			sB = sA
		}
		doc.A.Seeds = append(doc.A.Seeds, sA)
		doc.B.Seeds = append(doc.B.Seeds, sB)
		jobs = append(jobs, sweep.Job{Index: 2 * i, Point: 0, Rep: i, Seed: sA},
			sweep.Job{Index: 2*i + 1, Point: 1, Rep: i, Seed: sB})
	}
	runs, err := sweep.Execute([]string{"A", "B"}, []*scenarios.Spec{sa, sb}, jobs,
		sweep.Options{Workers: cfg.Workers, Sim: simMetrics, Progress: cfg.Progress})
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		if i%2 == 0 {
			doc.A.Runs = append(doc.A.Runs, r.Metrics)
		} else {
			doc.B.Runs = append(doc.B.Runs, r.Metrics)
		}
	}
	doc.compare(cfg.Metrics)
	return doc, nil
}

// values returns metric name of every run that has it.
func values(runs []sweep.Metrics, name string) []float64 {
	var out []float64
	for _, m := range runs {
		if v, ok := m[name]; ok {
			out = append(out, v)
		}
	}
	return out
}

// compare fills Rows and Notes.
func (d *compareDoc) compare(names []string) {
	if names == nil {
		for _, n := range compareMetrics {
			if len(values(d.A.Runs, n)) > 0 || len(values(d.B.Runs, n)) > 0 {
				names = append(names, n)
			}
		}
	}
	var power []string
	var weak []int // rows with too few replications
	for _, n := range names {
		a, b := values(d.A.Runs, n), values(d.B.Runs, n)
		if len(a) == 0 && len(b) == 0 {
			d.note(fmt.Sprintf("%s: no run has this metric", n))
			continue
		}
		row := compareRow{Metric: n, Test: "welch", A: sweep.Summarize(n, a), B: sweep.Summarize(n, b)}
		p := math.NaN()
		if sweep.Skewed(n) {
			row.Test = "mann-whitney"
			p = stats.MannWhitney(a, b).P
		} else {
			p = stats.Welch(a, b).P
		}
		if !math.IsNaN(p) {
			row.P = &p
		}
		row.Delta = stats.FormatDelta(row.A.Center, row.B.Center, p, len(a), len(b), 0)
		if k := d.ceiling(n, a, b); k > 0 {
			row.Notes = append(row.Notes, k)
		}
		if pc := d.power(a, b); pc.TooSmall {
			power = append(power, fmt.Sprintf("    %-22s detects >= %.2f%% (CV %.2f%%); %.4g%% needs n=%d",
				n, 100*pc.Detectable, 100*pc.CV, 100*pc.MinEffect, pc.NeededN))
			weak = append(weak, len(d.Rows))
		}
		d.Rows = append(d.Rows, row)
	}
	if len(power) > 0 {
		k := d.note(fmt.Sprintf("n=%d per side is too small to detect a %.4g%% change (α=%g, power %g) in:\n%s",
			d.Reps, 100*d.MinEffect, stats.DefaultAlpha, stats.DefaultPower, strings.Join(power, "\n")))
		for _, i := range weak {
			d.Rows[i].Notes = append(d.Rows[i].Notes, k)
		}
	}
}

// power checks whether Reps detects MinEffect given the larger CV.
func (d *compareDoc) power(a, b []float64) stats.PowerCheck {
	cv := 0.0
	for _, x := range [][]float64{a, b} {
		if s := stats.Summarize(x); !math.IsNaN(s.CV) {
			cv = max(cv, s.CV)
		}
	}
	return stats.CheckPower(min(len(a), len(b)), cv, d.MinEffect)
}

// ceiling checks a throughput metric against its bound on both sides and
// returns the footnote number of the finding (0 for none).
func (d *compareDoc) ceiling(n string, a, b []float64) int {
	bound, ok := ceilinged[n]
	if !ok {
		return 0
	}
	ca, cb := stats.Median(values(d.A.Runs, bound)), stats.Median(values(d.B.Runs, bound))
	if !(ca > 0) || !(cb > 0) {
		return 0
	}
	pa := stats.AtCeiling(a, nil, ca, 0).PinnedA
	pb := stats.AtCeiling(b, nil, cb, 0).PinnedA
	if !pa || !pb {
		return 0
	}
	return d.note(fmt.Sprintf("%s is pinned at the offered load (A %s, B %s pkt/s) on both sides: it measures the ceiling, not the change; compare the CPU cost instead (%s)",
		n, sweep.Human(ca), sweep.Human(cb), strings.Join(costMetrics, ", ")))
}

func (d *compareDoc) note(s string) int {
	d.Notes = append(d.Notes, s)
	return len(d.Notes)
}

// writeText prints the comparison in benchstat's layout.
func (d *compareDoc) writeText(w io.Writer) error {
	fmt.Fprintf(w, "A: %s\n", sideName(d.A))
	fmt.Fprintf(w, "B: %s\n", sideName(d.B))
	seeds := "independent seeds"
	if d.Paired {
		seeds = "paired seeds"
	}
	fmt.Fprintf(w, "n=%d per side, interleaved A/B, %s (A %d..%d, B %d..%d)\n", d.Reps, seeds,
		d.A.Seeds[0], d.A.Seeds[len(d.A.Seeds)-1], d.B.Seeds[0], d.B.Seeds[len(d.B.Seeds)-1])
	fmt.Fprintln(w, "centre: mean ± 95% CI (Welch's t-test); latency: median ± 95% CI (Mann-Whitney U); ~ = not significant at α=0.05")
	fmt.Fprintln(w)
	cells := [][4]string{}
	for _, r := range d.Rows {
		delta := r.Delta
		for _, k := range r.Notes {
			delta += " " + superscript(k)
		}
		cells = append(cells, [4]string{r.Metric, side(r.A), side(r.B), delta})
	}
	wm, wa, wb := len("metric"), len("A"), len("B")
	for _, c := range cells {
		wm = max(wm, utf8.RuneCountInString(c[0]))
		wa = max(wa, utf8.RuneCountInString(c[1]))
		wb = max(wb, utf8.RuneCountInString(c[2]))
	}
	wd := len("vs base")
	for _, c := range cells {
		wd = max(wd, utf8.RuneCountInString(c[3]))
	}
	fmt.Fprintf(w, "%s │ %s │ %s │\n", pad("", wm), center("A", wa), center("B", wb+2+wd))
	fmt.Fprintf(w, "%s │ %s │ %s  %s │\n", pad("", wm), center("value", wa), center("value", wb), pad("vs base", wd))
	for _, c := range cells {
		fmt.Fprintf(w, "%s   %s   %s  %s\n", pad(c[0], wm), padLeft(c[1], wa), padLeft(c[2], wb), c[3])
	}
	if len(d.Notes) > 0 {
		fmt.Fprintln(w)
	}
	for i, n := range d.Notes {
		fmt.Fprintf(w, "%s %s\n", superscript(i+1), n)
	}
	return nil
}

func sideName(s compareSide) string {
	if len(s.Sets) == 0 {
		return s.Scenario
	}
	return s.Scenario + " --set " + strings.Join(s.Sets, " --set ")
}

// side formats a side's centre and CI, "14.88M ± 0%".
func side(s sweep.Stat) string {
	ci := sweep.FormatCI(s)
	if ci == "" {
		return sweep.Human(s.Center)
	}
	return sweep.Human(s.Center) + " ± " + strings.TrimPrefix(ci, "±")
}

func superscript(n int) string {
	digits := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	var b strings.Builder
	for _, c := range strconv.Itoa(n) {
		b.WriteRune(digits[c-'0'])
	}
	return b.String()
}

func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) + s
}

func center(s string, w int) string {
	n := utf8.RuneCountInString(s)
	l := max(0, (w-n)/2)
	return strings.Repeat(" ", l) + s + strings.Repeat(" ", max(0, w-n-l))
}
