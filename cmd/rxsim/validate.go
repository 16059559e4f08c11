package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
	"github.com/rxsim/rxsim/validate"
)

// cmdValidate implements `rxsim validate ...` (see validate.CLI). A returned
// error has an ExitCode() int method: 2 bad flags, 3 XDP attach failure,
// 4 BPF load failure, 6 interface refused, 7 missing privilege, 1 otherwise.
//
// When a positional argument names a configuration that is also a built-in
// rxsim scenario (veth-xdp-drop, ...) and the output is text, the matching
// simulation runs after the measurement and a table prints, per metric, the
// measured value, the simulated one and the error in %.
func cmdValidate(stdout, stderr io.Writer, args []string) error {
	scen, save, side := sideBySide(args)
	if !side {
		return validate.CLI(stdout, stderr, args)
	}
	tmp := ""
	if save == "" {
		f, err := os.CreateTemp("", "rxsim-validate-*.json")
		if err != nil {
			return err
		}
		f.Close()
		tmp = f.Name()
		defer os.Remove(tmp)
		args = append(append([]string(nil), args...), "--save", tmp)
		save = tmp
	}
	if err := validate.CLI(stdout, stderr, args); err != nil {
		return err
	}
	set, err := validate.LoadMeasurements(save)
	if err != nil {
		return err
	}
	for _, m := range set.Results {
		name, gen, _ := strings.Cut(m.Scenario, "/")
		if name != scen {
			continue
		}
		sets := []string{}
		if gen != "" {
			sets = append(sets, fmt.Sprintf("traffic.generator=%q", gen))
		}
		s, err := scenarios.Load(name, sets...)
		if err != nil {
			return err
		}
		r, err := simulate(s, s.Seed)
		if err != nil {
			return err
		}
		costs := s.Costs
		if p, err := hw.Load(s.HW, s.Costs); err == nil {
			costs = p.CostName
		}
		fmt.Fprintf(stdout, "\nmeasured vs simulated: %s (simulation: rxsim run %s --set traffic.generator=%s, cost profile %s)\n", m.Scenario, name, gen, costs)
		writeSideBySide(stdout, m, r)
	}
	return nil
}

// sideBySide reports whether args name a built-in scenario for a text run
// (not --json, --iface, --all, --list or --cleanup), the scenario, and the
// --save path if one is given.
func sideBySide(args []string) (scen, save string, ok bool) {
	if len(args) > 0 && validate.Subcommand(args[0]) {
		return "", "", false // tcp-rr is also a scenario's name
	}
	builtin := map[string]bool{}
	for _, n := range scenarios.Builtins() {
		builtin[n] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch f := trimDashes(strings.SplitN(a, "=", 2)[0]); {
		case strings.HasPrefix(a, "-") && (f == "json" || f == "iface" || f == "all" || f == "list" || f == "cleanup" || f == "h" || f == "help"):
			return "", "", false
		case strings.HasPrefix(a, "-") && f == "save":
			if strings.Contains(a, "=") {
				save = strings.SplitN(a, "=", 2)[1]
			} else if i+1 < len(args) {
				save = args[i+1]
				i++
			}
		case !strings.HasPrefix(a, "-") && builtin[a] && scen == "":
			scen = a
		}
	}
	if save != "" {
		save = filepath.Clean(save)
	}
	return scen, save, scen != ""
}

// sideMetric is one row of the measured-vs-simulated table.
type sideMetric struct {
	name          string
	measured, sim float64
}

func sideMetrics(m *validate.Result, r *host.Result) []sideMetric {
	rows := []sideMetric{
		{"rx_pps", m.RxPPS, r.RxPPS},
		{"delivered_pps", m.DeliveredPPS, r.DeliveredPPS},
	}
	if m.CPUMap != nil && r.Cpumap != nil {
		rows = append(rows,
			sideMetric{"cpumap.enqueue_pps", m.CPUMap.EnqueuePPS, r.Cpumap.EnqueuePPS},
			sideMetric{"cpumap.drop_pps", m.CPUMap.DropPPS, r.Cpumap.DropPPS},
			sideMetric{"cpumap.kthread_pps", m.CPUMap.KthreadPPS, r.Cpumap.KthreadPPS})
	}
	reasons := map[string]bool{}
	for k := range m.Drops {
		reasons[k] = true
	}
	for k := range r.Drops {
		reasons[k] = true
	}
	for _, k := range sortedKeys(reasons) {
		rows = append(rows, sideMetric{"drops." + k, m.Drops[k], r.Drops[k]})
	}
	return rows
}

// writeSideBySide prints measured, simulated and the error in % per metric.
func writeSideBySide(w io.Writer, m *validate.Result, r *host.Result) {
	fmt.Fprintf(w, "  %-24s %14s %14s %9s\n", "metric", "measured", "simulated", "error")
	for _, row := range sideMetrics(m, r) {
		errs := "-"
		if row.measured != 0 {
			errs = fmt.Sprintf("%+.1f%%", 100*(row.sim-row.measured)/row.measured)
		} else if row.sim == 0 {
			errs = "0.0%"
		}
		fmt.Fprintf(w, "  %-24s %14s %14s %9s\n", row.name,
			groupThousands(int64(math.Round(row.measured))), groupThousands(int64(math.Round(row.sim))), errs)
	}
}
