package host

import (
	"fmt"

	"github.com/rxsim/rxsim/hw"
	"github.com/rxsim/rxsim/models/xdp"
)

// DevmapExt is the devmap entry of redirect-map as a host Extension: the
// xdp_devmap_xmit counters (sent, drops, bulk per ndo_xdp_xmit call) in
// Result.Extra["devmap"].
type DevmapExt struct {
	Map    *xdp.Devmap
	Egress string // egress NIC profile
	snap   [3]uint64
}

var _ Extension = (*DevmapExt)(nil)

func (d *DevmapExt) counters() [3]uint64 { return [3]uint64{d.Map.Xmits, d.Map.Sent, d.Map.Dropped} }

// Snapshot implements Extension.
func (d *DevmapExt) Snapshot() { d.snap = d.counters() }

// Queued implements Extension: frames in the bulk queues.
func (d *DevmapExt) Queued() int { return d.Map.Queued() }

// Report implements Extension.
func (d *DevmapExt) Report(r *Result, secs float64) {
	now := d.counters()
	xmits, sent, drops := now[0]-d.snap[0], now[1]-d.snap[1], now[2]-d.snap[2]
	m := map[string]any{"egress": d.Egress, "xmit_pps": float64(sent) / secs,
		"drop_pps": float64(drops) / secs, "xmit_calls_per_sec": float64(xmits) / secs}
	if xmits > 0 {
		m["bulk_avg"] = float64(sent+drops) / float64(xmits)
	}
	if r.Extra == nil {
		r.Extra = map[string]any{}
	}
	r.Extra["devmap"] = m
}

// buildDevmap makes the devmap entry of redirect-map: the egress device's
// XDP TX ring (its profile's ring size) drained at its line rate for the
// traffic's frame size, with the cost profile's ndo_xdp_xmit and
// xdp_tx_clean.
func (h *Host) buildDevmap() error {
	s := h.Spec
	name := s.XDP.Egress
	if name == "" {
		name = s.HW
	}
	eg, err := hw.Load(name, "")
	if err != nil {
		return fmt.Errorf("host: xdp.egress: %w", err)
	}
	if eg.NIC.LineRateGbps.V <= 0 || name == "veth" {
		return fmt.Errorf("host: xdp.egress %q: want a NIC profile with a line rate (ixgbe, i40e)", name)
	}
	var c xdp.DevmapCosts
	for _, x := range []struct {
		fn  string
		dst *float64
		pkt bool
	}{{"ndo_xdp_xmit", &c.XmitCall, false}, {"ndo_xdp_xmit", &c.XmitPkt, true}, {"xdp_tx_clean", &c.Clean, true}} {
		v, err := h.Profile.CostOf(x.fn)
		if err != nil {
			return fmt.Errorf("host: redirect-map: %w", err)
		}
		if x.pkt {
			*x.dst = v.Pkt
		} else {
			*x.dst = v.Call
		}
	}
	frame := float64(s.Traffic.PktSize) + eg.NIC.WireOverhead.V // FCS, preamble, SFD, IFG
	wire := eg.NIC.LineRateGbps.V * 1e9 / 8 / frame
	m := xdp.NewDevmap(xdp.DevmapConfig{Ring: int(eg.NIC.RingSize.V), WirePPS: wire}, c, len(h.CPUs), &h.Ledger,
		h.release, h.Funcs)
	m.SetClean(h.Eng)
	for _, q := range h.Queues {
		q.Hook.Redir = m
	}
	h.Ext = append(h.Ext, &DevmapExt{Map: m, Egress: name})
	return nil
}
