package validate

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestGroupThousands(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 4808586: "4,808,586", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := GroupThousands(v); got != want {
			t.Errorf("GroupThousands(%d) = %q, want %q", v, got, want)
		}
	}
}

// fixedResult is a hand-made redirect-cpu result.
func fixedResult() *Result {
	o := Options{Config: "veth-cpumap-udp/live", Program: ProgRedirectCPU, Mode: ModeNoTouch, CPUs: []int{1}, Qsize: 192,
		RemoteAction: RemoteDisabled, Gen: GenOptions{Kind: GenLive, PktSize: 60, Flows: 1}, Reps: 2,
		Duration: 2 * time.Second, Reference: true, RefPPS: 21e6}
	o.Defaults()
	sec := func(rep int, t, rx, kth float64) Sample {
		return Sample{Rep: rep, T: t, Period: 1, Offered: rx, Rx: rx, RxPerCPU: []float64{rx, 0}, Kthread: kth,
			Drops: map[string]float64{"cpumap_enqueue": rx - kth, "udp_noports": kth},
			UDP:   UDPRate{NoPorts: kth}, Softnet: SoftnetRate{Processed: kth}, EthtoolXDP: rx,
			CPU: []CPUBusy{{CPU: 0, SoftIRQ: 0.4, Thread: 0.6}, {CPU: 1, Thread: 0.98, Idle: 0.02}}}
	}
	r := &Result{Scenario: o.Config, Settings: o, Iface: "rxsim42r", Driver: "veth", XDPMode: "native",
		Machine: Machine{CPUModel: "test CPU", MHz: 2000, Kernel: "6.18", Cores: 2},
		Reps:    []Rep{{Rep: 0, RefPPS: 22e6, Seconds: 2}, {Rep: 1, RefPPS: 14e6, Slow: true, Seconds: 2}},
		PerSecond: []Sample{sec(0, 1, 5570000, 1250000), sec(0, 2, 5610000, 1260000), sec(1, 1, 3760000, 800000), sec(1, 2, 3800000, 810000),
			sec(0, 3, 5620000, 1240000), sec(0, 4, 5500000, 1230000)},
		Reference: []float64{22e6, 14e6}}
	r.Reps = append(r.Reps[:1], r.Reps[1], Rep{Rep: 2, RefPPS: 23e6, Seconds: 2})
	r.PerSecond[4].Rep, r.PerSecond[5].Rep = 2, 2
	probe := sec(-1, 1, 4808586, 1185818)
	probe.Probe, probe.EnqPPS, probe.EnqDrop, probe.BulkAvg, probe.KthSched = true, 4808585, 3622768, 8, 61
	probe.EnqPerCPU = []EnqRate{{From: 0, To: 1, PPS: 4808585, Drop: 3622768, BulkAvg: 8}}
	probe.Polls, probe.AvgWork, probe.FullBudget = 150000, 32, 75000
	r.Reference = append(r.Reference, 23e6)
	r.PerSecond = append(r.PerSecond, probe)
	r.Probe = &probe
	for i := range r.Reps {
		var s []Sample
		for _, x := range r.PerSecond {
			if x.Rep == r.Reps[i].Rep && !x.Probe {
				s = append(s, x)
			}
		}
		r.Reps[i].Median = medians(s)
	}
	r.aggregate()
	return r
}

func TestSummaryGolden(t *testing.T) {
	r := fixedResult()
	var b bytes.Buffer
	WriteStart(&b, r.Settings, r.Iface, 7, r.Driver)
	WriteSecond(&b, r.Iface, &r.PerSecond[0], r.Settings, false)
	WriteSecond(&b, r.Iface, &r.PerSecond[0], r.Settings, true)
	WriteSummary(&b, r)
	const path = "testdata/summary.golden"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestSummaryGolden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("output differs from %s (rerun with -update if intended):\n%s", path, b.String())
	}
	// xdp-bench's column layout: value right-aligned in 10, unit in 13.
	if !strings.Contains(b.String(), "rxsim42r->?             5,570,000 rx/s                  0 err,drop/s") {
		t.Errorf("terse line not in xdp-bench layout:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "  enqueue to cpu 1      4,808,585 pkt/s         3,622,768 drop/s             8.00 bulk-avg") {
		t.Errorf("enqueue line not in xdp-bench layout")
	}
}

func TestAggregateExcludesSlowReps(t *testing.T) {
	r := fixedResult()
	if r.RxPPS < 5.5e6 {
		t.Errorf("rx median %.0f includes the slow repetition", r.RxPPS)
	}
	if r.CPUMap == nil || r.CPUMap.BulkAvg != 8 || r.CPUMap.KthreadSched != 61 {
		t.Errorf("cpumap = %+v, want bulk 8 and sched 61 from the probe run", r.CPUMap)
	}
	if r.PollsPerSec != 150000 {
		t.Errorf("polls_per_sec = %v, want the probe run's", r.PollsPerSec)
	}
	if s := r.Spread["rx_pps"]; s.RepMin != 5560000 || s.RepMax != 5590000 {
		t.Errorf("rx spread = %+v", s)
	}
	if r.SimSeconds != 4 {
		t.Errorf("sim_seconds = %v, want 4 (slow rep excluded)", r.SimSeconds)
	}
}

func TestSaveAtomicRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/m.json"
	set := &MeasurementSet{Format: MeasurementFormat, Machine: ReadMachine(), Results: []*Result{fixedResult()}}
	if err := Save(p, set); err != nil {
		t.Fatal(err)
	}
	got, err := LoadMeasurements(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 1 || got.Results[0].RxPPS != set.Results[0].RxPPS || got.Results[0].Settings.Qsize != 192 {
		t.Errorf("round trip lost data: %+v", got.Results[0].Settings)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := Save(dir+"/nodir/m.json", set); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
}

// TestCLIUsageErrors checks that bad flags fail with exit code 2 before
// anything is touched (no root needed).
func TestCLIUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--program", "bogus"},
		{"--gen", "pktgen"},
		{"--nosuchflag"},
		{"no-such-scenario"},
		{"--program", "redirect-cpu"},
		{"--program", "redirect-cpu", "--cpu", "99"},
		{"--program", "drop", "--qsize", "10"},
		{"--program", "redirect-cpu", "--cpu", "1", "--remote-action", "maybe"},
		{"--xdp-mode", "hw"},
		{"--duration", "-1s"},
		{"--reps", "0"},
		{"--pkt_size", "20"},
		{"--all", "veth-xdp-drop"},
		{"veth-xdp-drop", "--iface", "eth0"},
		{"veth-xdp-drop", "extra"},
		{"veth-xdp-drop", "--busy-poll", "50"}, // no listener to busy-poll
		{"veth-xdp-pass-udp", "--busy-poll", "-1"},
	} {
		var stderr bytes.Buffer
		err := CLI(io.Discard, &stderr, args)
		if !errors.Is(err, ErrUsage) || ExitCode(err) != ExitFailOption {
			t.Errorf("CLI %q: err %v (exit %d), want a usage error (exit 2)", args, err, ExitCode(err))
		}
	}
	left := FindLeftovers(true)
	for _, l := range left {
		if l.PID == os.Getpid() {
			t.Errorf("usage error left %v", l)
		}
	}
}

func TestConfigs(t *testing.T) {
	cs := Configs()
	want := []string{"veth-cpumap-udp", "veth-cpumap-udp-listener", "veth-threaded-napi-drop", "veth-xdp-drop", "veth-xdp-pass-udp"}
	if len(cs) != len(want) {
		t.Fatalf("%d configs, want %d", len(cs), len(want))
	}
	for i, c := range cs {
		if c.Name != want[i] {
			t.Errorf("config %d = %s, want %s (sorted)", i, c.Name, want[i])
		}
		for _, g := range c.Gens {
			o := c.Options(g)
			if err := o.Check(); err != nil {
				t.Errorf("%s/%s: %v", c.Name, g, err)
			}
			if c.Program == ProgRedirectCPU && g == GenUDP && !o.Net.SenderTxCsumOff {
				t.Errorf("%s/udp: sender tx checksum offload must be off", c.Name)
			}
		}
	}
}

// TestExtendedToggle: each SIGQUIT flips between terse and extended
// output, as in xdp-bench; without a toggle -e decides.
func TestExtendedToggle(t *testing.T) {
	o := Options{Extended: true}
	if !o.extended() {
		t.Fatal("-e without a toggle is not extended")
	}
	for _, n := range []int{1, 2, 3} {
		b := &atomic.Bool{}
		o.ExtendedToggle = b
		sig := make(chan os.Signal) // unbuffered: a send returns once toggleOn took it
		done, exited := make(chan struct{}), make(chan struct{})
		go func() { toggleOn(sig, b, done); close(exited) }()
		for i := 0; i < n; i++ {
			sig <- syscall.SIGQUIT
		}
		close(done)
		<-exited // every signal taken has been applied
		if want := n%2 == 1; o.extended() != want {
			t.Errorf("after %d SIGQUITs: extended %v, want %v", n, o.extended(), want)
		}
	}
}
