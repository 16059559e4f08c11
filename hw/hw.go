package hw

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed profiles/nic/*.toml profiles/cpu/*.toml
var files embed.FS

// Origin says where a value comes from.
type Origin string

// Origins.
const (
	Reference  Origin = "reference"
	Measured   Origin = "measured"
	Calibrated Origin = "calibrated"
	Assumed    Origin = "assumed" // no source: a default to be measured or calibrated
)

// Cost is the cost of one kernel function: a part per call and a part per
// packet (or per byte, for copies), in nanoseconds on the profile's CPU.
type Cost struct {
	Call   float64 `toml:"call"`
	Pkt    float64 `toml:"pkt"`
	Byte   float64 `toml:"byte"`
	Origin Origin  `toml:"origin"`
	Source string  `toml:"source"`
	Date   string  `toml:"date,omitempty"`
	// Machine names the machine a measured or calibrated value comes from.
	Machine string `toml:"machine,omitempty"`
	// CV and Dist are the cost's run-to-run noise when a scenario turns on
	// noise.profile: the coefficient of variation of the factor drawn per
	// step, and its distribution (normal, lognormal or gamma). Absent, the
	// profile's [noise] defaults apply.
	CV   *float64 `toml:"cv,omitempty"`
	Dist string   `toml:"dist,omitempty"`
}

// NoiseDefaults are a cost profile's default cost noise, for costs without
// their own cv or dist.
type NoiseDefaults struct {
	CV     float64 `toml:"cv"`
	Dist   string  `toml:"dist"`
	Origin Origin  `toml:"origin"`
	Source string  `toml:"source"`
}

// Value is a NIC or kernel constant with its origin.
type Value struct {
	V      float64 `toml:"v"`
	Origin Origin  `toml:"origin"`
	Source string  `toml:"source"`
}

// NIC holds a device's constants.
type NIC struct {
	Driver string `toml:"driver"` // ixgbe, i40e, veth
	// LineRateGbps is the link speed; 0 for veth (no wire).
	LineRateGbps Value `toml:"line_rate_gbps"`
	// WireOverhead is preamble+SFD+IFG (20 B) plus FCS (4 B) added to pkt_size.
	WireOverhead Value `toml:"wire_overhead_bytes"`
	RingSize     Value `toml:"ring_size"`
	RingMax      Value `toml:"ring_max"`
	// RefillBatch: ixgbe IXGBE_RX_BUFFER_WRITE 16; i40e count/2 (0 here means ring/2).
	RefillBatch Value `toml:"refill_batch"`
	// ITR: initial interval in us and whether adaptive ITR is on.
	ITRUsecs    Value `toml:"itr_usecs"`
	AdaptiveITR bool  `toml:"adaptive_itr"`
	// MaxRSSQueues: RSS spreads over at most this many queues.
	MaxRSSQueues Value `toml:"max_rss_queues"`
	// MaxPPS is the NIC's packet-rate capability (0 = none).
	MaxPPS Value `toml:"max_pps"`
	// Checksum says whether the NIC validates L4 checksums (CHECKSUM_UNNECESSARY).
	Checksum bool `toml:"rx_checksum"`
	// IRQDelay is the time from the ITR deadline to the handler starting (MSI-X delivery).
	IRQDelayNS Value `toml:"irq_delay_ns"`
}

// NICProfile is a device profile file (profiles/nic/NAME.toml).
type NICProfile struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// CostProfile names the default CPU cost profile (profiles/cpu/NAME.toml).
	CostProfile string `toml:"cost_profile"`
	NIC         NIC    `toml:"nic"`
}

// CostProfile is a CPU cost profile file (profiles/cpu/NAME.toml).
type CostProfile struct {
	Name        string  `toml:"name"`
	Description string  `toml:"description"`
	CPU         string  `toml:"cpu"`
	GHz         float64 `toml:"ghz"`
	// Cores is the machine's online CPU count, which scales the scheduler's
	// tunables (0: the scenario's CPUs).
	Cores int `toml:"cores"`
	// Noise is the default cost noise (used with noise.profile).
	Noise NoiseDefaults `toml:"noise"`
	// Costs by kernel function name, e.g. "driver_rx".
	Costs map[string]Cost `toml:"costs"`
}

// Profile is a NIC profile joined with a cost profile.
type Profile struct {
	Name     string
	NIC      NIC
	CostName string
	CPU      string
	GHz      float64
	Cores    int
	Noise    NoiseDefaults
	Costs    map[string]Cost
}

// CostOf returns the named cost, or an error naming the profile and function.
func (p *Profile) CostOf(fn string) (Cost, error) {
	c, ok := p.Costs[fn]
	if !ok {
		return Cost{}, fmt.Errorf("hw: profile %s has no cost %q", p.Name, fn)
	}
	return c, nil
}

// Must returns the named cost and panics if it is missing (profiles are
// checked by Validate at load, so a missing cost is a programming error).
func (p *Profile) Must(fn string) Cost {
	c, err := p.CostOf(fn)
	if err != nil {
		panic(err)
	}
	return c
}

// delayCosts are profile items that are delays outside the CPU (a VM's
// wake-up latency), not work: they do not change with the clock.
var delayCosts = map[string]bool{"idle_wake_latency": true}

// AtClock returns a copy of the profile with its CPU run at ghz instead of
// its own clock: every cost is taken as a cycle count and scales by
// GHz/ghz. It is a first-order what-if (the memory-bound share of a cost
// does not scale with the clock in reality); delays are kept as they are.
func (p *Profile) AtClock(ghz float64) (*Profile, error) {
	if p.GHz <= 0 {
		return nil, fmt.Errorf("hw: cost profile %s has no ghz, so it cannot be run at %g GHz", p.CostName, ghz)
	}
	if !(ghz > 0) {
		return nil, fmt.Errorf("hw: clock %g GHz, expected a positive value", ghz)
	}
	q := *p
	q.GHz = ghz
	f := p.GHz / ghz
	q.Costs = make(map[string]Cost, len(p.Costs))
	for name, c := range p.Costs {
		if !delayCosts[name] {
			c.Call, c.Pkt, c.Byte = c.Call*f, c.Pkt*f, c.Byte*f
		}
		q.Costs[name] = c
	}
	return &q, nil
}

// CostNames returns the profile's cost names, sorted.
func (p *Profile) CostNames() []string {
	names := make([]string, 0, len(p.Costs))
	for k := range p.Costs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Names lists the built-in NIC profiles, sorted.
func Names() []string { return list("profiles/nic") }

// CostNames lists the built-in cost profiles, sorted.
func CostProfiles() []string { return list("profiles/cpu") }

func list(dir string) []string {
	ents, _ := files.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(out)
	return out
}

// Load returns the built-in NIC profile name joined with cost profile costs
// (its default cost profile when costs is "").
func Load(name, costs string) (*Profile, error) {
	b, err := files.ReadFile("profiles/nic/" + name + ".toml")
	if err != nil {
		return nil, fmt.Errorf("hw: no NIC profile %q (have %s)", name, strings.Join(Names(), ", "))
	}
	var np NICProfile
	if err := decodeStrict("hw/profiles/nic/"+name+".toml", b, &np); err != nil {
		return nil, err
	}
	if costs == "" {
		costs = np.CostProfile
	}
	cp, err := LoadCosts(costs)
	if err != nil {
		return nil, err
	}
	return &Profile{Name: np.Name, NIC: np.NIC, CostName: cp.Name, CPU: cp.CPU, GHz: cp.GHz, Cores: cp.Cores, Noise: cp.Noise, Costs: cp.Costs}, nil
}

// LoadCosts returns the built-in cost profile name.
func LoadCosts(name string) (*CostProfile, error) {
	b, err := files.ReadFile("profiles/cpu/" + name + ".toml")
	if err != nil {
		return nil, fmt.Errorf("hw: no cost profile %q (have %s)", name, strings.Join(CostProfiles(), ", "))
	}
	return ParseCosts("hw/profiles/cpu/"+name+".toml", b)
}

// ParseCosts decodes and validates a cost profile; file names it in errors.
func ParseCosts(file string, b []byte) (*CostProfile, error) {
	var cp CostProfile
	if err := decodeStrict(file, b, &cp); err != nil {
		return nil, err
	}
	if err := cp.Validate(); err != nil {
		return nil, fmt.Errorf("hw: %s: %w", file, err)
	}
	return &cp, nil
}

func decodeStrict(file string, b []byte, v any) error {
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(v)
	if err != nil {
		return fmt.Errorf("hw: %s: %w", file, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return fmt.Errorf("hw: %s: unknown key %s", file, u[0])
	}
	return nil
}

// Validate checks that every cost has an origin and a source, and that
// every function the models use is present.
func (p *CostProfile) Validate() error {
	if p.Name == "" {
		return fmt.Errorf("name: missing")
	}
	names := make([]string, 0, len(p.Costs))
	for k := range p.Costs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		c := p.Costs[n]
		switch c.Origin {
		case Reference, Measured, Calibrated, Assumed:
		default:
			return fmt.Errorf("costs.%s.origin: %q, expected reference, measured, calibrated or assumed", n, c.Origin)
		}
		if c.Source == "" {
			return fmt.Errorf("costs.%s.source: missing (every cost must say where it comes from)", n)
		}
		if c.Call < 0 || c.Pkt < 0 || c.Byte < 0 {
			return fmt.Errorf("costs.%s: negative cost", n)
		}
		if err := checkNoise("costs."+n, c.CV, c.Dist); err != nil {
			return err
		}
	}
	if err := checkNoise("noise", &p.Noise.CV, p.Noise.Dist); err != nil {
		return err
	}
	if p.Noise.CV > 0 && p.Noise.Source == "" {
		return fmt.Errorf("noise.source: missing (every cost must say where it comes from)")
	}
	for _, n := range RequiredCosts() {
		if _, ok := p.Costs[n]; !ok {
			return fmt.Errorf("costs.%s: missing (required by the models)", n)
		}
	}
	return nil
}

// Encode writes p as TOML (used by calibrate to write a calibrated profile).
func (p *CostProfile) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RequiredCosts returns the functions every cost profile must cost.
func RequiredCosts() []string {
	return []string{
		"irq_handler", "net_rx_action", "napi_poll", "driver_rx", "driver_refill",
		"bpf_prog_run_xdp", "xdp_return_frame", "xdp_tx", "xdp_do_redirect",
		"xdp_do_flush", "napi_complete_done",
	}
}

// checkNoise validates a cv (nil = unset) and a distribution name.
func checkNoise(field string, cv *float64, dist string) error {
	if cv != nil && !(*cv >= 0 && *cv <= 1) {
		return fmt.Errorf("%s.cv: %v out of range, expected 0..1", field, *cv)
	}
	switch dist {
	case "", "normal", "lognormal", "gamma":
		return nil
	}
	return fmt.Errorf("%s.dist: %q, expected normal, lognormal or gamma", field, dist)
}
