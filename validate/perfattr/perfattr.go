// Package perfattr attributes `perf record -a -g` samples of the receive
// path to the cost items of the model, so that a cost can be measured on
// this machine rather than assumed.
//
// Input is `perf script -F cpu,ip,sym` text or folded stacks ("cpuN;root;
// ...;leaf count" per line, optionally gzipped), which is how measurements
// are kept in testdata. Each sample goes to the category of the frame
// nearest its leaf that is a boundary (Rules), in the context of the first
// Contexts frame its stack holds anywhere (who ran it: the veth NAPI, the
// backlog, the reader, the sender).
package perfattr

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Stack is one distinct call stack of one CPU with its sample count.
// Frames run from the root to the leaf.
type Stack struct {
	CPU    int
	Frames []string
	Count  int
}

// Read reads perf script text or folded stacks, gzipped or not.
func Read(r io.Reader) ([]Stack, error) {
	br := bufio.NewReader(r)
	if b, _ := br.Peek(2); len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		br = bufio.NewReader(z)
	}
	if b, _ := br.Peek(3); string(b) == "cpu" {
		return readFolded(br)
	}
	return readScript(br)
}

// readScript parses `perf script -F cpu,ip,sym`: a "[NNN]" line, then one
// "ip sym" line per frame from the leaf up, then a blank line.
func readScript(r io.Reader) ([]Stack, error) {
	counts := map[string]*Stack{}
	var order []string
	cpu := -1
	var frames []string
	flush := func() {
		if cpu < 0 {
			return
		}
		slices.Reverse(frames)
		k := strconv.Itoa(cpu) + ";" + strings.Join(frames, ";")
		if s, ok := counts[k]; ok {
			s.Count++
		} else {
			counts[k] = &Stack{CPU: cpu, Frames: frames, Count: 1}
			order = append(order, k)
		}
		cpu, frames = -1, nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "["):
			flush()
			end := strings.IndexByte(line, ']')
			v, err := strconv.Atoi(strings.TrimSpace(line[1:max(end, 1)]))
			if end < 0 || err != nil {
				return nil, fmt.Errorf("perfattr: line %d: bad CPU field %q", n, line)
			}
			cpu = v
		case cpu < 0:
			return nil, fmt.Errorf("perfattr: line %d: frame before any [cpu] line", n)
		default:
			f := strings.Fields(line)
			sym := "?"
			if len(f) > 1 {
				sym = f[1]
			}
			frames = append(frames, sym)
		}
	}
	flush()
	out := make([]Stack, len(order))
	for i, k := range order {
		out[i] = *counts[k]
	}
	return out, sc.Err()
}

func readFolded(r io.Reader) ([]Stack, error) {
	var out []Stack
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		c, err := strconv.Atoi(line[i+1:])
		if i < 0 || err != nil || c < 1 {
			return nil, fmt.Errorf("perfattr: line %d: want \"cpuN;frames count\"", n)
		}
		f := strings.Split(line[:i], ";")
		cpu, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
		if !strings.HasPrefix(f[0], "cpu") || err != nil {
			return nil, fmt.Errorf("perfattr: line %d: stack does not start with cpuN", n)
		}
		out = append(out, Stack{CPU: cpu, Frames: f[1:], Count: c})
	}
	return out, sc.Err()
}

// WriteFolded writes stacks as folded lines, sorted, for testdata.
func WriteFolded(w io.Writer, stacks []Stack) error {
	lines := make([]string, len(stacks))
	for i, s := range stacks {
		lines[i] = fmt.Sprintf("cpu%d;%s %d", s.CPU, strings.Join(s.Frames, ";"), s.Count)
	}
	sort.Strings(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Rule maps a boundary frame to a category.
type Rule struct{ Frame, Category string }

// Context names who ran a sample: the first context whose frames all occur
// in the stack (and whose Not frames do not) wins.
type Context struct {
	Name string
	Any  []string // at least one of these frames
	Not  []string // none of these
}

// Rules are the receive-path categories of the TCP measurement: the frame
// nearest the leaf decides.
var Rules = []Rule{
	{"sock_def_readable", "wake"},
	{"__tcp_send_ack", "ack_tx"}, {"tcp_send_ack", "ack_tx"},
	{"tcp_v4_rcv", "tcp"}, {"tcp_v4_do_rcv", "tcp"},
	{"ip_list_rcv", "ip"}, {"ip_sublist_rcv", "ip"}, {"ip_rcv", "ip"}, {"ip_local_deliver", "ip"},
	{"__netif_receive_skb_list_core", "core"}, {"netif_receive_skb_list_internal", "core"},
	{"__netif_receive_skb", "core"}, {"netif_receive_skb", "core"}, {"gro_normal_list", "core"},
	{"gro_receive_skb", "gro"}, {"napi_gro_receive", "gro"},
	{"skb_pp_cow_data", "veth_copy"},
	{"veth_xdp_rcv", "veth_rcv"}, {"veth_poll", "napi"}, {"net_rx_action", "napi"}, {"process_backlog", "napi"},
	{"handle_softirqs", "softirq_other"},
	{"_copy_to_iter", "copy"},
	{"__skb_checksum_complete", "csum"}, {"__udp4_lib_rcv", "udp"},
	{"tcp_recvmsg", "recvmsg"}, {"tcp_recvmsg_locked", "recvmsg"},
	{"tcp_sendmsg", "send"},
}

// Contexts are who ran a sample in the TCP measurement.
var Contexts = []Context{
	{Name: "backlog", Any: []string{"process_backlog"}},
	{Name: "veth", Any: []string{"veth_poll"}},
	{Name: "reader", Any: []string{"tcp_recvmsg", "tcp_recvmsg_locked"}},
	{Name: "reader", Any: []string{"__release_sock"}, Not: []string{"tcp_sendmsg"}},
	{Name: "sender", Any: []string{"tcp_sendmsg"}},
	{Name: "cpumap", Any: []string{"cpu_map_kthread_run"}},
}

// Key is one cell of a Table.
type Key struct {
	CPU               int
	Context, Category string
}

// Table is samples per (CPU, context, category), with the total per CPU.
type Table struct {
	Cells map[Key]int
	Total map[int]int
}

// Attribute sorts the samples of stacks into categories.
func Attribute(stacks []Stack, rules []Rule, ctxs []Context) Table {
	cat := map[string]string{}
	for _, r := range rules {
		if _, ok := cat[r.Frame]; !ok {
			cat[r.Frame] = r.Category
		}
	}
	t := Table{Cells: map[Key]int{}, Total: map[int]int{}}
	for _, s := range stacks {
		c := "other"
		for i := len(s.Frames) - 1; i >= 0; i-- {
			if v, ok := cat[s.Frames[i]]; ok {
				c = v
				break
			}
		}
		t.Cells[Key{s.CPU, contextOf(s.Frames, ctxs), c}] += s.Count
		t.Total[s.CPU] += s.Count
	}
	return t
}

func contextOf(frames []string, ctxs []Context) string {
	has := func(names []string) bool {
		for _, n := range names {
			if slices.Contains(frames, n) {
				return true
			}
		}
		return false
	}
	for _, c := range ctxs {
		if has(c.Any) && !has(c.Not) {
			return c.Name
		}
	}
	return "other"
}

// Sum adds the cells matching any of the (context, category) pairs on
// every CPU.
func (t Table) Sum(pairs ...[2]string) int {
	n := 0
	for k, v := range t.Cells {
		for _, p := range pairs {
			if k.Context == p[0] && k.Category == p[1] {
				n += v
			}
		}
	}
	return n
}

// Write prints the table per CPU, largest cells first (cells under 0.1%
// of the CPU's samples are left out).
func (t Table) Write(w io.Writer) {
	cpus := make([]int, 0, len(t.Total))
	for c := range t.Total {
		cpus = append(cpus, c)
	}
	sort.Ints(cpus)
	for _, c := range cpus {
		fmt.Fprintf(w, "cpu%d: %d samples\n", c, t.Total[c])
		var keys []Key
		for k := range t.Cells {
			if k.CPU == c && t.Cells[k]*1000 >= t.Total[c] {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := t.Cells[keys[i]], t.Cells[keys[j]]
			if a != b {
				return a > b
			}
			return keys[i].Context+keys[i].Category < keys[j].Context+keys[j].Category
		})
		for _, k := range keys {
			fmt.Fprintf(w, "   %-8s %-14s %6d %5.1f%%\n", k.Context, k.Category, t.Cells[k], 100*float64(t.Cells[k])/float64(t.Total[c]))
		}
	}
}

// TCPReceive is the per-segment summary of a GRO-off TCP measurement:
// samples of TCP receive (tcp_v4_rcv and below, in softirq or in the
// reader's release_sock, without the wake-up) and of the core and IP
// layers for the same data segments, and their ratio.
type TCPReceive struct {
	TCP, CoreIP, Wake int
	Ratio             float64
}

// TCPReceiveOf computes TCPReceive from a table of the TCP measurement.
func TCPReceiveOf(t Table) TCPReceive {
	r := TCPReceive{
		TCP:    t.Sum([2]string{"veth", "tcp"}, [2]string{"reader", "tcp"}),
		CoreIP: t.Sum([2]string{"veth", "core"}, [2]string{"veth", "ip"}),
		Wake:   t.Sum([2]string{"veth", "wake"}, [2]string{"reader", "wake"}),
	}
	if r.CoreIP > 0 {
		r.Ratio = float64(r.TCP) / float64(r.CoreIP)
	}
	return r
}

// ACKTx counts the samples of the pure ACKs the receiver sent: stacks in
// __tcp_transmit_skb not called from the data path (tcp_write_xmit,
// tcp_sendmsg), plus the skb allocation under __tcp_send_ack (whose call
// of __tcp_transmit_skb is a tail call, so it does not show as a parent).
// TCPIP is the TCP/IP part and the allocation, Dev the device part under
// __dev_queue_xmit, Nested the softirq that ran inside the transmit (the
// peer receiving the ACK on this host, not part of sending it).
type ACKTx struct{ TCPIP, Dev, Nested int }

// ACKTxOf counts ACKTx over stacks.
func ACKTxOf(stacks []Stack) ACKTx {
	var a ACKTx
	for _, s := range stacks {
		i := slices.Index(s.Frames, "__tcp_transmit_skb")
		if i < 0 {
			if slices.ContainsFunc(s.Frames, func(f string) bool { return strings.HasPrefix(f, "__tcp_send_ack") }) {
				a.TCPIP += s.Count
			}
			continue
		}
		callers, callees := s.Frames[:i], s.Frames[i+1:]
		if slices.Contains(callers, "tcp_write_xmit") || slices.Contains(callers, "tcp_sendmsg") || slices.Contains(callers, "tcp_sendmsg_locked") {
			continue // data, not an ACK
		}
		switch {
		case slices.Contains(callees, "handle_softirqs"):
			a.Nested += s.Count
		case slices.Contains(callees, "__dev_queue_xmit"):
			a.Dev += s.Count
		default:
			a.TCPIP += s.Count
		}
	}
	return a
}

// TCPSplit divides the GRO-off TCP receive of the data segments (without
// sk_data_ready's wake-up) into tcp_v4_rcv's own part, tcp_v4_do_rcv in
// softirq and in the reader (the socket backlog), and tcp_add_backlog.
type TCPSplit struct{ Own, DoRcvSoftirq, DoRcvReader, AddBacklog int }

// TCPSplitOf counts TCPSplit over stacks.
func TCPSplitOf(stacks []Stack) TCPSplit {
	var s TCPSplit
	for _, st := range stacks {
		has := func(f string) bool { return slices.Contains(st.Frames, f) }
		if has("sock_def_readable") || has("process_backlog") {
			continue
		}
		switch {
		case has("veth_poll") && has("tcp_v4_rcv"):
			switch {
			case has("tcp_v4_do_rcv"):
				s.DoRcvSoftirq += st.Count
			case has("tcp_add_backlog"):
				s.AddBacklog += st.Count
			default:
				s.Own += st.Count
			}
		case (has("tcp_recvmsg") || has("tcp_recvmsg_locked")) && has("tcp_v4_do_rcv") && !has("veth_poll"):
			s.DoRcvReader += st.Count
		}
	}
	return s
}

// Rates are the counters, per second, of the run a perf profile sampled
// (validate/testdata/perf/tcp-gro-off.json).
type Rates struct {
	Skbs, Acks, BacklogCoalesce float64
	// RcvCoalesce is TcpExt TCPRcvCoalesce (0 if the run did not count it).
	RcvCoalesce float64
}

// TCPCostRatios are the TCP costs of a GRO-off run as multiples of what
// the core and IP receive cost per segment in the same run.
type TCPCostRatios struct {
	// Rcv is tcp_v4_rcv's own part per skb.
	Rcv float64
	// DoRcvCall is tcp_v4_do_rcv per call: once per skb, except for the
	// skbs coalesced into the socket backlog's tail (TCPBacklogCoalesce).
	DoRcvCall float64
	// SegsPerCall is segments per tcp_v4_do_rcv call.
	SegsPerCall float64
	// AddBacklog is tcp_add_backlog per backlogged skb.
	AddBacklog float64
	// ACKTCPIP is the TCP/IP part of a pure ACK, per ACK.
	ACKTCPIP float64
	// Backlogged is the share of skbs that went to the backlog: the
	// coalesced ones plus the backlog skbs the reader ran tcp_v4_do_rcv
	// for (the reader's share of tcp_v4_do_rcv samples, at the same cost
	// per call).
	Backlogged float64
}

// TCPCostsOf derives TCPCostRatios from the split of the TCP receive
// samples, the core+IP samples, the ACK samples and the run's rates. With
// GRO off an skb is one segment.
func TCPCostsOf(sp TCPSplit, coreIP int, ack ACKTx, r Rates) TCPCostRatios {
	per := float64(coreIP) / r.Skbs
	calls := r.Skbs - r.BacklogCoalesce
	doRcv := float64(sp.DoRcvSoftirq + sp.DoRcvReader)
	backlogged := r.BacklogCoalesce + float64(sp.DoRcvReader)/doRcv*calls
	return TCPCostRatios{
		Rcv:         float64(sp.Own) / r.Skbs / per,
		DoRcvCall:   doRcv / calls / per,
		SegsPerCall: r.Skbs / calls,
		AddBacklog:  float64(sp.AddBacklog) / backlogged / per,
		ACKTCPIP:    float64(ack.TCPIP) / r.Acks / per,
		Backlogged:  backlogged / r.Skbs,
	}
}

// Defer counts the samples of the deferred skb free (skb_attempt_defer_free,
// v5.19+) in a GRO-off TCP measurement: Push, skb_attempt_defer_free in the
// reader; Flush, skb_defer_free_flush in net_rx_action on the CPU that built
// the skbs; RecvCoreIP and CoreIP, the core+IP receive samples of the
// segments received on that CPU (the veth NAPI of the sender's CPU, which
// the caller names) and on all CPUs.
type Defer struct {
	Push int
	// FlushSkb and FlushSeg split skb_defer_free_flush: the samples in
	// skb_release_data (its frag loop, with the page returns under it) are
	// per segment buffer; the rest (the list walk, napi_consume_skb, the
	// head's free, skb_free_head) is per skb.
	FlushSkb, FlushSeg int
	RecvCoreIP, CoreIP int
}

// DeferOf counts Defer over stacks, with the skbs built on CPU recvCPU.
func DeferOf(stacks []Stack, recvCPU int) Defer {
	t := Attribute(stacks, Rules, Contexts)
	d := Defer{CoreIP: TCPReceiveOf(t).CoreIP}
	for _, cat := range []string{"core", "ip"} {
		d.RecvCoreIP += t.Cells[Key{recvCPU, "veth", cat}]
	}
	for _, st := range stacks {
		has := func(f string) bool { return slices.Contains(st.Frames, f) }
		switch {
		case has("skb_defer_free_flush") && has("skb_release_data") && !has("skb_free_head"):
			d.FlushSeg += st.Count
		case has("skb_defer_free_flush"):
			d.FlushSkb += st.Count
		case has("skb_attempt_defer_free"):
			d.Push += st.Count
		}
	}
	return d
}

// DeferCostRatios are the deferred free's costs as multiples of what the
// core and IP receive cost per segment in the same run.
type DeferCostRatios struct {
	// PushPerSkb is skb_attempt_defer_free per deferred skb.
	PushPerSkb float64
	// FlushPerSkb and FlushPerSeg are skb_defer_free_flush per skb and per
	// segment buffer it frees (an skb carries the frags of the segments
	// coalesced into it).
	FlushPerSkb, FlushPerSeg float64
	// Deferred is the deferred skbs per second; Local the share of
	// segments received on the reader's own CPU, whose skbs it frees
	// itself.
	Deferred, Local float64
}

// DeferCostsOf derives DeferCostRatios. An skb reaches the receive queue
// unless it was coalesced into the socket backlog's tail
// (TCPBacklogCoalesce) or into the receive queue's tail (TCPRcvCoalesce);
// the reader defers those built on the other CPU (the share of core+IP
// samples on it), and their segments' buffers are freed by the flush.
func DeferCostsOf(d Defer, r Rates) DeferCostRatios {
	per := float64(d.CoreIP) / r.Skbs
	remote := float64(d.RecvCoreIP) / float64(d.CoreIP)
	deferred := (r.Skbs - r.BacklogCoalesce - r.RcvCoalesce) * remote
	return DeferCostRatios{
		PushPerSkb:  float64(d.Push) / deferred / per,
		FlushPerSkb: float64(d.FlushSkb) / deferred / per,
		FlushPerSeg: float64(d.FlushSeg) / (r.Skbs * remote) / per,
		Deferred:    deferred,
		Local:       1 - remote,
	}
}

// Csum counts, in one run of datagrams with no checksum status through a
// cpumap kthread, the samples of the software checksum
// (__skb_checksum_complete, with csum_partial under it) and of the core and
// IP receive of the same datagrams, on the kthread's CPU.
type Csum struct{ Csum, CoreIP int }

// CsumOf counts Csum over stacks, for the cpumap kthread on CPU cpu.
func CsumOf(stacks []Stack, cpu int) Csum {
	t := Attribute(stacks, Rules, Contexts)
	k := func(cat string) int { return t.Cells[Key{cpu, "cpumap", cat}] }
	return Csum{Csum: k("csum"), CoreIP: k("core") + k("ip")}
}

// PerByte is the checksum per L4 byte as a multiple of what the core and IP
// receive cost per datagram, for datagrams of l4 bytes each.
func (c Csum) PerByte(l4 int) float64 {
	return float64(c.Csum) / float64(c.CoreIP) / float64(l4)
}

// CopyOf counts the reader's _copy_to_iter samples (tcp_recvmsg copying
// the payload to user space) in a table of the TCP measurement.
func CopyOf(t Table) int { return t.Sum([2]string{"reader", "copy"}) }

// UDPFree counts, in a run with a UDP reader, the samples of the free of
// the datagrams it consumed: on the reader's CPU the push onto the
// building CPU's defer list (skb_attempt_defer_free's own frames) and the
// free it does itself when the skb was built on its own CPU
// (skb_attempt_defer_free falling back to the local free: skb_release_data,
// the head and the skb cache); on the building CPU the flush
// (skb_defer_free_flush and what it calls).
type UDPFree struct{ Push, Local, Flush int }

// UDPFreeOf counts UDPFree with the reader on readerCPU and the skbs built
// on allocCPU.
func UDPFreeOf(stacks []Stack, readerCPU, allocCPU int) UDPFree {
	var u UDPFree
	for _, st := range stacks {
		has := func(f string) bool { return slices.Contains(st.Frames, f) }
		switch {
		case st.CPU == readerCPU && has("udp_recvmsg") && has("skb_attempt_defer_free"):
			if st.Frames[len(st.Frames)-1] == "skb_attempt_defer_free" {
				u.Push += st.Count
			} else {
				u.Local += st.Count
			}
		case st.CPU == allocCPU && has("skb_defer_free_flush"):
			u.Flush += st.Count
		}
	}
	return u
}

// OneCPU sorts the samples of one CPU that ran a GRO-off TCP stream's
// whole receive path (threaded veth NAPI and the reader pinned together):
// the layers the model's TCP receive covers, and what it leaves out.
type OneCPU struct {
	// CoreIP is the core and IP receive of the data segments.
	CoreIP int
	// TCP, Wake, Copy and Recvmsg are what the model covers above
	// core+IP: TCP receive (softirq and backlog), the wake-ups, the
	// reader's copy and the rest of tcp_recvmsg (its ACKs, the skb frees,
	// the syscall).
	TCP, Wake, Copy, Recvmsg int
	// Driver is veth's own receive (veth_xdp_rcv, the GRO call, NAPI):
	// not the model's NIC driver, so not compared.
	Driver int
	// VethCopy is veth copying the sender's skb into a page_pool page for
	// XDP (skb_pp_cow_data); no NIC does this.
	VethCopy int
	// Rest is the sender's work that ran on this CPU (the ACKs received by
	// the sender's socket through the backlog, TCP pacing and TSQ
	// transmits in timer softirqs) and anything unattributed.
	Rest  int
	Total int
}

// OneCPUOf sorts CPU cpu's cells of t (Attribute with Rules and Contexts).
func OneCPUOf(t Table, cpu int) OneCPU {
	o := OneCPU{Total: t.Total[cpu]}
	for k, v := range t.Cells {
		if k.CPU != cpu {
			continue
		}
		switch p := [2]string{k.Context, k.Category}; p {
		case [2]string{"veth", "core"}, [2]string{"veth", "ip"}:
			o.CoreIP += v
		case [2]string{"veth", "tcp"}, [2]string{"reader", "tcp"}, [2]string{"veth", "ack_tx"}, [2]string{"reader", "ack_tx"}:
			o.TCP += v
		case [2]string{"veth", "wake"}, [2]string{"reader", "wake"}:
			o.Wake += v
		case [2]string{"reader", "copy"}:
			o.Copy += v
		case [2]string{"reader", "recvmsg"}:
			o.Recvmsg += v
		case [2]string{"veth", "veth_rcv"}, [2]string{"veth", "gro"}, [2]string{"veth", "napi"}:
			o.Driver += v
		case [2]string{"veth", "veth_copy"}:
			o.VethCopy += v
		default:
			o.Rest += v
		}
	}
	return o
}

// AboveRatio is the receive path above core+IP per segment, in multiples
// of what core+IP costs per segment in the same run.
func (o OneCPU) AboveRatio() float64 {
	if o.CoreIP == 0 {
		return 0
	}
	return float64(o.TCP+o.Wake+o.Copy+o.Recvmsg) / float64(o.CoreIP)
}

// WokenWakeOf is sk_data_ready's cost per call for a TCP reader that was
// woken and has not run yet (its wait entry still queued), in multiples of
// core+IP per segment, from a one-CPU run (OneCPUOf) where the NAPI thread
// receives every segment while the reader waits for the CPU: every segment
// but the one per read that woke the reader pays it. segs and reads are
// the run's rates per second.
func WokenWakeOf(o OneCPU, segs, reads float64) float64 {
	if o.CoreIP == 0 || segs <= reads {
		return 0
	}
	return float64(o.Wake) / (segs - reads) / (float64(o.CoreIP) / segs)
}

// Ofo counts the samples of the out-of-order queue in a TCP run with
// losses. tcp_data_queue_ofo and tcp_ofo_queue are inlined into
// tcp_data_queue, so their work shows as tcp_data_queue's direct callees
// that the in-order path does not call there: tcp_try_coalesce (merging
// into an out-of-order skb, and into the receive queue's tail when held
// skbs move in order; in order it runs under tcp_queue_rcv), the rb-tree
// (rb_*), tcp_rcvbuf_grow (called for held skbs since v6.16) and
// __kfree_skb (held skbs merged or found duplicate). What tcp_data_queue
// spends in itself and in kmem_cache_free for them cannot be told from
// the in-order path's, so Samples is a lower bound.
type Ofo struct {
	Samples, CoreIP int
}

// OfoOf counts Ofo over stacks.
func OfoOf(stacks []Stack) Ofo {
	var o Ofo
	for _, st := range stacks {
		if i := slices.Index(st.Frames, "tcp_data_queue"); i >= 0 && i+1 < len(st.Frames) {
			if f := st.Frames[i+1]; f == "tcp_try_coalesce" || f == "tcp_rcvbuf_grow" || f == "__kfree_skb" || strings.HasPrefix(f, "rb_") {
				o.Samples += st.Count
			}
		}
	}
	o.CoreIP = TCPReceiveOf(Attribute(stacks, Rules, Contexts)).CoreIP
	return o
}

// PerSkb is the out-of-order queue's cost per held skb in multiples of
// core+IP per segment, for a run of segs segments/s of which ofo skbs/s
// were held (TcpExt TCPOFOQueue).
func (o Ofo) PerSkb(segs, ofo float64) float64 {
	if o.CoreIP == 0 || ofo <= 0 {
		return 0
	}
	return float64(o.Samples) / ofo / (float64(o.CoreIP) / segs)
}
