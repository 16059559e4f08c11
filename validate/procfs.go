package validate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// SoftnetRow is one CPU's row of /proc/net/softnet_stat
// (net/core/net-procfs.c softnet_seq_show).
type SoftnetRow struct {
	CPU         int
	Processed   uint64 // packets through __netif_receive_skb (XDP drops excluded)
	Dropped     uint64 // backlog full
	TimeSqueeze uint64 // net_rx_action ran out of budget or time
	ReceivedRPS uint64 // RPS IPIs received
	FlowLimit   uint64
}

// ParseSoftnet parses /proc/net/softnet_stat: one row per online CPU, hex
// columns. The 13th column, where present, is the CPU number; otherwise the
// row index is used.
func ParseSoftnet(r io.Reader) ([]SoftnetRow, error) {
	var rows []SoftnetRow
	sc := bufio.NewScanner(r)
	for i := 0; sc.Scan(); i++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			i--
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("validate: softnet_stat row %d: %d columns, want >= 10", i, len(f))
		}
		v := make([]uint64, len(f))
		for j, s := range f {
			x, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("validate: softnet_stat row %d column %d: %w", i, j+1, err)
			}
			v[j] = x
		}
		row := SoftnetRow{CPU: i, Processed: v[0], Dropped: v[1], TimeSqueeze: v[2], ReceivedRPS: v[9]}
		if len(v) > 10 {
			row.FlowLimit = v[10]
		}
		if len(v) > 12 {
			row.CPU = int(v[12])
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// SNMP holds /proc/net/snmp as protocol -> field -> value, e.g.
// s["Udp"]["NoPorts"].
type SNMP map[string]map[string]int64

// Get returns s[proto][field], 0 when absent.
func (s SNMP) Get(proto, field string) int64 { return s[proto][field] }

// ParseSNMP parses /proc/net/snmp: pairs of lines "Proto: names..." and
// "Proto: values...".
func ParseSNMP(r io.Reader) (SNMP, error) {
	out := SNMP{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var hdr []string
	var hdrProto string
	for sc.Scan() {
		line := sc.Text()
		proto, rest, ok := strings.Cut(line, ":")
		if !ok {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return nil, fmt.Errorf("validate: snmp: line without protocol: %q", line)
		}
		f := strings.Fields(rest)
		if hdr == nil || hdrProto != proto {
			hdr, hdrProto = f, proto
			continue
		}
		if len(f) != len(hdr) {
			return nil, fmt.Errorf("validate: snmp %s: %d values for %d names", proto, len(f), len(hdr))
		}
		m := map[string]int64{}
		for i, s := range f {
			x, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("validate: snmp %s %s: %w", proto, hdr[i], err)
			}
			m[hdr[i]] = x
		}
		out[proto] = m
		hdr, hdrProto = nil, ""
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if hdr != nil {
		return nil, fmt.Errorf("validate: snmp %s: names without values", hdrProto)
	}
	return out, nil
}

// CPUTimes is one "cpuN" row of /proc/stat in USER_HZ ticks.
type CPUTimes struct {
	CPU                                                   int
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is the sum of all classes.
func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseProcStat parses the per-CPU rows of /proc/stat (the aggregate "cpu"
// row is skipped).
func ParseProcStat(r io.Reader) ([]CPUTimes, error) {
	var out []CPUTimes
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("validate: /proc/stat: bad row %q", f[0])
		}
		if len(f) < 9 {
			return nil, fmt.Errorf("validate: /proc/stat %s: %d columns, want >= 8 values", f[0], len(f)-1)
		}
		var v [8]uint64
		for i := range v {
			x, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("validate: /proc/stat %s column %d: %w", f[0], i+1, err)
			}
			v[i] = x
		}
		out = append(out, CPUTimes{CPU: n, User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]})
	}
	return out, sc.Err()
}

func readSoftnet() ([]SoftnetRow, error) {
	f, err := os.Open("/proc/net/softnet_stat")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSoftnet(f)
}

func readProcStat() ([]CPUTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseProcStat(f)
}
