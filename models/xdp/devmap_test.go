package xdp_test

import (
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/models/xdp"
	"github.com/rxsim/rxsim/sim"
)

type irqStep func(w *sim.Work)

func (f irqStep) Run(_ sim.Time, w *sim.Work) { f(w) }
func (f irqStep) Done(sim.Time) bool          { return false }

var devmapCosts = xdp.DevmapCosts{XmitCall: 80, XmitPkt: 10, Clean: 20}

// bed is a one-CPU harness with a devmap entry whose releases are counted.
type devmapBed struct {
	h        *modeltest.Harness
	m        *xdp.Devmap
	released int
}

func newDevmapBed(cfg xdp.DevmapConfig) *devmapBed {
	b := &devmapBed{h: modeltest.New(modeltest.Config{CPUs: 1})}
	b.m = xdp.NewDevmap(cfg, devmapCosts, 1, &b.h.Led, func(_ uint16, n int) { b.released += n }, b.h.Funcs)
	return b
}

// poll enqueues n frames in one hard-IRQ step at t and, if flush, ends it
// with xdp_do_flush (the end of a NAPI poll).
func (b *devmapBed) poll(t sim.Time, n int, flush bool) {
	b.h.Eng.Schedule(t, sim.HandlerFunc(func(sim.Time, int64) {
		b.h.CPUs[0].RaiseIRQ(irqStep(func(w *sim.Work) {
			b.h.Led.Offer(n)
			for i := 0; i < n; i++ {
				b.m.Enqueue(w, 0, 0, modeltest.Packet(t, 0, 60))
			}
			if flush {
				b.m.Flush(w, 0)
			}
		}))
	}), 0)
}

func (b *devmapBed) fn(name string) sim.Time { return b.h.Acct.ByFunc[0][b.h.Funcs.ID(name)] }

// Frames are sent in bulks of 16 and the rest at the flush; each call pays
// the tail write once, each frame a descriptor and its completion; a frame's
// buffer goes back to the RX queue at the first transmit after it left the
// wire (or, with SetClean, once it has left); a full ring returns frames at
// once as devmap_xmit drops.
func TestDevmap(t *testing.T) {
	for _, c := range []struct {
		name                 string
		cfg                  xdp.DevmapConfig
		clean                bool     // SetClean: the TX interrupt's clean
		polls                [][2]int // (time in us, frames); each poll flushes
		xmits, sent, dropped uint64
		released, queued     int
		xmitNS, cleanNS      sim.Time
	}{
		// 40 frames: 16 + 16 at bq_enqueue, 8 at the flush. A second poll
		// at 100 us (after the 40 frames left a 10 Mpps wire at 4 us)
		// returns their 40 buffers; its own 2 are still on the ring.
		{"bulks of 16, completion", xdp.DevmapConfig{Ring: 512, WirePPS: 10e6}, false, [][2]int{{0, 40}, {100, 2}},
			4, 42, 0, 40, 0, 4*80 + 42*10, 42 * 20},
		// The same with the TX interrupt's clean: no later poll is needed,
		// all 42 buffers come back once their frames have left.
		{"TX interrupt clean", xdp.DevmapConfig{Ring: 512, WirePPS: 10e6}, true, [][2]int{{0, 40}, {100, 2}},
			4, 42, 0, 42, 0, 4*80 + 42*10, 42 * 20},
		// A ring of 8 on a wire of one frame per 10 us: the first bulk of 16
		// fills it with 8, the other 8 are dropped and returned at once.
		{"ring full", xdp.DevmapConfig{Ring: 8, WirePPS: 1e5}, false, [][2]int{{0, 16}},
			1, 8, 8, 8, 0, 80 + 8*10, 8 * 20},
		// No flush: frames short of a bulk stay in the bulk queue.
		{"partial bulk waits", xdp.DevmapConfig{Ring: 512, WirePPS: 10e6}, false, nil,
			1, 16, 0, 0, 4, 80 + 16*10, 16 * 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newDevmapBed(c.cfg)
			if c.clean {
				b.m.SetClean(b.h.Eng)
			}
			if c.polls == nil {
				b.poll(0, 20, false)
			}
			for _, p := range c.polls {
				b.poll(sim.Time(p[0])*sim.Microsecond, p[1], true)
			}
			b.h.Run(sim.Millisecond)
			m := b.m
			if m.Xmits != c.xmits || m.Sent != c.sent || m.Dropped != c.dropped {
				t.Errorf("xmits %d sent %d dropped %d; want %d %d %d", m.Xmits, m.Sent, m.Dropped, c.xmits, c.sent, c.dropped)
			}
			if b.released != c.released || m.Queued() != c.queued {
				t.Errorf("released %d, queued %d; want %d, %d", b.released, m.Queued(), c.released, c.queued)
			}
			if got := b.fn("ndo_xdp_xmit"); got != c.xmitNS {
				t.Errorf("ndo_xdp_xmit %d ns, want %d", got, c.xmitNS)
			}
			if got := b.fn("xdp_tx_clean"); got != c.cleanNS {
				t.Errorf("xdp_tx_clean %d ns, want %d", got, c.cleanNS)
			}
			if got := b.h.Led.Dropped[pkt.DevmapXmit]; got != c.dropped {
				t.Errorf("ledger devmap_xmit drops %d, want %d", got, c.dropped)
			}
			modeltest.Conservation(t, &b.h.Led, m)
		})
	}
}
