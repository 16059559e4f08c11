package stack

import (
	"github.com/rxsim/rxsim/models/gro"
	"github.com/rxsim/rxsim/models/napi"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

// DriverRx is the XDP_PASS (or no-XDP) path of one RX queue: the driver
// builds an skb around the buffer (build_skb) and hands it to
// napi_gro_receive on the queue's NAPI GRO node; the gro_normal list goes
// to netif_receive_skb_list_internal on the CPU that polls the queue.
type DriverRx struct {
	st  *Stack
	cpu int
	// GRO is the queue's NAPI GRO node (napi->gro).
	GRO *gro.Engine
}

var (
	_ xdp.Stack     = (*DriverRx)(nil)
	_ gro.Deliverer = (*DriverRx)(nil)
)

// NewDriverRx returns the XDP_PASS path of a queue polled on cpu, with a GRO
// node configured by cfg (cfg.GRO is the device's NETIF_F_GRO).
func NewDriverRx(st *Stack, cpu int, cfg gro.Config, costs gro.Costs, funcs *sim.Funcs) *DriverRx {
	d := &DriverRx{st: st, cpu: cpu}
	d.GRO = gro.New(cfg, costs, funcs, d)
	return d
}

// Receive implements xdp.Stack: build_skb + napi_gro_receive.
func (d *DriverRx) Receive(w *sim.Work, p pkt.Packet) {
	d.st.BuildSkb(w)
	p.AllocCPU = uint16(d.cpu)
	d.GRO.Receive(w, p)
}

// SetCPU moves the path to the CPU that polls the queue (a busy poller's,
// napi.NAPI.OnPollCPU): skbs are built and delivered there.
func (d *DriverRx) SetCPU(cpu int) { d.cpu = cpu }

// CPU returns the CPU the path runs on.
func (d *DriverRx) CPU() int { return d.cpu }

// DeliverList implements gro.Deliverer: gro_normal_list.
func (d *DriverRx) DeliverList(w *sim.Work, skbs []pkt.Packet) { d.st.ReceiveList(w, d.cpu, skbs) }

// Queued implements pkt.Queuer: segments held by GRO or on the normal list.
func (d *DriverRx) Queued() int { return d.GRO.Queued() }

// NAPIGRO adapts a GRO node to napi.GROFlusher: napi_complete_done's full
// flush and __napi_poll's repoll flush of old packets, each followed by
// gro_normal_list (gro_flush_normal).
type NAPIGRO struct {
	E *gro.Engine
	// Jiffy is 1/HZ (the age unit of FlushOld).
	Jiffy sim.Duration
}

var _ napi.GROFlusher = (*NAPIGRO)(nil)

// FlushAll implements napi.GROFlusher.
func (g *NAPIGRO) FlushAll(w *sim.Work) {
	g.E.FlushAll(w, gro.ReasonComplete)
	g.E.NormalList(w)
}

// FlushOld implements napi.GROFlusher; all (HZ < 1000) flushes everything.
func (g *NAPIGRO) FlushOld(w *sim.Work, _ sim.Time, all bool) {
	if all {
		g.E.FlushAll(w, gro.ReasonOld)
	} else {
		g.E.FlushOld(w, w.Now(), g.Jiffy, gro.ReasonOld)
	}
	g.E.NormalList(w)
}

// NormalList implements napi.GROFlusher: gro_normal_list alone.
func (g *NAPIGRO) NormalList(w *sim.Work) { g.E.NormalList(w) }

// Held implements napi.GROFlusher.
func (g *NAPIGRO) Held() bool { return g.E.HasHeld() }
