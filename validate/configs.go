package validate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Config is a built-in validation configuration: a real receive path on the
// veth harness that the simulator can rebuild as a scenario. All run the
// generator on CPU 0 with 60-byte frames (64 on the wire with FCS) and one
// flow; the sender's veth NAPI therefore runs in softirq on CPU 0 unless
// threaded NAPI is on.
type Config struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Program     Program      `json:"program"`
	Mode        ProgramMode  `json:"program_mode,omitempty"`
	CPUs        []int        `json:"cpus,omitempty"`
	Qsize       int          `json:"qsize,omitempty"`
	Remote      RemoteAction `json:"remote_action,omitempty"`
	Net         NetSettings  `json:"net"`
	Listener    bool         `json:"listener"`
	ListenerCPU int          `json:"listener_cpu"`
	// Gens are the generators that make sense for the configuration.
	Gens []GenKind `json:"gens"`
}

// Options returns run options for the configuration with generator g.
func (c Config) Options(g GenKind) Options {
	o := Options{Config: c.Name, Program: c.Program, Mode: c.Mode, CPUs: c.CPUs, Qsize: c.Qsize,
		RemoteAction: c.Remote, Net: c.Net, Listener: c.Listener, ListenerCPU: c.ListenerCPU,
		Gen: GenOptions{Kind: g, PktSize: 60, Flows: 1, CPU: 0}, XDPMode: "native"}
	if c.Program == ProgRedirectCPU && g == GenUDP {
		// Locally generated skbs lose CHECKSUM_PARTIAL on the way through
		// cpumap and fail with InCsumErrors unless the sender computes it.
		o.Net.SenderTxCsumOff = true
	}
	o.Defaults()
	return o
}

// Configs returns the built-in configurations sorted by name.
func Configs() []Config {
	all := []GenKind{GenAFPacket, GenLive, GenUDP}
	cs := []Config{
		{Name: "veth-xdp-drop", Description: "native XDP_DROP on the receiving veth; NAPI and XDP in softirq on the sending CPU 0",
			Program: ProgDrop, Net: NetSettings{ThreadedCPU: -1}, Gens: all},
		{Name: "veth-xdp-pass-udp", Description: "native XDP_PASS, UDP to port 9 read by a blocking recv pinned to CPU 1; socket senders' skbs are copied into an xdp_buff; the sender keeps tx checksum offload (no cpumap)",
			Program: ProgPass, Net: NetSettings{ThreadedCPU: -1}, Listener: true, ListenerCPU: 1, Gens: all},
		{Name: "veth-cpumap-udp", Description: "XDP_REDIRECT into a cpumap entry for CPU 1 (qsize 192, no-touch, no cpumap program), UDP to port 9 with no listener (NoPorts); for the UDP generator the sender's tx checksum offload is off",
			Program: ProgRedirectCPU, Mode: ModeNoTouch, CPUs: []int{1}, Qsize: 192, Remote: RemoteDisabled, Net: NetSettings{ThreadedCPU: -1}, Gens: all},
		{Name: "veth-cpumap-udp-listener", Description: "as veth-cpumap-udp, with a blocking recv on CPU 1 sharing the CPU with the cpumap kthread",
			Program: ProgRedirectCPU, Mode: ModeNoTouch, CPUs: []int{1}, Qsize: 192, Remote: RemoteDisabled, Net: NetSettings{ThreadedCPU: -1}, Listener: true, ListenerCPU: 1, Gens: all},
		{Name: "veth-threaded-napi-drop", Description: "native XDP_DROP with threaded NAPI on the receiving veth, the napi/<dev> kthread pinned to CPU 1; the veth ring (256) overflows with fast senders",
			Program: ProgDrop, Net: NetSettings{Threaded: true, ThreadedCPU: 1}, Gens: all},
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

// LookupConfig returns the built-in configuration name.
func LookupConfig(name string) (Config, bool) {
	for _, c := range Configs() {
		if c.Name == name {
			return c, true
		}
	}
	return Config{}, false
}

// ReadMachine describes this host from /proc/cpuinfo and uname.
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if k == "model name" && m.CPUModel == "" {
				m.CPUModel = v
			}
			if k == "cpu MHz" && m.MHz == 0 {
				m.MHz, _ = strconv.ParseFloat(v, 64)
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.TrimSpace(string(b))
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if kc, err := ReadKernelConfig(); err == nil {
		m.KernelConfig = kc
	}
	return m
}

// MeasurementSet is what --save writes: the machine, when, the command,
// and every result with its settings.
type MeasurementSet struct {
	Format  string    `json:"format"` // "rxsim-validate/1"
	Machine Machine   `json:"machine"`
	Created time.Time `json:"created"`
	Command string    `json:"command"`
	Results []*Result `json:"results"`
}

// MeasurementFormat identifies the JSON layout of a MeasurementSet.
const MeasurementFormat = "rxsim-validate/1"

// Save writes set to path atomically (temporary file in the same directory,
// fsync, rename): a reader sees the old file or the whole new one.
func Save(path string, set *MeasurementSet) error {
	b, err := json.MarshalIndent(set, "", " ")
	if err != nil {
		return fmt.Errorf("validate: encode measurements: %w", err)
	}
	if err := WriteFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("validate: save %s: %w", path, err)
	}
	return nil
}

// WriteFileAtomic writes b to path through a temporary file in the same
// directory (fsync, mode 0644, rename), so a reader sees the old file or
// the whole new one and a failure leaves nothing half-written.
func WriteFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// LoadMeasurements reads a file written by Save.
func LoadMeasurements(path string) (*MeasurementSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s MeasurementSet
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("validate: %s: %w", path, err)
	}
	if s.Format != MeasurementFormat {
		return nil, fmt.Errorf("validate: %s: format %q, want %q", path, s.Format, MeasurementFormat)
	}
	return &s, nil
}

// Find returns the result for scenario ("<config>/<gen>", e.g.
// "veth-cpumap-udp/live"), or nil.
func (s *MeasurementSet) Find(scenario string) *Result {
	for _, r := range s.Results {
		if r.Scenario == scenario {
			return r
		}
	}
	return nil
}
