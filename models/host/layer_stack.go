package host

import (
	"fmt"

	"github.com/rxsim/rxsim/models/backlog"
	"github.com/rxsim/rxsim/models/cpumap"
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/stack"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// The stack, backlog and cpumap meet through small interfaces.
var (
	_ stack.Steerer          = (*backlog.Set)(nil)
	_ backlog.Receiver       = (*stack.Stack)(nil)
	_ cpumap.Receiver        = (*stack.Stack)(nil)
	_ cpumap.BacklogEnqueuer = (*backlog.Set)(nil)
)

// StackLayer builds the path above the driver for NIC devices (veth has its
// own layer): the stack with UDP and its sockets and reading applications,
// the per-CPU backlogs with RPS, the XDP_PASS path of every queue
// (build_skb + napi_gro_receive on the queue NAPI's GRO node, hooked into
// napi_complete_done and repoll), and the cpumap for redirect-cpu.
//
// Applications: one socket per app.cpus entry when app.enabled (SO_REUSEPORT
// group), else one socket when stack.listen; with app.enabled and no
// app.cpus the reader runs on the last CPU.
func StackLayer(h *Host) error {
	if h.Profile.NIC.Driver == "veth" {
		return nil
	}
	s := h.Spec
	sc, err := h.stackCosts()
	if err != nil {
		return err
	}
	x := &StackExt{h: h}
	x.Stack = stack.New(sc, h.Funcs, h.Softnet, &h.Ledger, h.release)
	x.Stack.RawDropUDP = s.Stack.RawDrop
	if err := h.udpDefer(x.Stack); err != nil {
		return err
	}
	x.UDP = stack.NewUDP(x.Stack, h.Funcs)
	bc, err := h.backlogCosts()
	if err != nil {
		return err
	}
	x.Backlog = backlog.New(backlog.Config{MaxBacklog: s.Backlog.MaxBacklog, DevWeight: s.Backlog.DevWeight,
		RPSCPUs: s.Backlog.RPSCPUs, Threads: s.Backlog.Threads}, bc, h.Funcs, h.Softnet, x.Stack, &h.Ledger,
		backlog.Releaser(h.release))
	if x.Backlog.RPS() {
		x.Stack.RPS = x.Backlog
	}
	napis := make([]*napi.NAPI, len(h.Queues))
	for i, q := range h.Queues {
		napis[i] = q.NAPI
	}
	if err := h.busyPoll(x.Stack, napis); err != nil {
		return err
	}
	h.buildSockets(x)
	gc, err := h.groCosts()
	if err != nil {
		return err
	}
	jiffy := sim.Second / sim.Time(s.Kernel.HZ)
	for _, q := range h.Queues {
		cpu := q.NAPI.Softnet().CPU().ID
		if t := q.NAPI.Thread(); t != nil {
			cpu = t.CPU().ID
		}
		d := stack.NewDriverRx(x.Stack, cpu, h.groConfig(), gc, h.Funcs)
		q.Hook.Stack = d
		q.NAPI.GRO = &stack.NAPIGRO{E: d.GRO, Jiffy: jiffy}
		followPollCPU(q.NAPI, d, q.Hook)
		x.Drivers = append(x.Drivers, d)
	}
	h.Ext = append(h.Ext, x)
	if s.XDP.Program == "redirect-cpu" {
		if err := h.buildCpumap(x, gc, jiffy); err != nil {
			return err
		}
	}
	if s.XDP.Program == "redirect-map" {
		return h.buildDevmap()
	}
	return nil
}

// followPollCPU moves a queue's XDP hook and skb path to the CPU that
// polls its NAPI (a busy poller's, and back).
func followPollCPU(n *napi.NAPI, d *stack.DriverRx, hook *xdp.Hook) {
	n.OnPollCPU = func(c int) { d.SetCPU(c); hook.SetRxCPU(c) }
}

// busyPoll turns on busy polling of the sockets (stack.busy_read): a
// socket's NAPI is that of the RX queue its last skb came from (napis,
// indexed by queue), except behind a cpumap, whose skbs carry no NAPI id.
func (h *Host) busyPoll(st *stack.Stack, napis []*napi.NAPI) error {
	usec := h.Spec.Stack.BusyRead
	if usec <= 0 {
		return nil
	}
	c, err := h.Profile.CostOf("napi_busy_loop")
	if err != nil {
		return fmt.Errorf("host: stack.busy_read: %w", err)
	}
	var napiOf func(q uint16) *napi.NAPI
	if h.Spec.XDP.Program != "redirect-cpu" {
		napiOf = func(q uint16) *napi.NAPI {
			if int(q) < len(napis) {
				return napis[q]
			}
			return nil
		}
	}
	st.EnableBusyPoll(stack.BusyPoll{Read: sim.Time(usec) * sim.Microsecond, Iter: c.Call, NAPIOf: napiOf, Funcs: h.Funcs,
		Budget: h.Spec.Stack.BusyPollBudget, Prefer: h.Spec.Stack.PreferBusyPoll})
	h.Ext = append(h.Ext, &BusyPollExt{h: h, st: st, napis: napis})
	return nil
}

// IPStack returns the host's stack (nil before StackLayer ran or for veth),
// for later layers such as TCP to Register their receive function.
func (h *Host) IPStack() *stack.Stack {
	for _, e := range h.Ext {
		if x, ok := e.(*StackExt); ok {
			return x.Stack
		}
	}
	return nil
}

// udpDefer turns on udp_recvmsg's skb_attempt_defer_free
// (stack.udp_defer_free) for st.
func (h *Host) udpDefer(st *stack.Stack) error {
	if !h.Spec.Stack.UDPDeferFree {
		return nil
	}
	st.DeferUDP = true
	return h.enableDefer()
}

// release returns n buffers to RX queue q (the page-reuse rule, §2.4).
func (h *Host) release(q uint16, n int) {
	if int(q) < len(h.Queues) {
		h.Queues[q].Release(n)
	}
}

func (h *Host) buildSockets(x *StackExt) {
	s := h.Spec
	if !s.Stack.Listen && !s.App.Enabled {
		return
	}
	n := 1
	if s.App.Enabled && len(s.App.CPUs) > 1 {
		n = len(s.App.CPUs)
	}
	for i := 0; i < n; i++ {
		ts := stack.SkbTruesize
		if s.Stack.Truesize > 0 {
			ts = s.Stack.Truesize
		}
		sk := x.UDP.BindTruesize(s.Stack.Rcvbuf, ts)
		if !s.App.Enabled {
			continue
		}
		cpu := len(h.CPUs) - 1
		if len(s.App.CPUs) > 0 {
			cpu = s.App.CPUs[i%len(s.App.CPUs)]
		}
		x.Apps = append(x.Apps, stack.NewApp(sk, h.CPUs[cpu], s.App.Batch, &x.Hist, h.Funcs))
	}
}

func (h *Host) groConfig() gro.Config {
	s := h.Spec
	return gro.Config{GRO: s.NIC.GRO, NormalBatch: s.GRO.NormalBatch, MaxSize: s.GRO.MaxSize}
}

// need returns the named costs or an error naming the first missing one.
func (h *Host) need(layer string, names ...string) error {
	for _, n := range names {
		if _, err := h.Profile.CostOf(n); err != nil {
			return fmt.Errorf("host: %s: %w", layer, err)
		}
	}
	return nil
}

func (h *Host) stackCosts() (stack.Costs, error) {
	if err := h.need("stack", "build_skb", "netif_receive_skb", "ip_rcv", "udp_rcv", "udp_queue_rcv_skb",
		"udp_noport", "sock_def_readable", "sock_def_readable_local", "recvmsg", "__skb_checksum_complete", "skb_release_data"); err != nil {
		return stack.Costs{}, err
	}
	c := h.Cost
	r := c("recvmsg")
	raw := 0.0
	if h.Spec.Stack.RawDrop {
		if err := h.need("stack.raw_drop", "iptables_raw_drop"); err != nil {
			return stack.Costs{}, err
		}
		raw = c("iptables_raw_drop").Pkt
	}
	return stack.Costs{RawDrop: raw,
		BuildSkb: c("build_skb").Pkt, RecvCall: c("netif_receive_skb").Call, RecvPkt: c("netif_receive_skb").Pkt,
		IPCall: c("ip_rcv").Call, IPPkt: c("ip_rcv").Pkt, UDPRcv: c("udp_rcv").Pkt,
		UDPEnqueue: c("udp_queue_rcv_skb").Pkt, UDPNoPort: c("udp_noport").Pkt, Wake: c("sock_def_readable").Call,
		WakeLocal:   c("sock_def_readable_local").Call,
		RecvmsgCall: r.Call, RecvmsgPkt: r.Pkt, RecvmsgByte: r.Byte,
		CsumByte: c("__skb_checksum_complete").Byte,
		FreeSkb:  c("skb_release_data").Call, FreeSeg: c("skb_release_data").Pkt,
	}, nil
}

func (h *Host) backlogCosts() (backlog.Costs, error) {
	if err := h.need("backlog", "enqueue_to_backlog", "process_backlog", "get_rps_cpu", "skb_get_hash",
		"net_rps_send_ipi", "ipi_handler", "wake_up_process"); err != nil {
		return backlog.Costs{}, err
	}
	c := h.Cost
	return backlog.Costs{
		Enqueue: c("enqueue_to_backlog").Pkt, PollCall: c("process_backlog").Call, PollPkt: c("process_backlog").Pkt,
		GetRPSCPU: c("get_rps_cpu").Pkt, FlowDissect: c("skb_get_hash").Pkt, IPISend: c("net_rps_send_ipi").Call,
		IPIHandler: c("ipi_handler").Call, Wake: c("wake_up_process").Call,
	}, nil
}

// groCosts returns the GRO engine's costs: the attempt (required) and, when
// the profile has them, the merge, hold, completion and checksum items
// (TCP merging; absent items cost 0 for UDP, which never merges).
func (h *Host) groCosts() (gro.Costs, error) {
	if err := h.need("gro", "dev_gro_receive"); err != nil {
		return gro.Costs{}, err
	}
	g := h.Cost("dev_gro_receive")
	c := gro.Costs{Attempt: g.Pkt}
	if v, err := h.Profile.CostOf("skb_gro_receive"); err == nil {
		c.MergePerSeg = v.Pkt
	}
	if v, err := h.Profile.CostOf("napi_gro_complete"); err == nil {
		c.Flush = v.Call
	}
	if v, err := h.Profile.CostOf("__skb_gro_checksum_complete"); err == nil {
		c.CsumPerByte = v.Byte
	}
	return c, nil
}

func (h *Host) cpumapCosts(gc gro.Costs) (cpumap.Costs, error) {
	if err := h.need("cpumap", "bq_flush_to_queue", "wake_up_process", "wake_up_running", "xdp_return_frame",
		"cpu_map_kthread_run", "cpumap_bpf_prog_run", "xdp_do_redirect", "xdp_do_flush", "kmem_cache_alloc_bulk",
		"__xdp_build_skb_from_frame"); err != nil {
		return cpumap.Costs{}, err
	}
	c := h.Cost
	return cpumap.Costs{
		BqFlushCall: c("bq_flush_to_queue").Call, BqFlushPkt: c("bq_flush_to_queue").Pkt,
		WakeSleeping: c("wake_up_process").Call, WakeRunning: c("wake_up_running").Call,
		ReturnFrame: c("xdp_return_frame").Pkt, KthreadCall: c("cpu_map_kthread_run").Call,
		KthreadPkt: c("cpu_map_kthread_run").Pkt, ProgPkt: c("cpumap_bpf_prog_run").Pkt,
		Redirect: c("xdp_do_redirect").Pkt, Flush: c("xdp_do_flush").Call,
		AllocCall: c("kmem_cache_alloc_bulk").Call, AllocPkt: c("kmem_cache_alloc_bulk").Pkt,
		BuildPkt: c("__xdp_build_skb_from_frame").Pkt, GRO: gc,
	}, nil
}

func (h *Host) buildCpumap(x *StackExt, gc gro.Costs, jiffy sim.Duration) error {
	s := h.Spec
	del, err := cpumap.ParseDelivery(s.Cpumap.Delivery)
	if err != nil {
		return err
	}
	ra, err := cpumap.ParseRemoteAction(s.XDP.RemoteAction)
	if err != nil {
		return err
	}
	cc, err := h.cpumapCosts(gc)
	if err != nil {
		return err
	}
	m := cpumap.New(cpumap.Config{QSize: s.Cpumap.QSize, BulkSize: s.Cpumap.BulkSize, Batch: s.Cpumap.Batch,
		Delivery: del, Remote: ra, GRO: h.groConfig(), Jiffy: jiffy, NAPIWeight: s.NAPI.Weight},
		cc, h.Funcs, h.CPUs, h.Softnet, x.Stack, x.Backlog, &h.Ledger, cpumap.Releaser(h.release))
	seen := make([]bool, len(h.CPUs))
	for _, c := range s.XDP.RedirectCPUs {
		if !seen[c] {
			seen[c] = true
			m.Add(c, h.Funcs)
		}
	}
	for _, q := range h.Queues {
		q.Hook.Redir = m
	}
	h.Ext = append(h.Ext, &CpumapExt{h: h, Map: m})
	return nil
}
