package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/sim/stats"
)

// Kind and Version identify a sweep Report document.
const (
	Kind    = "rxsim-sweep"
	Version = 1
)

// Report is a sweep's result: the --json output and the --save file. It
// contains no wall-clock data, so the same plan always gives the same
// bytes.
type Report struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	Plan    Plan   `json:"plan"`
	// Shard is "i/n" for the partial result of one shard, "" otherwise.
	Shard string `json:"shard,omitempty"`
	// Configs is the fingerprint of each point's Spec, in grid order.
	Configs []string `json:"configs"`
	// Complete is true when every job of the plan has a run.
	Complete bool `json:"complete"`
	// Points summarises each point over the plan's replications (only
	// when Complete).
	Points []Summary `json:"points,omitempty"`
	// Runs holds the plan's runs in job order, then any other runs the
	// file has kept (earlier plans), sorted by point, config and seed.
	Runs []Run `json:"runs"`
}

// Summary is one point's metrics over its replications.
type Summary struct {
	Index  int      `json:"index"`
	Label  string   `json:"label"`
	Values []string `json:"values"`
	N      int      `json:"n"`
	// Stats maps a metric to its summary.
	Stats map[string]Stat `json:"stats"`
}

// Stat summarises one metric at one point. Center is the mean, or the
// median for Skewed metrics; Low and High bound its 95% confidence
// interval (MeanCI or MedianCI) and are omitted when the interval is
// undefined (one replication; fewer than 6 for a median).
type Stat struct {
	Center float64   `json:"center"`
	Low    *float64  `json:"ci_low,omitempty"`
	High   *float64  `json:"ci_high,omitempty"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

// Assemble builds the Report of plan from runs (in any order, possibly
// with duplicates and with runs of other plans). configs holds each
// point's fingerprint in grid order; shard is "" or "i/n". Two runs with
// the same configuration and seed but different metrics are an error: the
// simulation must be deterministic.
func Assemble(plan Plan, configs []string, runs []Run, shard string) (*Report, error) {
	byKey := map[runKey]Run{}
	var order []runKey
	for _, r := range runs {
		k := r.key()
		if old, ok := byKey[k]; ok {
			if !reflect.DeepEqual(old.Metrics, r.Metrics) {
				return nil, fmt.Errorf("sweep: two different results for config %s seed %d (point %s): the simulation is not deterministic", r.Config, r.Seed, r.Point)
			}
			continue
		}
		byKey[k] = r
		order = append(order, k)
	}
	rep := &Report{Kind: Kind, Version: Version, Plan: plan, Shard: shard, Configs: configs, Complete: true}
	used := map[runKey]bool{}
	for _, j := range plan.Jobs() {
		k := runKey{configs[j.Point], j.Seed}
		r, ok := byKey[k]
		if !ok {
			rep.Complete = false
			continue
		}
		if !used[k] {
			used[k] = true
			rep.Runs = append(rep.Runs, r)
		}
	}
	var rest []Run
	for _, k := range order {
		if !used[k] {
			rest = append(rest, byKey[k])
		}
	}
	sort.Slice(rest, func(a, b int) bool {
		x, y := rest[a], rest[b]
		if x.Point != y.Point {
			return x.Point < y.Point
		}
		if x.Config != y.Config {
			return x.Config < y.Config
		}
		return x.Seed < y.Seed
	})
	rep.Runs = append(rep.Runs, rest...)
	if rep.Complete {
		rep.Points = summarize(plan, configs, byKey)
	}
	return rep, nil
}

func summarize(plan Plan, configs []string, byKey map[runKey]Run) []Summary {
	var out []Summary
	for _, pt := range plan.Points() {
		var ms []Metrics
		for r := 0; r < plan.Reps; r++ {
			ms = append(ms, byKey[runKey{configs[pt.Index], plan.Seed + uint64(r)}].Metrics)
		}
		s := Summary{Index: pt.Index, Label: pt.Label(plan.Params), Values: pt.Values, N: len(ms), Stats: map[string]Stat{}}
		for _, name := range Names(ms...) {
			var xs []float64
			for _, m := range ms {
				if v, ok := m[name]; ok {
					xs = append(xs, v)
				}
			}
			s.Stats[name] = Summarize(name, xs)
		}
		out = append(out, s)
	}
	return out
}

// Summarize returns the Stat of a metric's values.
func Summarize(name string, xs []float64) Stat {
	var iv stats.Interval
	if Skewed(name) {
		iv = stats.MedianCI(xs, stats.DefaultLevel)
	} else {
		iv = stats.MeanCI(xs, stats.DefaultLevel)
	}
	sum := stats.Summarize(xs)
	st := Stat{Center: iv.Center, Min: sum.Min, Max: sum.Max, Values: xs}
	if finite(iv.Low) && finite(iv.High) {
		lo, hi := iv.Low, iv.High
		st.Low, st.High = &lo, &hi
	}
	return st
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Merge combines partial Reports (shards, or files extended separately)
// of the same plan into the Report a single run of the plan gives.
func Merge(parts []*Report) (*Report, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("sweep: merge: no results")
	}
	first := parts[0]
	var runs []Run
	for i, p := range parts {
		if !sameExperiment(&p.Plan, &first.Plan) || !reflect.DeepEqual(p.Configs, first.Configs) {
			return nil, fmt.Errorf("sweep: merge: part %d is a different experiment (plan or scenario differs from part 0)", i)
		}
		runs = append(runs, p.Runs...)
	}
	return Assemble(first.Plan, first.Configs, runs, "")
}

// ReadReport reads a Report from a JSON file.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("sweep: %s: %w", path, err)
	}
	if r.Kind != Kind {
		return nil, fmt.Errorf("sweep: %s: kind %q, expected %q", path, r.Kind, Kind)
	}
	if r.Version != Version {
		return nil, fmt.Errorf("sweep: %s: version %d, expected %d", path, r.Version, Version)
	}
	return &r, nil
}

// WriteJSON writes the Report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Save writes the Report to path (via a temporary file and a rename, so
// an interrupted save keeps the old file).
func (r *Report) Save(path string) error {
	f, err := os.CreateTemp(dirOf(path), ".rxsim-sweep-*")
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("sweep: %w", err)
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("sweep: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("sweep: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i+1]
		}
	}
	return "."
}

// PointLatencies merges, for each point, the latency histograms of its
// replications (nil for a point whose runs measured no latency).
func (r *Report) PointLatencies() []*host.LatencyHist {
	runs := map[runKey]*host.LatencyHist{}
	for _, x := range r.Runs {
		runs[x.key()] = x.Latency
	}
	out := make([]*host.LatencyHist, len(r.Configs))
	for _, j := range r.Plan.Jobs() {
		out[j.Point] = out[j.Point].Merge(runs[runKey{r.Configs[j.Point], j.Seed}])
	}
	return out
}
