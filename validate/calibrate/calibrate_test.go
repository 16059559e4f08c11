package calibrate

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// synthetic writes a measurement set whose rates come from the simulator
// with the stages scaled by truth, and returns its path.
func synthetic(t *testing.T, names []string, truth map[string]float64) string {
	t.Helper()
	o := Options{}
	o.defaults()
	set := &validate.MeasurementSet{Format: validate.MeasurementFormat,
		Machine: validate.Machine{CPUModel: "synthetic", Cores: 2, Kernel: "sim"}}
	for _, n := range names {
		tg := Target{Name: n}
		tg.Config, tg.Gen = splitName(n)
		tg.Measured = 1e6 // sizes the simulated interval only
		sp, err := o.spec(tg)
		if err != nil {
			t.Fatal(err)
		}
		base, err := hw.Load(sp.HW, sp.Costs)
		if err != nil {
			t.Fatal(err)
		}
		var st []Stage
		var sc []float64
		for _, s := range (&Options{}).stages(base) {
			if v, ok := truth[s.Name]; ok {
				st = append(st, s)
				sc = append(sc, v)
			}
		}
		rx, err := simulate(sp, scaled(base, st, sc), 1) // checks conservation
		if err != nil {
			t.Fatal(err)
		}
		set.Results = append(set.Results, &validate.Result{Scenario: tg.Config, RxPPS: rx.RxPPS,
			Settings: validate.Options{Gen: validate.GenOptions{Kind: validate.GenKind(tg.Gen)}}})
	}
	path := filepath.Join(t.TempDir(), "synthetic.json")
	if err := validate.Save(path, set); err != nil {
		t.Fatal(err)
	}
	return path
}

func splitName(n string) (string, string) {
	for i := len(n) - 1; i >= 0; i-- {
		if n[i] == '/' {
			return n[:i], n[i+1:]
		}
	}
	return n, ""
}

// TestFitRecoversKnownCosts: rates simulated with the generator stages
// scaled by known factors are fitted back to those factors, and the
// held-out target (which uses only stages the fit pinned) is predicted.
func TestFitRecoversKnownCosts(t *testing.T) {
	truth := map[string]float64{"gen_live": 0.8, "gen_afpacket": 1.3, "gen_udp": 1.15}
	names := []string{"veth-xdp-drop/live", "veth-xdp-drop/afpacket", "veth-xdp-drop/udp", "veth-threaded-napi-drop/udp"}
	path := synthetic(t, names, truth)
	set, err := validate.LoadMeasurements(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Targets: Targets([]*validate.MeasurementSet{set}),
		Holdout: map[string]bool{"veth-threaded-napi-drop/udp": true},
		Stages:  []string{"gen_live", "gen_afpacket", "gen_udp"}, NoMachine: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Fitted) != 3 {
		t.Fatalf("fitted %d stages, want 3 (fixed: %v)", len(rep.Fitted), rep.Fixed)
	}
	for _, f := range rep.Fitted {
		want := truth[f.Stage.Name]
		if math.Abs(f.Scale/want-1) > 0.03 {
			t.Errorf("%s: scale %.4f, want %.4f +- 3%%", f.Stage.Name, f.Scale, want)
		}
	}
	for _, r := range rep.Rows {
		if math.Abs(r.ErrPct()) > 2 {
			t.Errorf("%s: error %.2f%% after the fit, want <= 2%%", r.Name, r.ErrPct())
		}
	}
	s := Summarize(rep.Rows)
	if s.HeldOut != 1 || !s.SameOrder {
		t.Errorf("summary %+v: want 1 held out and the measured order", s)
	}
	cp := Calibrated(rep, Meta{Date: "2026-12-02", Machine: "synthetic", Files: []string{"synthetic.json"}})
	out := filepath.Join(t.TempDir(), "cal.toml")
	if err := WriteProfile(out, cp, "test"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hw.ParseCosts(out, b)
	if err != nil {
		t.Fatal(err)
	}
	c := got.Costs["packet_sendmmsg"]
	if c.Origin != hw.Calibrated || c.Date != "2026-12-02" || c.Machine != "synthetic" {
		t.Errorf("packet_sendmmsg = %+v, want calibrated with date and machine", c)
	}
	if v, b := got.Costs["veth_poll"], rep.Profile.Costs["veth_poll"]; v != b {
		t.Errorf("veth_poll was not fitted but changed: %+v, was %+v", v, b)
	}
}

func TestSummarize(t *testing.T) {
	rows := []Row{
		{Name: "a", Measured: 100, Before: 90, After: 102, InFit: true},
		{Name: "b", Measured: 200, Before: 150, After: 190, InFit: false}, // -5 %
		{Name: "c", Measured: 300, Before: 400, After: 330, InFit: false}, // +10 %
		{Name: "d", Measured: 400, Before: 100, After: 404, InFit: false}, // +1 %
	}
	s := Summarize(rows)
	if s.HeldOut != 3 || s.MedianAbsErr != 5 || math.Abs(s.WorstAbsErr-10) > 1e-9 || s.Worst != "c" {
		t.Errorf("held out: %+v, want 3, median 5, worst 10 (c)", s)
	}
	if s.Spearman != 1 || !s.SameOrder || s.Concordant != 6 || s.Pairs != 6 { // a..d are all rx_pps rows
		t.Errorf("ranking: %+v, want rho 1 and the same order", s)
	}
	// before 90,150,400,100: ranks (1,3,4,2) vs (1,2,3,4): d^2 = 0+1+1+4 = 6,
	// rho = 1 - 6*6/(4*(16-1)) = 0.4
	if math.Abs(s.SpearmanBefore-0.4) > 1e-9 {
		t.Errorf("spearman before %.4f, want 0.4", s.SpearmanBefore)
	}
}

func TestTableGolden(t *testing.T) {
	rep := &Report{
		Rows: []Row{
			{Name: "veth-xdp-drop/afpacket", Measured: 1770000, Before: 1680900, After: 1765000, InFit: true},
			{Name: "veth-xdp-drop/live", Measured: 23700000, Before: 22796800, After: 23650000, InFit: true},
			{Name: "veth-threaded-napi-drop/udp", Measured: 900000, Spread: 0.2, RepMin: 850000, RepMax: 1030000, Before: 413750, After: 870000, InFit: false},
			{Name: "veth-threaded-napi-drop/udp:kthread_pps", Measured: 500000, Spread: 0.1, RepMin: 480000, RepMax: 530000, Before: 413750, After: 400000, InFit: false},
		},
		Fitted: []Fitted{{Stage: Stage{Name: "gen_live", Costs: []string{"bpf_test_run_xdp_live", "veth_xdp_xmit"}}, Scale: 0.95}},
		Fixed:  []string{"xdp_pass_skb"},
		Evals:  123, Status: "FunctionConvergence",
	}
	var b bytes.Buffer
	WriteTable(&b, rep)
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("table:\n%s\nwant:\n%s", b.Bytes(), want)
	}
}

// TestKernelMismatch: a result measured on a kernel whose CONFIG_HZ or
// CONFIG_IRQ_TIME_ACCOUNTING differs from the scenario's [kernel] gets a
// warning naming the configuration, the setting and both values, once per
// configuration; a matching one gets none.
func TestKernelMismatch(t *testing.T) {
	for _, c := range []struct {
		name string
		kc   *validate.KernelConfig
		want []string
	}{
		{"not recorded", nil, nil},
		{"matches", &validate.KernelConfig{HZ: 250}, nil},
		{"differs", &validate.KernelConfig{HZ: 1000, IRQTimeAccounting: true}, []string{
			"veth-xdp-drop: scenario kernel.hz = 250, the measured kernel has CONFIG_HZ=1000",
			"veth-xdp-drop: scenario kernel.irq_time_accounting = false, the measured kernel has CONFIG_IRQ_TIME_ACCOUNTING=y",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rs []*validate.Result
			for _, g := range []string{"live", "afpacket"} {
				rs = append(rs, &validate.Result{Scenario: "veth-xdp-drop", RxPPS: 5e5, Machine: validate.Machine{KernelConfig: c.kc},
					Settings: validate.Options{Gen: validate.GenOptions{Kind: validate.GenKind(g)}}})
			}
			set := &validate.MeasurementSet{Format: validate.MeasurementFormat, Results: rs}
			rep, err := Run(Options{Targets: Targets([]*validate.MeasurementSet{set}), MaxEvals: 1, NoMachine: true})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(rep.Warnings) != fmt.Sprint(c.want) {
				t.Errorf("warnings\n got %q\nwant %q", rep.Warnings, c.want)
			}
		})
	}
}
