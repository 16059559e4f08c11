package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/rxsim/rxsim/hw"
)

// TestFileErrors shows the exact error text for bad scenario files: each
// names the file, the line and the field.
func TestFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		want  string
		line  int
		field string
	}{
		{
			name: "unknown key", path: "testdata/bad/unknown-key.toml", line: 3, field: "nic.ring_sise",
			want: "scenario testdata/bad/unknown-key.toml:3: nic.ring_sise: unknown key; did you mean nic.ring_size?",
		},
		{
			name: "wrong type", path: "testdata/bad/wrong-type.toml", line: 3, field: "nic.ring_size",
			want: "scenario testdata/bad/wrong-type.toml:3: nic.ring_size: wrong type: TOML value is a string, expected an integer",
		},
		{
			name: "out of range", path: "testdata/bad/out-of-range.toml", line: 6, field: "nic.ring_size",
			want: "scenario testdata/bad/out-of-range.toml:6: nic.ring_size: 8192 out of range, expected 64..4096 (ring_max of hw profile ixgbe)",
		},
		{
			// BurntSushi/toml places an error at a newline on the next line.
			name: "syntax error", path: "testdata/bad/syntax.toml", line: 3, field: "",
			want: "scenario testdata/bad/syntax.toml:3: expected '.' or ']' to end table name, but got '\\n' instead",
		},
		{
			name: "bad duration", path: "testdata/bad/bad-duration.toml", line: 2, field: "duration",
			want: `scenario testdata/bad/bad-duration.toml:2: duration: invalid duration "10 ms", expected a duration like "50ms" or "250us"`,
		},
		{
			name: "unknown hw profile", path: "testdata/bad/unknown-hw.toml", line: 2, field: "hw",
			want: `scenario testdata/bad/unknown-hw.toml:2: hw: hw: no NIC profile "e1000" (have ` + strings.Join(hw.Names(), ", ") + ")",
		},
		{
			name: "missing file", path: "testdata/no-such-file.toml", line: 0, field: "",
			want: "scenario testdata/no-such-file.toml: no such file or built-in scenario (built-ins: " + strings.Join(Builtins(), ", ") + ")",
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			s, err := Load(test.path)
			if s != nil {
				t.Errorf("Load(%q) returned a spec with the error", test.path)
			}
			if err == nil {
				t.Fatalf("Load(%q): no error, want %q", test.path, test.want)
			}
			if err.Error() != test.want {
				t.Errorf("Load(%q):\n got %s\nwant %s", test.path, err, test.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load(%q): error %T is not a *Error", test.path, err)
			}
			if e.File != test.path || e.Line != test.line || e.Field != test.field {
				t.Errorf("Load(%q): Error{File: %q, Line: %d, Field: %q}, want {%q, %d, %q}",
					test.path, e.File, e.Line, e.Field, test.path, test.line, test.field)
			}
		})
	}
}

// TestParseErrors covers more shapes of bad input, given as source text.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"case-folded key", "[nic]\nRING_SIZE = 1024\n",
			"scenario x.toml:2: nic.RING_SIZE: unknown key; did you mean nic.ring_size?"},
		{"unknown section", "[nics]\nqueues = 1\n",
			"scenario x.toml:1: nics: unknown key; did you mean nic?"},
		{"header with comment", "[nic] # device\nring_sise = 1\n",
			"scenario x.toml:2: nic.ring_sise: unknown key; did you mean nic.ring_size?"},
		{"raw_drop on veth", "hw = 'veth'\n[stack]\nraw_drop = true\n",
			"scenario x.toml:3: stack.raw_drop: not modelled for hw veth, expected a NIC (ixgbe, i40e)"},
		{"negative busy_read", "[stack]\nbusy_read = -1\n",
			"scenario x.toml:2: stack.busy_read: -1 out of range, expected 0..1048576"},
		{"busy_poll_budget too big", "[stack]\nbusy_read = 50\nbusy_poll_budget = 100000\n",
			"scenario x.toml:3: stack.busy_poll_budget: 100000 out of range, expected 0..65536"},
		{"prefer_busy_poll without busy_read", "[stack]\nprefer_busy_poll = true\n",
			"scenario x.toml:2: stack.prefer_busy_poll: true without busy polling, expected stack.busy_read > 0"},
		{"negative skb_defer_max", "[stack]\nskb_defer_max = -1\n",
			"scenario x.toml:2: stack.skb_defer_max: -1 out of range, expected 0..1048576"},
		{"dotted key wrong type", "name = 'x'\nnic.ring_size = 'a'\n",
			"scenario x.toml:2: nic.ring_size: wrong type: TOML value is a string, expected an integer"},
		{"inline table wrong type", "name = 'x'\nnic = { queues = 1, ring_size = 1.5 }\n",
			"scenario x.toml:2: nic.ring_size: wrong type: TOML value is a float, expected an integer"},
		{"table given a value", "nic = 5\n",
			"scenario x.toml:1: nic: wrong type: TOML value is an integer, expected a table"},
		{"array of tables", "[[nic]]\nqueues = 1\n",
			"scenario x.toml:1: nic: wrong type: TOML value is an array of tables, expected a table"},
		{"array element", "[nic]\nirq_affinity = [0, \"1\"]\n",
			"scenario x.toml:2: nic.irq_affinity: element 1: wrong type: TOML value is a string, expected an integer"},
		{"bool", "[kernel]\ntick = 1\n",
			"scenario x.toml:2: kernel.tick: wrong type: TOML value is an integer, expected a boolean (true or false)"},
		{"float field takes an integer", "[noise]\ncost_cv = 2\n",
			"scenario x.toml:2: noise.cost_cv: 2 out of range, expected 0..1"},
		{"NaN", "[noise]\ncost_cv = nan\n",
			"scenario x.toml:2: noise.cost_cv: NaN out of range, expected 0..1"},
		{"inf rate", "[traffic]\nthread_max_pps = inf\n",
			"scenario x.toml:2: traffic.thread_max_pps: +Inf, expected a finite value > 0"},
		{"NaN rate", "[traffic]\nrate = \"nan\"\n",
			`scenario x.toml:2: traffic.rate: "nan", expected "line" or a positive packet rate like 1.5Mpps, 500kpps or 250000`},
		{"negative cost", "[xdp]\ncost_ns = -1.0\n",
			"scenario x.toml:2: xdp.cost_ns: -1, expected a finite value >= 0"},
		{"NaN fraction", "[xdp]\nrule = \"fraction\"\nfractions = [0.5, nan]\nfraction_actions = [\"drop\", \"pass\"]\n",
			"scenario x.toml:3: xdp.fractions: NaN, expected >= 0"},
		{"negative seed", "seed = -1\n",
			"scenario x.toml:1: seed: -1 out of range, expected a non-negative 64-bit integer"},
		{"duration as integer", "duration = 5\n",
			`scenario x.toml:1: duration: wrong type: TOML value is an integer, expected a duration string like "50ms"`},
		{"duration as datetime", "duration = 1979-05-27T07:32:00Z\n",
			`scenario x.toml:1: duration: wrong type: TOML value is a datetime, expected a duration string like "50ms"`},
		{"cpus 0 without irq_affinity", "cpus = 0\n",
			"scenario x.toml:1: cpus: 0 out of range, expected 1..256"},
		{"huge queue count", "[nic]\nqueues = 100000000000\n",
			"scenario x.toml:2: nic.queues: 100000000000 out of range, expected 1..64"},
		{"veth ring_max", "hw = \"veth\"\ncosts = \"bdw-e5-1650v4\"\n[nic]\nring_size = 512\n",
			"scenario x.toml:4: nic.ring_size: 512 out of range, expected 64..256 (ring_max of hw profile veth)"},
		{"unknown cost profile", "hw = \"i40e\"\ncosts = \"nope\"\n",
			`scenario x.toml:2: costs: hw: no cost profile "nope" (have ` + strings.Join(hw.CostProfiles(), ", ") + ")"},
		{"clock out of range", "cpu_ghz = 0.1\n",
			"scenario x.toml:1: cpu_ghz: 0.1 out of range, expected 0 (the cost profile's clock) or 0.5..10"},
		{"clock NaN", "cpu_ghz = nan\n",
			"scenario x.toml:1: cpu_ghz: NaN out of range, expected 0 (the cost profile's clock) or 0.5..10"},
		{"sweep value", "[sweep]\n\"nic.ring_size\" = 1\n",
			`scenario x.toml:1: sweep."nic.ring_size": wrong type: TOML value is an integer, expected an array`},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			s, err := Parse("x.toml", []byte(test.src))
			if s != nil {
				t.Errorf("Parse returned a spec with the error")
			}
			if err == nil || err.Error() != test.want {
				t.Errorf("Parse(%q):\n got %v\nwant %s", test.src, err, test.want)
			}
		})
	}
}

// TestSetErrors shows the error text for bad --set flags: each names the flag.
func TestSetErrors(t *testing.T) {
	const b = "scenario builtin:xdp-drop-ixgbe: "
	tests := []struct {
		name  string
		sets  []string
		field string
		want  string
	}{
		{"unknown key", []string{"nic.ring_sise=1024"}, "nic.ring_sise",
			b + "nic.ring_sise: --set nic.ring_sise=1024: unknown key; did you mean nic.ring_size?"},
		{"no equals sign", []string{"nic.ring_size"}, "nic.ring_size",
			b + `nic.ring_size: --set "nic.ring_size": expected key=value`},
		{"empty key", []string{"=5"}, "",
			b + `--set "=5": expected key=value`},
		{"bad value", []string{"nic.irq_affinity=[0,"}, "nic.irq_affinity",
			b + `nic.irq_affinity: --set nic.irq_affinity=[0,: cannot parse value "[0,"`},
		{"two values", []string{"cpus=1\nnic.ring_size=64"}, "cpus",
			b + "cpus: --set cpus=1\nnic.ring_size=64: cannot parse value \"1\\nnic.ring_size=64\": more than one TOML value"},
		{"wrong type", []string{"nic.ring_size=abc"}, "nic.ring_size",
			b + "nic.ring_size: --set nic.ring_size=abc: wrong type: TOML value is a string, expected an integer"},
		{"wrong element type", []string{`nic.irq_affinity=[0,"x"]`}, "nic.irq_affinity",
			b + `nic.irq_affinity: --set nic.irq_affinity=[0,"x"]: element 1: wrong type: TOML value is a string, expected an integer`},
		{"bad duration", []string{"duration=fast"}, "duration",
			b + `duration: --set duration=fast: invalid duration "fast", expected a duration like "50ms" or "250us"`},
		{"a table", []string{"nic=5"}, "nic",
			b + "nic: --set nic=5: nic is a table, expected one of its fields such as nic.queues"},
		{"out of range", []string{"nic.ring_size=8192"}, "nic.ring_size",
			b + "nic.ring_size: 8192 out of range, expected 64..4096 (ring_max of hw profile ixgbe) (from --set nic.ring_size=8192)"},
		{"out of range, last set wins", []string{"nic.ring_size=1024", "nic.ring_size=32"}, "nic.ring_size",
			b + "nic.ring_size: 32 out of range, expected 64..4096 (ring_max of hw profile ixgbe) (from --set nic.ring_size=32)"},
		{"out of range element", []string{"xdp.flow_actions=[\"drop\",\"bogus\"]"}, "xdp.flow_actions[1]",
			b + `xdp.flow_actions[1]: "bogus", expected one of drop, pass, tx, redirect, aborted (from --set xdp.flow_actions=["drop","bogus"])`},
		{"devmap egress not a NIC", []string{"xdp.program=redirect-map", "xdp.egress=veth"}, "xdp.egress",
			b + `xdp.egress: "veth", expected one of i40e, ixgbe (from --set xdp.egress=veth)`},
		{"unknown scheduler", []string{"kernel.sched=bfs"}, "kernel.sched",
			b + `kernel.sched: "bfs", expected one of eevdf, cfs (from --set kernel.sched=bfs)`},
		{"unknown hw", []string{"hw=e1000"}, "hw",
			b + `hw: hw: no NIC profile "e1000" (have ` + strings.Join(hw.Names(), ", ") + ") (from --set hw=e1000)"},
		{"sweep is not settable", []string{"sweep.nic.ring_size=[1]"}, "sweep.nic.ring_size",
			b + "sweep.nic.ring_size: --set sweep.nic.ring_size=[1]: unknown key; did you mean nic.ring_size?"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			s, err := Load("xdp-drop-ixgbe", test.sets...)
			if s != nil {
				t.Errorf("Load returned a spec with the error")
			}
			if err == nil || err.Error() != test.want {
				t.Fatalf("Load(xdp-drop-ixgbe, %q):\n got %v\nwant %s", test.sets, err, test.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != test.field || e.Line != 0 {
				t.Errorf("Load(xdp-drop-ixgbe, %q): %#v, want Field %q and Line 0 (a --set has no line)", test.sets, e, test.field)
			}
		})
	}
}

func TestBuiltinsLoad(t *testing.T) {
	names := Builtins()
	if len(names) < 2 {
		t.Fatalf("Builtins() = %q, want at least xdp-drop-ixgbe and xdp-drop-i40e", names)
	}
	found := false
	for _, name := range names {
		found = found || name == Default
		t.Run(name, func(t *testing.T) {
			s, err := Load(name)
			if err != nil {
				t.Fatalf("Load(%q): %v", name, err)
			}
			if s.Name != name {
				t.Errorf("Load(%q).Name = %q, want the file's name", name, s.Name)
			}
			if s.Description == "" {
				t.Errorf("Load(%q) has no description", name)
			}
			if s.ringMax == 0 {
				t.Errorf("Load(%q): ring_max of hw profile %q not recorded", name, s.HW)
			}
			if len(s.NIC.IRQAffinity) == 0 {
				t.Errorf("Load(%q): no IRQ affinity after defaults", name)
			}
		})
	}
	if !found {
		t.Errorf("Default %q is not among the built-ins %q", Default, names)
	}
}

// TestSet overrides fields by dotted path, with the same validation.
func TestSet(t *testing.T) {
	tests := []struct {
		sets  []string
		check func(*Spec) bool
	}{
		{[]string{"traffic.threads=1"}, func(s *Spec) bool { return s.Traffic.Threads == 1 }},
		{[]string{"nic.ring_size=1024"}, func(s *Spec) bool { return s.NIC.RingSize == 1024 }},
		{[]string{"nic.ring_size = 4096"}, func(s *Spec) bool { return s.NIC.RingSize == 4096 }},
		{[]string{"nic.queues=2", "nic.irq_affinity=[0,1]"}, func(s *Spec) bool {
			return s.NIC.Queues == 2 && reflect.DeepEqual(s.NIC.IRQAffinity, []int{0, 1})
		}},
		{[]string{`duration="50ms"`}, func(s *Spec) bool { return s.Duration.Duration == 50*time.Millisecond }},
		{[]string{"duration=50ms"}, func(s *Spec) bool { return s.Duration.Duration == 50*time.Millisecond }},
		{[]string{"warmup=0s"}, func(s *Spec) bool { return s.Warmup.Duration == 0 }},
		{[]string{"napi.gro_flush_timeout=20us"}, func(s *Spec) bool { return s.NAPI.GROFlushTimeout.Duration == 20*time.Microsecond }},
		{[]string{"xdp.program=pass"}, func(s *Spec) bool { return s.XDP.Program == "pass" }},
		{[]string{"traffic.rate=1.5Mpps"}, func(s *Spec) bool { return s.Traffic.Rate == "1.5Mpps" }},
		{[]string{`name="hello world"`}, func(s *Spec) bool { return s.Name == "hello world" }},
		{[]string{"kernel.ksoftirqd_defer=true"}, func(s *Spec) bool { return s.Kernel.KsoftirqdDefer }},
		{[]string{"nic.adaptive_itr=false", "nic.itr_usecs=50"}, func(s *Spec) bool { return !s.NIC.AdaptiveITR && s.NIC.ITRUsecs == 50 }},
		{[]string{"noise.cost_cv=0.1"}, func(s *Spec) bool { return s.Noise.CostCV == 0.1 }},
		{[]string{"nic.max_pps=20000000"}, func(s *Spec) bool { return s.NIC.MaxPPS == 2e7 }},
		{[]string{"traffic.thread_max_pps=5e6"}, func(s *Spec) bool { return s.Traffic.ThreadMaxPPS == 5e6 }},
		{[]string{"seed=42"}, func(s *Spec) bool { return s.Seed == 42 }},
		{[]string{"napi.threaded=true", "napi.thread_cpus=[1]"}, func(s *Spec) bool { return s.NAPI.Threaded && s.NAPI.ThreadCPUs[0] == 1 }},
		{[]string{`xdp.flow_actions=["drop","pass"]`}, func(s *Spec) bool { return reflect.DeepEqual(s.XDP.FlowActions, []string{"drop", "pass"}) }},
		{[]string{"traffic.threads=1", "traffic.threads=3"}, func(s *Spec) bool { return s.Traffic.Threads == 3 }},
		// hw switches the profile: defaults and the ring_size range follow it.
		{[]string{"hw=i40e", "nic.ring_size=8160"}, func(s *Spec) bool { return s.HW == "i40e" && s.NIC.RingSize == 8160 && s.ringMax == 8160 }},
		{[]string{"nic.ring_size=4096", "hw=i40e"}, func(s *Spec) bool { return s.NIC.RingSize == 4096 }},
	}
	for _, test := range tests {
		t.Run(strings.Join(test.sets, " "), func(t *testing.T) {
			s, err := Load(Default, test.sets...)
			if err != nil {
				t.Fatalf("Load(%s, %q): %v", Default, test.sets, err)
			}
			if !test.check(s) {
				t.Errorf("Load(%s, %q): override not applied: %+v", Default, test.sets, s)
			}
		})
	}
}

// TestSetEveryField sets every field Fields() lists to the value it already
// has, and checks that this is accepted and changes nothing: --set reaches
// every field, and the TOML round trip of applySets is lossless. Setting
// stack.rcvbuf also records that it was set (SO_RCVBUF), which is the one
// difference allowed.
func TestSetEveryField(t *testing.T) {
	want, err := Load("xdp-drop-i40e")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Fields() {
		v := fieldValue(t, want, f)
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(map[string]any{"v": v}); err != nil {
			t.Fatalf("%s: encode %v: %v", f, v, err)
		}
		val := strings.TrimSpace(strings.TrimPrefix(buf.String(), "v = "))
		set := f + "=" + val
		got, err := Load("xdp-drop-i40e", set)
		if err != nil {
			t.Errorf("Load(xdp-drop-i40e, %q): %v", set, err)
			continue
		}
		if set := got.RcvbufSet(); set != (f == "stack.rcvbuf") {
			t.Errorf("Load(xdp-drop-i40e, %q): RcvbufSet %v", f, set)
		}
		got.rcvbufSet = false
		// %+v: an empty list set as [] equals the nil list it replaced.
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Errorf("Load(xdp-drop-i40e, %q) changed the spec:\n got %s\nwant %s", set, g, w)
		}
	}
}

func fieldValue(t *testing.T, s *Spec, path string) any {
	t.Helper()
	v := reflect.ValueOf(s).Elem()
	for _, p := range strings.Split(path, ".") {
		f, ok := fieldByTag(v.Type(), p)
		if !ok {
			t.Fatalf("Fields() lists %q, but %q is no field", path, p)
		}
		v = v.FieldByIndex(f.Index)
	}
	if v.Kind() == reflect.Slice && v.Len() == 0 {
		return []any{}
	}
	return v.Interface()
}

// TestSetOnFileKeepsLines: a validation error for a value from the file
// names its line even when --set changed other fields; a value that came
// from --set has no line in the file.
func TestSetOnFileKeepsLines(t *testing.T) {
	_, err := Load("testdata/bad/out-of-range.toml", "traffic.threads=1")
	want := "scenario testdata/bad/out-of-range.toml:6: nic.ring_size: 8192 out of range, expected 64..4096 (ring_max of hw profile ixgbe)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	s, err := Load("testdata/bad/out-of-range.toml", "nic.ring_size=2048")
	if err != nil || s.NIC.RingSize != 2048 {
		t.Errorf("Load(out-of-range.toml, nic.ring_size=2048) = %v, %v; want ring_size 2048", s, err)
	}
	_, err = Load("testdata/ok.toml", "hw=ixgbe")
	want = "scenario testdata/ok.toml: nic.ring_size: 8160 out of range, expected 64..4096 (ring_max of hw profile ixgbe)"
	if err == nil || !strings.HasPrefix(err.Error(), "scenario testdata/ok.toml:8: nic.ring_size: 8160 out of range") {
		t.Errorf("got %v\nwant the ring_size line of the file (8): %s", err, want)
	}
}

func TestLoadFile(t *testing.T) {
	s, err := Load("testdata/ok.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s.HW != "i40e" || s.CPUs != 4 || s.NIC.Queues != 2 || s.NIC.RingSize != 8160 || s.Traffic.Threads != 4 {
		t.Errorf("Load(testdata/ok.toml) = %+v", s)
	}
	// Unset fields keep the defaults: kernel and hw profile.
	if s.NAPI.Budget != 300 || s.NAPI.Weight != 64 || s.Kernel.HZ != 1000 || s.NIC.ITRUsecs == 0 {
		t.Errorf("defaults not applied: napi %+v kernel %+v itr %d", s.NAPI, s.Kernel, s.NIC.ITRUsecs)
	}
	// A file and a built-in of the same content give the same spec.
	_, src, err := Source("xdp-drop-ixgbe")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Parse("a.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("xdp-drop-ixgbe")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Parse of the built-in's source differs from Load")
	}
}

func TestDefaultIRQAffinity(t *testing.T) {
	s, err := Parse("x.toml", []byte("cpus = 3\n[nic]\nqueues = 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 0, 1}; !reflect.DeepEqual(s.NIC.IRQAffinity, want) {
		t.Errorf("IRQAffinity = %v, want %v (queue i -> CPU i %% cpus)", s.NIC.IRQAffinity, want)
	}
}

func TestFindLine(t *testing.T) {
	src := []byte("name = 'x'\nnic.queues = 2\n[ nic ] # c\nring_size = 1\n[traffic]\nthreads=1\n")
	tests := []struct {
		sec, key string
		want     int
	}{
		{"", "name", 1},
		{"nic", "queues", 2},
		{"nic", "ring_size", 4},
		{"traffic", "threads", 6},
		{"traffic", "ring_size", 0},
		{"", "missing", 0},
	}
	for _, test := range tests {
		if got := findLine(src, test.sec, test.key); got != test.want {
			t.Errorf("findLine(_, %q, %q) = %d, want %d", test.sec, test.key, got, test.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"line", 0, true}, {"", 0, true}, {"LINE", 0, true},
		{"1Mpps", 1e6, true}, {"1.5mpps", 1.5e6, true}, {"500kpps", 5e5, true}, {"250000", 250000, true},
		{"2G", 2e9, true}, {"0", 0, false}, {"-1Mpps", 0, false}, {"fast", 0, false},
		{"nan", 0, false}, {"inf", 0, false}, {"1e308g", 0, false},
	}
	for _, test := range tests {
		got, err := ParseRate(test.in)
		if (err == nil) != test.ok || got != test.want {
			t.Errorf("ParseRate(%q) = %g, %v; want %g, ok=%v", test.in, got, err, test.want, test.ok)
		}
	}
}
