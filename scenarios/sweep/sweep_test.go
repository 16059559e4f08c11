package sweep

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/scenarios"
)

func TestPoints(t *testing.T) {
	tests := []struct {
		name   string
		params []Param
		want   [][]string
	}{
		{"none", nil, [][]string{{}}},
		{"one", []Param{{"a", []string{"1", "2"}}}, [][]string{{"1"}, {"2"}}},
		{"two, first outermost", []Param{{"a", []string{"1", "2"}}, {"b", []string{"x", "y", "z"}}},
			[][]string{{"1", "x"}, {"1", "y"}, {"1", "z"}, {"2", "x"}, {"2", "y"}, {"2", "z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts := Points(tt.params)
			if len(pts) != len(tt.want) {
				t.Fatalf("got %d points, want %d", len(pts), len(tt.want))
			}
			for i, p := range pts {
				if p.Index != i || !reflect.DeepEqual(p.Values, tt.want[i]) {
					t.Errorf("point %d = %d %v, want %v", i, p.Index, p.Values, tt.want[i])
				}
			}
		})
	}
}

func TestParseFlag(t *testing.T) {
	tests := []struct {
		in   string
		want Param
		err  bool
	}{
		{"cpumap.qsize=64,128, 256", Param{"cpumap.qsize", []string{"64", "128", "256"}}, false},
		{"xdp.cpus=[0,1],[1]", Param{"xdp.cpus", []string{"[0,1]", "[1]"}}, false},
		{`traffic.rate="1Mpps","2,5"`, Param{"traffic.rate", []string{`"1Mpps"`, `"2,5"`}}, false},
		{"cpumap.qsize", Param{}, true},
		{"cpumap.qsize=1,,2", Param{}, true},
		{"=1", Param{}, true},
	}
	for _, tt := range tests {
		got, err := ParseFlag(tt.in)
		if (err != nil) != tt.err || (!tt.err && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("ParseFlag(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestLiteral(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{int64(64), "64"}, {2.0, "2.0"}, {0.05, "0.05"}, {1e6, "1e+06"}, {true, "true"},
		{"1Mpps", `"1Mpps"`}, {[]any{int64(0), int64(1)}, "[0, 1]"},
	}
	for _, tt := range tests {
		got, err := Literal(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Literal(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestMergeParams(t *testing.T) {
	spec := []Param{{"b", []string{"1"}}, {"c", []string{"2"}}}
	got, err := MergeParams(spec, []Param{{"c", []string{"3", "4"}}, {"a", []string{"5"}}})
	want := []Param{{"a", []string{"5"}}, {"b", []string{"1"}}, {"c", []string{"3", "4"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("MergeParams = %v, %v; want %v", got, err, want)
	}
	if _, err := MergeParams(nil, []Param{{"a", nil}, {"a", nil}}); err == nil {
		t.Error("duplicate --sweep accepted")
	}
}

func TestShard(t *testing.T) {
	p := Plan{Params: []Param{{"a", []string{"1", "2", "3"}}}, Reps: 3, Seed: 10}
	jobs := p.Jobs()
	if len(jobs) != 9 || jobs[4].Point != 1 || jobs[4].Rep != 1 || jobs[4].Seed != 11 {
		t.Fatalf("jobs = %+v", jobs)
	}
	for _, n := range []int{1, 2, 4, 9, 12} {
		seen := make([]int, len(jobs))
		for i := 0; i < n; i++ {
			s := Shard(jobs, i, n)
			if len(s) < len(jobs)/n || len(s) > len(jobs)/n+1 {
				t.Errorf("n=%d shard %d has %d jobs", n, i, len(s))
			}
			for _, j := range s {
				seen[j.Index]++
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("n=%d: job %d in %d shards", n, i, c)
			}
		}
	}
	for _, bad := range []string{"1", "2/2", "-1/2", "a/b", "0/0"} {
		if _, _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

// fakeSim is a cheap deterministic Simulator: its metrics depend on the
// spec and the seed only, and it keeps its own ledger so that the test
// checks conservation like a model test.
func fakeSim(s *scenarios.Spec, seed uint64) (Outcome, error) {
	var l pkt.Ledger
	offered := uint64(s.NIC.RingSize) * 10
	l.Offered = offered
	dropped := seed % 7
	l.Dropped[pkt.RxMissed] = dropped
	l.Delivered[pkt.ToSocket] = offered - dropped
	return Outcome{Metrics: Metrics{
		"rx_pps":           float64(s.NIC.RingSize) + float64(seed%5),
		"loss_pct":         float64(dropped) / float64(offered) * 100,
		"latency_us.p99":   float64(seed % 3),
		"ledger.imbalance": float64(l.Check(0)),
	}, Latency: &host.LatencyHist{UpperUS: []float64{1, float64(2 + seed%3)}, Counts: []uint64{seed, 1}}}, nil
}

func testPlan() Plan {
	return Plan{Scenario: "xdp-drop-ixgbe", Params: []Param{
		{"nic.ring_size", []string{"256", "512", "1024"}},
		{"traffic.rate", []string{`"1Mpps"`, `"2Mpps"`}},
	}, Reps: 4, Seed: 1}
}

func output(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteText(&b, r.Columns(DefaultColumns)); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func checkConserved(t *testing.T, r *Report) {
	t.Helper()
	for _, run := range r.Runs {
		if v := run.Metrics["ledger.imbalance"]; v != 0 {
			t.Errorf("point %s seed %d: ledger imbalance %g", run.Point, run.Seed, v)
		}
	}
}

func TestWorkersAndShards(t *testing.T) {
	plan := testPlan()
	one, ran, err := Do(plan, nil, 0, 0, Options{Workers: 1, Sim: fakeSim})
	if err != nil || ran != 24 {
		t.Fatalf("Do: ran %d, %v", ran, err)
	}
	checkConserved(t, one)
	want := output(t, one)
	eight, _, err := Do(plan, nil, 0, 0, Options{Workers: 8, Sim: fakeSim})
	if err != nil {
		t.Fatal(err)
	}
	if got := output(t, eight); got != want {
		t.Errorf("--workers 8 differs from --workers 1:\n%s\n---\n%s", got, want)
	}
	for _, n := range []int{2, 5} {
		var parts []*Report
		for i := 0; i < n; i++ {
			p, _, err := Do(plan, nil, i, n, Options{Workers: 3, Sim: fakeSim})
			if err != nil {
				t.Fatal(err)
			}
			if p.Complete {
				t.Errorf("shard %d/%d complete", i, n)
			}
			var b bytes.Buffer // round-trip through the file format
			if err := p.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, readBytes(t, b.Bytes()))
		}
		merged, err := Merge(parts)
		if err != nil {
			t.Fatal(err)
		}
		if got := output(t, merged); got != want {
			t.Errorf("%d shards merged differ from one run:\n%s\n---\n%s", n, got, want)
		}
	}
}

func readBytes(t *testing.T, b []byte) *Report {
	t.Helper()
	path := t.TempDir() + "/r.json"
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExtend(t *testing.T) {
	plan := testPlan()
	plan.Reps = 2
	calls := 0
	count := func(s *scenarios.Spec, seed uint64) (Outcome, error) { calls++; return fakeSim(s, seed) }
	first, _, err := Do(plan, nil, 0, 0, Options{Workers: 1, Sim: count})
	if err != nil {
		t.Fatal(err)
	}
	plan.Reps = 3
	plan.Params[0].Values = append(plan.Params[0].Values, "2048")
	calls = 0
	ext, ran, err := Do(plan, first, 0, 0, Options{Workers: 1, Sim: count})
	if err != nil {
		t.Fatal(err)
	}
	// 6 old points get their third rep; 2 new points get 3 reps each.
	if ran != 6+6 || calls != ran {
		t.Errorf("extension ran %d (%d calls), want 12", ran, calls)
	}
	fresh, _, err := Do(plan, nil, 0, 0, Options{Workers: 2, Sim: fakeSim})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := output(t, ext), output(t, fresh); got != want {
		t.Errorf("extended result differs from a fresh run:\n%s\n---\n%s", got, want)
	}
	checkConserved(t, ext)
}

func TestSimError(t *testing.T) {
	plan := testPlan()
	bad := func(s *scenarios.Spec, seed uint64) (Outcome, error) {
		if s.NIC.RingSize == 512 && seed == 2 {
			return Outcome{}, fmt.Errorf("boom")
		}
		return fakeSim(s, seed)
	}
	_, _, err := Do(plan, nil, 0, 0, Options{Workers: 4, Sim: bad})
	if err == nil || !strings.Contains(err.Error(), "nic.ring_size=512") || !strings.Contains(err.Error(), "seed 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestMergeRejectsOtherPlans(t *testing.T) {
	a, _, _ := Do(testPlan(), nil, 0, 2, Options{Sim: fakeSim})
	p := testPlan()
	p.Reps = 5
	b, _, _ := Do(p, nil, 1, 2, Options{Sim: fakeSim})
	if _, err := Merge([]*Report{a, b}); err == nil {
		t.Error("merged parts of different plans")
	}
}

func TestHuman(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{14880952, "14.88M"}, {0, "0"}, {0.51234, "0.5123"}, {44.7412, "44.74"}, {100.5, "100.5"},
		{12345, "12.35k"}, {2.5e9, "2.500G"}, {-3.25, "-3.250"},
		{99.999, "100.0"}, {9.9999, "10.00"}, {0.99999, "1.0000"}, {1000, "1000"}, {5.5, "5.500"},
	}
	for _, tt := range tests {
		if got := Human(tt.v); got != tt.want {
			t.Errorf("Human(%g) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestTableGolden pins the text and CSV layout of a sweep table on the
// fake simulator's figures (independent of the models' costs).
func TestTableGolden(t *testing.T) {
	p := testPlan()
	p.Sets = []string{"noise.cost_cv=0.05"}
	r, _, err := Do(p, nil, 0, 0, Options{Workers: 2, Sim: fakeSim})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, r.Columns(DefaultColumns)); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	const path = "testdata/table.golden"
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("table differs from %s (go test -update rewrites it):\n%s", path, b.String())
	}
}

// FromResult flattens Result.Extra's numbers and its sections' numbers
// (one level down), and nothing that is not a number.
func TestFromResultExtra(t *testing.T) {
	r := &host.Result{}
	r.Extra = map[string]any{
		"flat":   2.5,
		"devmap": map[string]any{"xmit_pps": 10.0, "egress": "i40e", "deep": map[string]any{"x": 1.0}},
	}
	m := FromResult(r)
	for k, want := range map[string]float64{"extra.flat": 2.5, "extra.devmap.xmit_pps": 10} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	for _, k := range []string{"extra.devmap.egress", "extra.devmap.deep.x"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s is set; want only numbers, two levels deep", k)
		}
	}
}

// TestFromResultBusyPoll: the busy_poll section becomes busy_poll.* metrics,
// and is absent without busy polling.
func TestFromResultBusyPoll(t *testing.T) {
	for k := range FromResult(&host.Result{}) {
		if strings.HasPrefix(k, "busy_poll.") {
			t.Errorf("%s set without a busy_poll section", k)
		}
	}
	r := &host.Result{}
	r.BusyPoll = &host.BusyPoll{ReadUS: 50, LoopsPerSec: 3, TimeoutsPerSec: 1, PollsPerSec: 9, RxPPS: 7, SpinPercent: 80}
	m := FromResult(r)
	for k, want := range map[string]float64{"busy_poll.loops_per_sec": 3, "busy_poll.timeouts_per_sec": 1,
		"busy_poll.polls_per_sec": 9, "busy_poll.rx_pps": 7, "busy_poll.spin_pct": 80} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
}
