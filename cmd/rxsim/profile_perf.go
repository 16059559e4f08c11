package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/validate/perfattr"
)

// perfRun is a stored perf recording of a validate run: its stacks, and
// from the JSON beside it (NAME.json for NAME.folded.gz) how long perf
// sampled, at what rate, and the packets received per second.
type perfRun struct {
	Path    string
	Stacks  []perfattr.Stack
	Seconds float64 `json:"perf_seconds"`
	Hz      float64 `json:"perf_hz"`
	RxPPS   float64 `json:"rx_pps"`
}

// loadPerfRun reads path (folded stacks or perf script text, gzipped or
// not) and its JSON.
func loadPerfRun(path string) (*perfRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := perfattr.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".folded")
	base = strings.TrimSuffix(base, ".txt")
	jp := base + ".json"
	b, err := os.ReadFile(jp)
	if err != nil {
		return nil, fmt.Errorf("profile --perf: the run's counters: %w", err)
	}
	p := &perfRun{Path: path, Stacks: st}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("%s: %w", jp, err)
	}
	switch {
	case p.Seconds <= 0:
		return nil, fmt.Errorf("%s: perf_seconds: want the seconds perf sampled (> 0)", jp)
	case p.Hz <= 0:
		return nil, fmt.Errorf("%s: perf_hz: want perf's sampling rate (> 0)", jp)
	case p.RxPPS <= 0:
		return nil, fmt.Errorf("%s: rx_pps: want the packets received per second (> 0)", jp)
	}
	return p, nil
}

// perfRow is one cost item on one CPU: ns per received packet, measured
// and in the model.
type perfRow struct {
	Item            string
	Measured, Model float64
}

// perfRows lines up the measured items of cpu with the model's functions,
// largest measured first, then the model-only ones by size.
func perfRows(p *perfRun, r *host.Result, cpu int) (rows []perfRow, idle float64) {
	per := 1e9 / (p.Seconds * p.Hz * p.RxPPS)
	meas := perfattr.Items(p.Stacks)[cpu]
	model := map[string]float64{}
	if r.RxPPS > 0 {
		for _, f := range r.Funcs {
			if f.CPU == cpu {
				model[f.Func] += f.Frac * 1e9 / r.RxPPS
			}
		}
	}
	seen := map[string]bool{}
	for item, n := range meas {
		if item == perfattr.Idle {
			idle = float64(n) / (p.Seconds * p.Hz)
			continue
		}
		seen[item] = true
		rows = append(rows, perfRow{item, float64(n) * per, model[item]})
	}
	for _, item := range host.Names(model) {
		if !seen[item] {
			rows = append(rows, perfRow{item, 0, model[item]})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Measured != b.Measured {
			return a.Measured > b.Measured
		}
		if a.Model != b.Model {
			return a.Model > b.Model
		}
		return a.Item < b.Item
	})
	return rows, idle
}

// writePerfProfile prints, per CPU, each cost item's ns per received packet
// in the perf recording and in the model, with their difference.
func writePerfProfile(w io.Writer, name string, p *perfRun, r *host.Result) {
	fmt.Fprintf(w, "# rxsim profile --perf %s %s\n", p.Path, name)
	fmt.Fprintf(w, "# measured: %s pkt/s received, perf over %.0f s at %.0f Hz; model: %s pkt/s (seed %d, %.3fs simulated)\n",
		groupThousands(int64(p.RxPPS)), p.Seconds, p.Hz, groupThousands(int64(r.RxPPS)), r.Seed, r.SimSeconds)
	fmt.Fprintln(w, "# ns per received packet by the model's cost items (perf: the nearest-leaf frame with a rule,")
	fmt.Fprintln(w, "# validate/perfattr.ItemRules; \"other\" has no rule: syscall entry, timers, the reader's runtime)")
	for _, c := range r.CPU {
		rows, idle := perfRows(p, r, c.ID)
		fmt.Fprintln(w, "#")
		fmt.Fprintf(w, "# cpu %d: measured %.1f%% idle, model %.1f%% busy\n", c.ID, 100*idle, 100*c.Busy)
		fmt.Fprintf(w, "# %9s %9s %9s  %s\n", "measured", "model", "delta", "item")
		var tm, tr float64
		for _, row := range rows {
			fmt.Fprintf(w, "  %9.1f %9.1f %+9.1f  %s\n", row.Measured, row.Model, row.Model-row.Measured, row.Item)
			tm += row.Measured
			tr += row.Model
		}
		fmt.Fprintf(w, "  %9.1f %9.1f %+9.1f  total\n", tm, tr, tr-tm)
	}
}
