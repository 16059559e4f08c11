package host

import (
	"math"
	"testing"
)

// XDP_REDIRECT through a devmap: ixgbe -> i40e on one core is limited by
// the RX CPU (§9: 84 ns per frame, 11.91 Mpps; the model's split was taken
// at 60-frame polls, full polls amortise a little more), every frame
// received is sent and the 10G ring overflows (rx_missed); i40e on two
// queues -> ixgbe is limited by the 10G egress wire: it sends 14.88 Mpps
// and the rest find the per-CPU XDP TX rings full (devmap_xmit drops).
func TestDevmapRedirect(t *testing.T) {
	for _, c := range []struct {
		name      string
		sets      []string
		rxLimited bool
	}{
		{"ixgbe->i40e, one core", nil, true},
		{"i40e x2 -> ixgbe", []string{"hw=\"i40e\"", "xdp.egress=\"ixgbe\"", "nic.queues=2", "nic.irq_affinity=[0,1]", "traffic.flows=16"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "xdp-redirect-devmap", append([]string{`duration="10ms"`}, c.sets...)...)
			dm := r.Extra["devmap"].(map[string]any)
			xmit, drops := dm["xmit_pps"].(float64), dm["drop_pps"].(float64)
			if c.rxLimited {
				ns := r.CPU[0].Busy * 1e9 / r.RxPPS
				if r.CPU[0].Busy < 0.97 || ns < 80 || ns > 86 || r.Drops["rx_missed"] == 0 {
					t.Errorf("RX CPU busy %.3f at %.1f ns/frame, rx_missed %.0f/s; want saturated at ~84 ns with ring drops", r.CPU[0].Busy, ns, r.Drops["rx_missed"])
				}
				if math.Abs(xmit-r.RxPPS) > 0.001*r.RxPPS || drops != 0 {
					t.Errorf("xmit %.0f/s of %.0f received, devmap drops %.0f/s; want all sent", xmit, r.RxPPS, drops)
				}
				return
			}
			// xmit counts frames posted (as xdp_devmap_xmit does); over 10 ms
			// they differ from those on the wire by the change in the rings'
			// occupancy, at most 2 x 512 frames (0.7 %)
			const line = 10e9 / 8 / 84 // 64 B frames on 10G
			if math.Abs(xmit-line) > 0.01*line || drops == 0 || r.Drops["devmap_xmit"] == 0 {
				t.Errorf("xmit %.0f/s, devmap drops %.0f/s; want the 10G line rate %.0f and drops", xmit, drops, line)
			}
		})
	}
}
