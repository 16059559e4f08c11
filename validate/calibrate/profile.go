package calibrate

import (
	"fmt"
	"github.com/rxsim/rxsim/validate"
	"math"
	"strings"

	"github.com/rxsim/rxsim/hw"
)

// Meta describes where a calibration comes from.
type Meta struct {
	Date    string // YYYY-MM-DD
	Machine string // e.g. "AMD EPYC, 2 cores, kernel 6.18.44"
	Files   []string
}

// Calibrated returns a copy of the report's base profile with every cost of
// the fitted stages scaled, marked calibrated with date and machine.
func Calibrated(rep *Report, m Meta) *hw.CostProfile {
	cp := *rep.Profile
	cp.Costs = make(map[string]hw.Cost, len(rep.Profile.Costs))
	for k, v := range rep.Profile.Costs {
		cp.Costs[k] = v
	}
	nfit := 0
	var held []string
	for _, r := range rep.Rows {
		if r.InFit {
			nfit++
		} else {
			held = append(held, r.Name)
		}
	}
	heldOut := "none held out"
	if len(held) > 0 {
		heldOut = "held out: " + strings.Join(held, ", ")
	}
	factor := map[string]float64{}
	why := map[string][]string{}
	var order []string
	for _, f := range rep.Fitted {
		for _, n := range f.Stage.Costs {
			if _, ok := factor[n]; !ok {
				factor[n] = 1
				order = append(order, n)
			}
			factor[n] *= f.Scale
			why[n] = append(why[n], fmt.Sprintf("%s x%.3f", f.Stage.Name, f.Scale))
		}
	}
	for _, n := range order {
		c := cp.Costs[n]
		prior := fmt.Sprintf("call %g pkt %g byte %g (%s)", c.Call, c.Pkt, c.Byte, c.Origin)
		k := factor[n]
		c.Call, c.Pkt, c.Byte = round(c.Call*k), round(c.Pkt*k), round(c.Byte*k)
		c.Origin = hw.Calibrated
		c.Date = m.Date
		c.Machine = m.Machine
		c.Source = fmt.Sprintf("rxsim calibrate: %s of the prior %s, fitted to %d measured rates of %s (%s); prior source: %s",
			strings.Join(why[n], " and "), prior, nfit, strings.Join(m.Files, ", "), heldOut, priorSource(c.Source))
		cp.Costs[n] = c
	}
	return &cp
}

// priorSource drops the calibration prefix of an already calibrated source,
// so that repeated calibrations do not nest.
func priorSource(s string) string {
	const key = "; prior source: "
	if i := strings.LastIndex(s, key); i >= 0 && strings.HasPrefix(s, "rxsim calibrate:") {
		return s[i+len(key):]
	}
	return s
}

func round(v float64) float64 {
	if v >= 10 {
		return math.Round(v*10) / 10
	}
	return math.Round(v*1000) / 1000
}

// WriteProfile encodes cp, checks that it decodes as a valid profile, and
// writes it to path atomically (temporary file in the same directory,
// fsync, rename).
func WriteProfile(path string, cp *hw.CostProfile, header string) error {
	b, err := cp.Encode()
	if err != nil {
		return fmt.Errorf("calibrate: encode profile: %w", err)
	}
	if header != "" {
		var hb strings.Builder
		for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
			hb.WriteString("# " + l + "\n")
		}
		b = append([]byte(hb.String()), b...)
	}
	if _, err := hw.ParseCosts(path, b); err != nil {
		return fmt.Errorf("calibrate: calibrated profile does not validate: %w", err)
	}
	if err := validate.WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("calibrate: write %s: %w", path, err)
	}
	return nil
}
