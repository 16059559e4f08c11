package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rxsim/rxsim/hw"
)

type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func ferr(field, format string, a ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, a...)}
}

// maxQueues is the most RX queues a scenario may have.
const maxQueues = 64

// Ring sizes: IXGBE_MIN_RXD and I40E_MIN_NUM_DESCRIPTORS are 64; the largest
// ring_max of the profiles is I40E_MAX_NUM_DESCRIPTORS_XL710 8160.
const (
	minRingSize    = 64
	anyRingMaxSize = 8160
)

func (s *Spec) checkRingSize() error {
	if s.ringMax <= 0 {
		return rangeInt("nic.ring_size", s.NIC.RingSize, minRingSize, anyRingMaxSize)
	}
	if s.NIC.RingSize < minRingSize || s.NIC.RingSize > s.ringMax {
		return ferr("nic.ring_size", "%d out of range, expected %d..%d (ring_max of hw profile %s)", s.NIC.RingSize, minRingSize, s.ringMax, s.HW)
	}
	return nil
}

func rangeInt(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return ferr(field, "%d out of range, expected %d..%d", v, lo, hi)
	}
	return nil
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return ferr(field, "%q, expected one of %s", v, strings.Join(allowed, ", "))
}

func cpuList(field string, cpus []int, n int) error {
	for _, c := range cpus {
		if c < 0 || c >= n {
			return ferr(field, "CPU %d out of range, expected 0..%d (cpus = %d)", c, n-1, n)
		}
	}
	return nil
}

// validate checks every field; the first problem is returned.
func (s *Spec) validate() error {
	checks := []func() error{
		func() error { return rangeInt("cpus", s.CPUs, 1, 256) },
		func() error {
			if s.CPUGHz != 0 && !(s.CPUGHz >= 0.5 && s.CPUGHz <= 10) {
				return ferr("cpu_ghz", "%g out of range, expected 0 (the cost profile's clock) or 0.5..10", s.CPUGHz)
			}
			if s.CPUGHz != 0 && s.profGHz <= 0 {
				return ferr("cpu_ghz", "cost profile %s states no ghz to scale from", s.Costs)
			}
			return nil
		},
		func() error {
			if s.Duration.Duration <= 0 || s.Duration.Duration > time.Hour {
				return ferr("duration", "%s out of range, expected > 0 and <= 1h", s.Duration.Duration)
			}
			return nil
		},
		func() error {
			if s.Warmup.Duration < 0 {
				return ferr("warmup", "%s, expected >= 0", s.Warmup.Duration)
			}
			return nil
		},
		func() error { return oneOf("kernel.hz", strconv.Itoa(s.Kernel.HZ), "100", "250", "300", "1000") },
		func() error { return oneOf("kernel.sched", s.Kernel.Sched, "eevdf", "cfs") },
		func() error { return rangeInt("nic.queues", s.NIC.Queues, 1, maxQueues) },
		s.checkRingSize,
		func() error { return rangeInt("nic.itr_usecs", s.NIC.ITRUsecs, 0, 8160) },
		func() error { return cpuList("nic.irq_affinity", s.NIC.IRQAffinity, s.CPUs) },
		func() error { return rangeInt("napi.netdev_budget", s.NAPI.Budget, 1, 1<<20) },
		func() error { return rangeInt("napi.netdev_budget_usecs", s.NAPI.BudgetUsecs, 0, 1<<20) },
		func() error { return rangeInt("napi.weight", s.NAPI.Weight, 1, 512) },
		func() error { return cpuList("napi.thread_cpus", s.NAPI.ThreadCPUs, s.CPUs) },
		func() error { return rangeInt("napi.napi_defer_hard_irqs", s.NAPI.DeferHardIRQs, 0, 1<<20) },
		func() error {
			return oneOf("xdp.program", s.XDP.Program, "none", "drop", "pass", "tx", "redirect-cpu", "redirect-map", "rule")
		},
		func() error { return oneOf("xdp.rule", s.XDP.Rule, "all", "flow", "fraction") },
		func() error { return oneOf("xdp.action", s.XDP.Action, verdicts...) },
		func() error { return eachOneOf("xdp.flow_actions", s.XDP.FlowActions, verdicts...) },
		func() error { return eachOneOf("xdp.fraction_actions", s.XDP.FractionActions, verdicts...) },
		s.checkFractions,
		func() error { return oneOf("xdp.mode", s.XDP.Mode, "native", "skb") },
		func() error { return cpuList("xdp.cpus", s.XDP.RedirectCPUs, s.CPUs) },
		s.checkEgress,
		func() error {
			if s.XDP.Program == "redirect-cpu" && len(s.XDP.RedirectCPUs) == 0 {
				return ferr("xdp.cpus", "empty, expected at least one target CPU for redirect-cpu")
			}
			return nil
		},
		func() error {
			return oneOf("xdp.program_mode", s.XDP.ProgramMode, "no-touch", "touch", "round-robin", "l4-hash")
		},
		func() error {
			return oneOf("xdp.remote_action", s.XDP.RemoteAction, "disabled", "drop", "pass", "redirect")
		},
		func() error { return rangeInt("cpumap.qsize", s.Cpumap.QSize, 1, 16384) },
		func() error {
			return oneOf("cpumap.delivery", s.Cpumap.Delivery, "single", "list", "gro", "napi", "backlog")
		},
		func() error { return rangeInt("cpumap.bulk_size", s.Cpumap.BulkSize, 1, 64) },
		func() error { return rangeInt("cpumap.batch", s.Cpumap.Batch, 1, 64) },
		func() error { return rangeInt("backlog.netdev_max_backlog", s.Backlog.MaxBacklog, 1, 1<<24) },
		func() error { return rangeInt("backlog.dev_weight", s.Backlog.DevWeight, 1, 1<<16) },
		func() error { return cpuList("backlog.rps_cpus", s.Backlog.RPSCPUs, s.CPUs) },
		func() error { return rangeInt("gro.normal_batch", s.GRO.NormalBatch, 0, 1<<16) },
		func() error { return rangeInt("gro.max_size", s.GRO.MaxSize, 1500, 524280) },
		func() error { return rangeInt("stack.rcvbuf", s.Stack.Rcvbuf, 2048, 1<<30) },
		func() error { return rangeInt("stack.skb_defer_max", s.Stack.SkbDeferMax, 0, 1<<20) },
		func() error { return rangeInt("stack.tcp_rmem_max", s.Stack.TCPRmemMax, 4096, 1<<30) },
		func() error { return rangeInt("stack.busy_read", s.Stack.BusyRead, 0, 1<<20) },
		func() error { return rangeInt("stack.busy_poll_budget", s.Stack.BusyPollBudget, 0, 1<<16) },
		func() error {
			if s.Stack.BusyRead == 0 && s.Stack.PreferBusyPoll {
				return ferr("stack.prefer_busy_poll", "true without busy polling, expected stack.busy_read > 0")
			}
			if s.Stack.BusyRead == 0 && s.Stack.BusyPollBudget > 0 {
				return ferr("stack.busy_poll_budget", "%d without busy polling, expected stack.busy_read > 0", s.Stack.BusyPollBudget)
			}
			return nil
		},
		func() error {
			if s.Stack.RawDrop && s.HW == "veth" {
				return ferr("stack.raw_drop", "not modelled for hw veth, expected a NIC (ixgbe, i40e)")
			}
			return nil
		},
		func() error {
			if s.Stack.Truesize == 0 {
				return nil
			}
			return rangeInt("stack.truesize", s.Stack.Truesize, 256, 1<<17)
		},
		func() error { return cpuList("app.cpus", s.App.CPUs, s.CPUs) },
		func() error { return rangeInt("app.batch", s.App.Batch, 1, 1024) },
		func() error { return oneOf("traffic.kind", s.Traffic.Kind, "pktgen", "udp", "tcp_stream", "tcp_rr") },
		func() error { return rangeInt("traffic.pkt_size", s.Traffic.PktSize, 60, 9000) },
		func() error { return rangeInt("traffic.threads", s.Traffic.Threads, 1, 64) },
		func() error { return rangeInt("traffic.burst", s.Traffic.Burst, 0, 1024) },
		func() error { return rangeInt("traffic.flows", s.Traffic.Flows, 1, 1<<20) },
		func() error {
			if _, err := ParseRate(s.Traffic.Rate); err != nil {
				return ferr("traffic.rate", "%v", err)
			}
			return nil
		},
		func() error {
			if !(s.Traffic.ThreadMaxPPS > 0) || math.IsInf(s.Traffic.ThreadMaxPPS, 0) {
				return ferr("traffic.thread_max_pps", "%g, expected a finite value > 0", s.Traffic.ThreadMaxPPS)
			}
			return nil
		},
		func() error {
			if s.Traffic.Count < 0 {
				return ferr("traffic.count", "%d, expected >= 0", s.Traffic.Count)
			}
			return nil
		},
		func() error { return rangeFloat("traffic.jitter", s.Traffic.Jitter, 0, 1) },
		func() error { return oneOf("traffic.generator", s.Traffic.Generator, "live", "afpacket", "udp") },
		func() error { return cpuList("traffic.gen_cpu", []int{s.Traffic.GenCPU}, s.CPUs) },
		func() error { return rangeInt("traffic.streams", s.Traffic.Streams, 1, 4096) },
		func() error { return rangeInt("traffic.mss", s.Traffic.MSS, 88, 9000) },
		func() error { return rangeInt("traffic.tso_bytes", s.Traffic.TSOBytes, s.Traffic.MSS, 524280) },
		func() error { return rangeInt("traffic.req_size", s.Traffic.ReqSize, 1, 1<<20) },
		func() error { return rangeInt("traffic.resp_size", s.Traffic.RespSize, 1, 1<<20) },
		func() error { return nonNegative("nic.max_pps", s.NIC.MaxPPS) },
		func() error { return nonNegative("xdp.cost_ns", s.XDP.CostNS) },
		func() error { return rangeFloat("noise.cost_cv", s.Noise.CostCV, 0, 1) },
		func() error { return rangeFloat("noise.irq_jitter", s.Noise.IRQJitter, 0, 1) },
		func() error {
			if d := s.Noise.TimerJitter.Duration; d < 0 || d > time.Second {
				return ferr("noise.timer_jitter", "%v out of range, expected 0..1s", d)
			}
			return nil
		},
		s.checkBackground,
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

var verdicts = []string{"drop", "pass", "tx", "redirect", "aborted"}

func eachOneOf(field string, vs []string, allowed ...string) error {
	for i, v := range vs {
		if err := oneOf(fmt.Sprintf("%s[%d]", field, i), v, allowed...); err != nil {
			return err
		}
	}
	return nil
}

func rangeFloat(field string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) { // also rejects NaN
		return ferr(field, "%g out of range, expected %g..%g", v, lo, hi)
	}
	return nil
}

// nonNegative checks a float that must be finite and >= 0 (0 = the profile's value).
func nonNegative(field string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return ferr(field, "%g, expected a finite value >= 0", v)
	}
	return nil
}

func (s *Spec) checkFractions() error {
	if s.XDP.Rule != "fraction" {
		return nil
	}
	if len(s.XDP.Fractions) != len(s.XDP.FractionActions) || len(s.XDP.Fractions) == 0 {
		return ferr("xdp.fractions", "%d values for %d fraction_actions, expected the same non-zero number", len(s.XDP.Fractions), len(s.XDP.FractionActions))
	}
	sum := 0.0
	for _, f := range s.XDP.Fractions {
		if !(f >= 0) {
			return ferr("xdp.fractions", "%g, expected >= 0", f)
		}
		sum += f
	}
	if !(sum >= 0.999 && sum <= 1.001) { // also rejects NaN and Inf
		return ferr("xdp.fractions", "sum %g, expected 1", sum)
	}
	return nil
}

// ParseRate parses a traffic rate: "line" (0) or pps such as "1.5Mpps",
// "500kpps", "250000".
func ParseRate(r string) (float64, error) {
	s := strings.TrimSpace(strings.ToLower(r))
	if s == "line" || s == "" {
		return 0, nil
	}
	mult := 1.0
	s = strings.TrimSuffix(s, "pps")
	switch {
	case strings.HasSuffix(s, "m"):
		mult, s = 1e6, strings.TrimSuffix(s, "m")
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "g"):
		mult, s = 1e9, strings.TrimSuffix(s, "g")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v*mult, 0) {
		return 0, fmt.Errorf("%q, expected \"line\" or a positive packet rate like 1.5Mpps, 500kpps or 250000", r)
	}
	return v * mult, nil
}

func (s *Spec) checkBackground() error {
	if len(s.Noise.Background) > s.CPUs {
		return ferr("noise.background", "%d values for %d CPUs, expected at most one per CPU", len(s.Noise.Background), s.CPUs)
	}
	for i, v := range s.Noise.Background {
		if err := rangeFloat(fmt.Sprintf("noise.background[%d]", i), v, 0, 0.95); err != nil {
			return err
		}
	}
	return nil
}

// checkEgress: redirect-map sends out of a NIC (a profile with a wire), and
// xdp.egress names one.
func (s *Spec) checkEgress() error {
	if s.XDP.Program != "redirect-map" {
		return nil
	}
	if s.HW == "veth" {
		return ferr("xdp.program", "redirect-map needs a NIC as the receiving device (hw ixgbe or i40e), not veth")
	}
	if s.XDP.Egress == "" {
		return nil
	}
	var nics []string
	for _, n := range hw.Names() {
		if n != "veth" {
			nics = append(nics, n)
		}
	}
	return oneOf("xdp.egress", s.XDP.Egress, nics...)
}
