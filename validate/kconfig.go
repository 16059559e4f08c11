package validate

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// KernelConfig is what the simulator's [kernel] section needs to know of
// the measured kernel's build configuration (/proc/config.gz).
type KernelConfig struct {
	// HZ is CONFIG_HZ (scenario kernel.hz).
	HZ int `json:"hz"`
	// IRQTimeAccounting is CONFIG_IRQ_TIME_ACCOUNTING (scenario
	// kernel.irq_time_accounting).
	IRQTimeAccounting bool `json:"irq_time_accounting"`
	// Preempt is the preemption model built as the default: none,
	// voluntary, full or lazy (CONFIG_PREEMPT_NONE/_VOLUNTARY/PREEMPT/_LAZY).
	Preempt string `json:"preempt,omitempty"`
}

// ReadKernelConfig reads /proc/config.gz (present when the kernel was
// built with CONFIG_IKCONFIG_PROC).
func ReadKernelConfig() (*KernelConfig, error) {
	return readKernelConfigFile("/proc/config.gz")
}

func readKernelConfigFile(path string) (*KernelConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kc, err := ParseKernelConfig(z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kc, nil
}

// ParseKernelConfig parses a kernel .config: CONFIG_HZ must be present
// and a positive integer; options that are "not set" or absent are off.
// Errors name the line and the option.
func ParseKernelConfig(r io.Reader) (*KernelConfig, error) {
	kc := &KernelConfig{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "CONFIG_HZ":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("line %d: CONFIG_HZ=%q: want a positive integer", line, v)
			}
			kc.HZ = n
		case "CONFIG_IRQ_TIME_ACCOUNTING":
			kc.IRQTimeAccounting = v == "y"
		case "CONFIG_PREEMPT_NONE", "CONFIG_PREEMPT_VOLUNTARY", "CONFIG_PREEMPT", "CONFIG_PREEMPT_LAZY":
			if v == "y" {
				kc.Preempt = preemptName[k]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if kc.HZ == 0 {
		return nil, fmt.Errorf("CONFIG_HZ: missing (want CONFIG_HZ=<ticks per second>)")
	}
	return kc, nil
}

var preemptName = map[string]string{
	"CONFIG_PREEMPT_NONE": "none", "CONFIG_PREEMPT_VOLUNTARY": "voluntary",
	"CONFIG_PREEMPT": "full", "CONFIG_PREEMPT_LAZY": "lazy",
}
