package scenarios

import (
	"reflect"
	"sort"
	"strings"
	"time"
)

// defaults returns a Spec with the kernel's defaults (kernel-rx-path.md §11);
// hardware defaults are filled from the hw profile after decoding.
// RmemDefault is net.core.rmem_default (SK_RMEM_MAX, 212992): the
// sk_rcvbuf of a socket that does not set SO_RCVBUF, as udp_sink and
// rxsim validate's listener do not.
const RmemDefault = 212992

// TCPRmemDefault is net.ipv4.tcp_rmem[1]: the sk_rcvbuf a TCP socket
// starts with when the application does not set SO_RCVBUF; receive-buffer
// autotuning then grows it up to tcp_rmem[2].
const TCPRmemDefault = 131072

// TCPRmemMax is net.ipv4.tcp_rmem[2]'s default since v6.16 (commit
// 572be9bf9d0d "tcp: increase tcp_rmem[2] to 32 MB"; 6 MB before; the
// validation VM's 6.18 kernel reads 33554432).
const TCPRmemMax = 32 << 20

func defaults() *Spec {
	return &Spec{
		HW:       "ixgbe",
		CPUs:     2,
		Duration: Duration{100 * time.Millisecond},
		Warmup:   Duration{10 * time.Millisecond},
		Seed:     1,
		Kernel:   Kernel{HZ: 1000, Tick: true, Sched: "eevdf"},
		NIC:      NIC{Queues: 1, AdaptiveITR: true, GRO: true},
		NAPI:     NAPI{Budget: 300, Weight: 64},
		XDP:      XDP{Program: "none", Rule: "all", Action: "drop", Mode: "native", ProgramMode: "l4-hash", RemoteAction: "disabled"},
		Cpumap:   Cpumap{QSize: 2048, Delivery: "gro", BulkSize: 8, Batch: 8},
		Backlog:  Backlog{MaxBacklog: 1000, DevWeight: 64},
		GRO:      GRO{NormalBatch: 8, MaxSize: 65536},
		Stack:    Stack{Listen: false, Rcvbuf: RmemDefault, SkbDeferMax: 128, TCPRmemMax: TCPRmemMax, TCPModerateRcvbuf: true},
		App:      App{Batch: 1},
		Traffic: Traffic{Kind: "pktgen", PktSize: 60, Threads: 1, Burst: 0, Flows: 1, Rate: "line",
			ThreadMaxPPS: 12e6, MSS: 1448, TSOBytes: 65536, Streams: 1, ReqSize: 1, RespSize: 1,
			RemoteDelay: Duration{10 * time.Microsecond}, WireDelay: Duration{2 * time.Microsecond},
			Generator: "live"},
	}
}

// Fields returns every settable dotted field path of a Spec, sorted.
func Fields() []string {
	var out []string
	walkFields(reflect.TypeOf(Spec{}), "", &out)
	sort.Strings(out)
	return out
}

func walkFields(t reflect.Type, prefix string, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" || tag == "sweep" {
			continue
		}
		name := prefix + tag
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration{}) {
			walkFields(f.Type, name+".", out)
			continue
		}
		*out = append(*out, name)
	}
}

func knownField(k string) bool {
	for _, f := range Fields() {
		if f == k {
			return true
		}
	}
	return false
}

// suggest returns "; did you mean X?" for the closest known field.
func suggest(k string) string {
	if len(k) > 128 { // lev is quadratic; nothing is that long
		return ""
	}
	lk := strings.ToLower(k) // "RING_SIZE" is ring_size
	best, bd := "", 1<<30
	for _, f := range candidates() {
		if d := lev(lk, f); d < bd {
			best, bd = f, d
		}
	}
	if best != "" && bd <= len(k)/2+1 {
		return "; did you mean " + best + "?"
	}
	return ""
}

// candidates returns the field paths and the table names ("nic") that
// suggest chooses from.
func candidates() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range Fields() {
		if sec, _ := splitField(f); sec != "" && !seen[sec] {
			seen[sec] = true
			out = append(out, sec)
		}
		out = append(out, f)
	}
	return out
}

// tableField returns the first field of table k ("nic" -> "nic.queues"), and
// false if k is not a table.
func tableField(k string) (string, bool) {
	t, ok := fieldType(strings.Split(k, "."))
	if !ok || t.Kind() != reflect.Struct || t == durationType || t.NumField() == 0 {
		return "", false
	}
	tag, _, _ := strings.Cut(t.Field(0).Tag.Get("toml"), ",")
	return k + "." + tag, true
}

func lev(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
