package host

import "testing"

// TestBusyPoll: with stack.busy_read a reader that finds its socket empty
// polls the RX queue's NAPI itself (napi_busy_loop) instead of sleeping
// until the softirq's wake-up. Where the arrivals come closer together
// than busy_read, every packet is taken by the busy poller on the reader's
// CPU (softnet processed moves there, CPU 0's softirq is idle), the reader's
// CPU is busy all the time, and the latency falls by the interrupt, softirq
// and wake-up it no longer waits for. Bursts further apart than busy_read
// make each loop time out: the softirq still takes the packets.
func TestBusyPoll(t *testing.T) {
	udp := []string{"stack.listen=true", "app.enabled=true", "app.cpus=[1]", "traffic.rate=100kpps"}
	cases := []struct {
		name     string
		scenario string
		sets     []string
		// want: the busy poller takes every packet (else the softirq does
		// and the loops time out)
		takesAll bool
	}{
		{"tcp_rr one flow", "tcp-rr", []string{"traffic.flows=1"}, true},
		{"udp 100 kpps one by one", "xdp-pass-udp", append([]string{"traffic.burst=1"}, udp...), true},
		{"udp 100 kpps in bursts of 32", "xdp-pass-udp", udp, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runner := run
			if c.scenario == "tcp-rr" {
				runner = func(t testing.TB, name string, sets ...string) *Result { _, r := tcpRun(t, name, sets...); return r }
			}
			off := runner(t, c.scenario, c.sets...)
			on := runner(t, c.scenario, append(c.sets, "stack.busy_read=50")...)
			if again := runner(t, c.scenario, append(c.sets, "stack.busy_read=50")...); canon(t, again) != canon(t, on) {
				t.Errorf("two runs with the same seed differ")
			}
			if off.BusyPoll != nil {
				t.Fatalf("busy_poll section without stack.busy_read")
			}
			b := on.BusyPoll
			if b == nil || b.ReadUS != 50 || b.LoopsPerSec == 0 {
				t.Fatalf("busy_poll section %+v", b)
			}
			rx := on.RxPPS
			if !c.takesAll {
				if b.TimeoutsPerSec < 0.9*b.LoopsPerSec || on.Softnet[0].Processed == 0 {
					t.Errorf("bursts: %.0f of %.0f loops/s timed out, CPU 0 processed %d; want the loops to time out and the softirq to receive",
						b.TimeoutsPerSec, b.LoopsPerSec, on.Softnet[0].Processed)
				}
				return
			}
			if b.RxPPS < 0.99*rx || b.TimeoutsPerSec != 0 {
				t.Errorf("busy polls took %.0f of %.0f pkt/s, %.0f loops/s timed out; want all, none", b.RxPPS, rx, b.TimeoutsPerSec)
			}
			if on.Softnet[0].Processed != 0 || on.Softnet[1].Processed == 0 || on.CPU[0].Classes["softirq"] > 0.001 {
				t.Errorf("softnet processed CPU 0 %d, CPU 1 %d, CPU 0 softirq %.3f; want the stack on CPU 1",
					on.Softnet[0].Processed, on.Softnet[1].Processed, on.CPU[0].Classes["softirq"])
			}
			if on.CPU[1].Busy < 0.999 || off.CPU[1].Busy > 0.5 {
				t.Errorf("reader CPU busy %.3f with busy polling, %.3f without; want ~1 and far less", on.CPU[1].Busy, off.CPU[1].Busy)
			}
			if b.SpinPercent < 50 || b.SpinPercent > 100 {
				t.Errorf("spin %.1f%% of a CPU", b.SpinPercent)
			}
			lOn, lOff := on.LatencyUS, off.LatencyUS
			if lOn == nil || lOff == nil || lOn.P50 >= lOff.P50-0.3 {
				t.Errorf("latency P50 %+v with busy polling, %+v without; want lower by the IRQ, softirq and wake-up", lOn, lOff)
			}
		})
	}
}
