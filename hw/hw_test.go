package hw

import (
	"strings"
	"testing"
)

// TestBuiltinProfiles loads every built-in NIC with its default cost
// profile and checks the noise defaults are valid.
func TestBuiltinProfiles(t *testing.T) {
	for _, n := range Names() {
		p, err := Load(n, "")
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if p.Noise.CV <= 0 || p.Noise.Source == "" {
			t.Errorf("%s (%s): noise defaults %+v, want a cv with its source", n, p.CostName, p.Noise)
		}
	}
	for _, c := range CostProfiles() {
		if _, err := LoadCosts(c); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
}

// TestCostNoiseValidation checks the errors for bad noise fields: each names
// the file and the field, and says what was expected.
func TestCostNoiseValidation(t *testing.T) {
	base, err := files.ReadFile("profiles/cpu/bdw-e5-1650v4.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"cost cv out of range", `napi_poll          = { call = 40,`, `napi_poll          = { cv = 1.5, call = 40,`,
			"hw: x.toml: costs.napi_poll.cv: 1.5 out of range, expected 0..1"},
		{"cost dist unknown", `napi_poll          = { call = 40,`, `napi_poll          = { dist = "weibull", call = 40,`,
			`hw: x.toml: costs.napi_poll.dist: "weibull", expected normal, lognormal or gamma`},
		{"default dist unknown", `dist = "lognormal"`, `dist = "pareto"`,
			`hw: x.toml: noise.dist: "pareto", expected normal, lognormal or gamma`},
		{"default cv negative", "\ncv = 0.05\n", "\ncv = -0.05\n",
			"hw: x.toml: noise.cv: -0.05 out of range, expected 0..1"},
		{"default without source", `origin = "assumed"
source = "default 5%`, `origin = "assumed"
xsource = "default 5%`, "hw: x.toml: unknown key noise.xsource"},
		{"default cv without its source", `
source = "default 5%`, `
# source = "default 5%`, "hw: x.toml: noise.source: missing (every cost must say where it comes from)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := string(base)
			if !strings.Contains(s, c.from) {
				t.Fatalf("profile lacks %q", c.from)
			}
			_, err := ParseCosts("x.toml", []byte(strings.Replace(s, c.from, c.to, 1)))
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// FuzzParseCosts: any input is a valid profile or an error naming the
// file, never a panic.
func FuzzParseCosts(f *testing.F) {
	base, _ := files.ReadFile("profiles/cpu/bdw-e5-1650v4.toml")
	f.Add(base)
	f.Add([]byte("name = \"x\"\n[noise]\ncv = 2\n"))
	f.Add([]byte("name = \"x\"\n[costs]\na = { call = -1, origin = \"assumed\", source = \"s\" }\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseCosts("f.toml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "hw: f.toml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if p.Validate() != nil {
			t.Fatal("parsed profile does not validate")
		}
	})
}

// TestAtClock: a profile run at another clock scales every cost as a cycle
// count, keeps delays, and refuses a profile without a clock.
func TestAtClock(t *testing.T) {
	p, err := Load("ixgbe", "fc-epyc-2vcpu")
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.AtClock(p.GHz / 2)
	if err != nil {
		t.Fatal(err)
	}
	if q.GHz != p.GHz/2 {
		t.Errorf("GHz %g, want %g", q.GHz, p.GHz/2)
	}
	// p itself is unchanged: each cost of q is compared with p's
	for _, name := range p.CostNames() {
		c, d := p.Costs[name], q.Costs[name]
		f := 2.0
		if name == "idle_wake_latency" {
			f = 1 // a delay outside the CPU
		}
		if d.Call != f*c.Call || d.Pkt != f*c.Pkt || d.Byte != f*c.Byte {
			t.Errorf("%s at half the clock: %+v, want %g x %+v", name, d, f, c)
		}
		if d.Origin != c.Origin || d.Source != c.Source {
			t.Errorf("%s: origin and source changed", name)
		}
	}
	if p.Costs["ip_rcv"] == q.Costs["ip_rcv"] {
		t.Errorf("AtClock changed nothing")
	}
	p.GHz = 0
	if _, err := p.AtClock(2); err == nil || !strings.Contains(err.Error(), "has no ghz") {
		t.Errorf("profile without ghz: %v, want an error naming it", err)
	}
}
