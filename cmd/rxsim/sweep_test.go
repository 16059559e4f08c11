package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func init() {
	// Other test files of this package may define -update too.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden")
	}
}

// updating reports whether the test run was given -update.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// rxsim runs the CLI and returns its stdout; it fails the test on a non-zero exit.
func rxsim(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := mainErr(&out, &errb, args); code != 0 {
		t.Fatalf("rxsim %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// sweepArgs is a cheap sweep with noise: 4 points x 3 reps of 2 ms.
var sweepArgs = []string{"sweep", "xdp-drop-ixgbe",
	"--sweep", "nic.ring_size=128,512", "--sweep", "traffic.rate=1Mpps,4Mpps",
	"--set", "noise.cost_cv=0.05", "--set", "traffic.jitter=0.05", "--set", "noise.irq_jitter=0.1",
	"--set", `warmup="1ms"`, "--duration", "2ms", "--reps", "3", "--quiet"}

func with(base []string, extra ...string) []string {
	return append(append([]string(nil), base...), extra...)
}

func TestSweepWorkersShardsMerge(t *testing.T) {
	text1 := rxsim(t, with(sweepArgs, "--workers", "1")...)
	text8 := rxsim(t, with(sweepArgs, "--workers", "8")...)
	if text1 != text8 {
		t.Errorf("--workers 8 output differs from --workers 1:\n%s\n---\n%s", text8, text1)
	}
	json1 := rxsim(t, with(sweepArgs, "--workers", "1", "--json")...)
	if json8 := rxsim(t, with(sweepArgs, "--workers", "2", "--json")...); json8 != json1 {
		t.Error("--json output depends on --workers")
	}
	csv1 := rxsim(t, with(sweepArgs, "--csv")...)
	dir := t.TempDir()
	var parts []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, "part"+string(rune('0'+i))+".json")
		rxsim(t, with(sweepArgs, "--shard", string(rune('0'+i))+"/3", "--save", p)...)
		parts = append(parts, p)
	}
	if got := rxsim(t, with([]string{"merge"}, parts...)...); got != text1 {
		t.Errorf("merged shards differ from one run:\n%s\n---\n%s", got, text1)
	}
	if got := rxsim(t, with([]string{"merge", "--json"}, parts...)...); got != json1 {
		t.Error("merged --json differs from one run's --json")
	}
	if got := rxsim(t, with([]string{"merge", "--csv"}, parts...)...); got != csv1 {
		t.Error("merged --csv differs from one run's --csv")
	}
	var doc struct {
		Runs []struct {
			Point   string             `json:"point"`
			Seed    uint64             `json:"seed"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(json1), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 12 {
		t.Fatalf("%d runs, want 12", len(doc.Runs))
	}
	for _, r := range doc.Runs { // conservation: offered = delivered + dropped + queued
		v, ok := r.Metrics["ledger.imbalance"]
		if !ok || v != 0 {
			t.Errorf("point %s seed %d: ledger imbalance %v (present %v)", r.Point, r.Seed, v, ok)
		}
	}
}

func TestSweepExtend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	rxsim(t, with(sweepArgs, "--reps", "2", "--save", path)...)
	var errb, out bytes.Buffer
	if code := mainErr(&out, &errb, with(sweepArgs, "--save", path)); code != 0 {
		t.Fatal(errb.String())
	}
	// 4 points x 1 more rep run; 4 x 2 reused.
	if !strings.Contains(errb.String(), "4 run(s) simulated, 8 reused") {
		t.Errorf("stderr = %q", errb.String())
	}
	if want := rxsim(t, sweepArgs...); out.String() != want {
		t.Errorf("extended sweep differs from a fresh one:\n%s\n---\n%s", out.String(), want)
	}
}

func TestSweepUsage(t *testing.T) {
	tests := [][]string{
		{"sweep", "--sweep", "nic.ring_sz=1,2"},
		{"sweep", "--sweep", "nic.ring_size"},
		{"sweep", "--reps", "0"},
		{"sweep", "--shard", "3/3"},
		{"sweep", "xdp-drop-ixgbe", "--duration", "1ms", "--sweep", "traffic.rate=2Mpps", "--metrics", "rx_pps,no_such_metric"},
	}
	for _, args := range tests {
		var out, errb bytes.Buffer
		if code := mainErr(&out, &errb, args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
}

// TestSweepNoNoiseIsExact checks that without noise every replication gives
// the same figures (seeds only drive the noise streams).
func TestSweepNoNoiseIsExact(t *testing.T) {
	out := rxsim(t, "sweep", "xdp-drop-ixgbe", "--sweep", "traffic.rate=2Mpps,line", "--reps", "3",
		"--duration", "2ms", "--json", "--quiet")
	var doc struct {
		Points []struct {
			Label string `json:"label"`
			Stats map[string]struct {
				Min float64 `json:"min"`
				Max float64 `json:"max"`
			} `json:"stats"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Points) != 2 {
		t.Fatalf("%d points", len(doc.Points))
	}
	for _, p := range doc.Points {
		for m, s := range p.Stats {
			if s.Min != s.Max {
				t.Errorf("%s: %s varies across seeds without noise: %g..%g", p.Label, m, s.Min, s.Max)
			}
		}
	}
}
