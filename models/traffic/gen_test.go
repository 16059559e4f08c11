package traffic

import (
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// sink is an Xmitter that accepts up to room packets in total.
type sink struct {
	room, got, charged int
	led                *pkt.Ledger
}

func (s *sink) ChargeXmit(w *sim.Work, cpu, n int, frames bool) { s.charged += n }

func (s *sink) Xmit(now sim.Time, cpu int, ps []pkt.Packet, frames bool) int {
	n := min(len(ps), s.room-s.got)
	s.got += n
	s.led.Deliver(pkt.ToStack, n)
	s.led.Drop(pkt.VethRingFull, len(ps)-n)
	return n
}

func TestGen(t *testing.T) {
	cases := []struct {
		name  string
		kind  GenKind
		count int64
		steps uint64
		calls uint64
		busy  sim.Time
	}{
		// batches 64, 64, 2: per batch call 100, per frame 2 + 0.05 x 60.
		{"live", GenLive, 130, 3, 3, 3*100 + 130*5},
		// one message per step; sendmmsg entry with messages 1, 65, 129.
		{"afpacket", GenAFPacket, 130, 130, 3, 3*100 + 130*5},
		{"udp", GenUDP, 64, 64, 1, 100 + 64*5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := sim.NewEngine(16)
			acct := sim.NewAccount(1)
			cpu := sim.NewCPU(0, eng, acct, sim.DefaultSched())
			var led pkt.Ledger
			s := &sink{room: 100, led: &led}
			g := NewGen(GenConfig{Kind: c.kind, PktSize: 60, Count: c.count}, GenCosts{Call: 100, Pkt: 2, Byte: 0.05}, s, 0, &led, sim.NewFuncs())
			cpu.Wake(cpu.NewThread("gen", "app", g))
			eng.Run(sim.Never)
			if g.Steps != c.steps || g.Calls != c.calls || g.Sent != uint64(c.count) {
				t.Errorf("steps %d calls %d sent %d, want %d %d %d", g.Steps, g.Calls, g.Sent, c.steps, c.calls, c.count)
			}
			if got := acct.BusyOf(0, "app"); got != c.busy {
				t.Errorf("busy %d ns, want %d", got, c.busy)
			}
			if s.charged != int(c.count) || g.Queued != uint64(min(100, c.count)) {
				t.Errorf("charged %d queued %d", s.charged, g.Queued)
			}
			if led.Offered != uint64(c.count) || led.Check(0) != 0 {
				t.Errorf("conservation: offered %d imbalance %d", led.Offered, led.Check(0))
			}
		})
	}
}

// busy is a thread that always has work, in steps of 50 us.
type busy struct{}

func (busy) Run(now sim.Time, w *sim.Work) { w.Add(0, 50*sim.Microsecond) }
func (busy) Done(now sim.Time) bool        { return true }

func TestBackground(t *testing.T) {
	cases := []struct {
		name      string
		duty      float64
		withBusy  bool
		wantOther float64 // share of the CPU taken by the load
	}{
		{"alone", 0.3, false, 0.3},         // an idle CPU: exactly its duty
		{"alone high", 0.9, false, 0.9},    //
		{"contended", 0.3, true, 0.3},      // below half: it gets its duty
		{"contended high", 0.9, true, 0.5}, // above half: CFS gives it half
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := sim.NewEngine(16)
			acct := sim.NewAccount(1)
			cpu := sim.NewCPU(0, eng, acct, sim.DefaultSched())
			funcs := sim.NewFuncs()
			if c.withBusy {
				cpu.Wake(cpu.NewThread("busy", "app", busy{}))
			}
			NewBackground(cpu, c.duty, funcs)
			const d = 400 * sim.Millisecond
			eng.Run(d)
			got := float64(acct.BusyOf(0, "other")) / float64(d)
			if got < c.wantOther-0.02 || got > c.wantOther+0.02 {
				t.Errorf("other processes took %.3f of the CPU, want %.2f +- 0.02", got, c.wantOther)
			}
		})
	}
}
