package main

import (
	"strings"
	"testing"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
)

// TestStreamLimit: each cause a TCP stream's report can name.
func TestStreamLimit(t *testing.T) {
	idle := []host.CPU{{ID: 0, Busy: 0.3, Classes: map[string]float64{"softirq": 0.3}}}
	busy := []host.CPU{{ID: 0, Busy: 0.3}, {ID: 1, Busy: 0.99, Classes: map[string]float64{"kthread": 0.88, "softirq": 0.11, "hardirq": 0.001}}}
	for _, c := range []struct {
		name  string
		gbps  float64
		cpu   []host.CPU
		tcp   host.TCPResult
		rate  string
		wants string
	}{
		{"line", 9.40, busy, host.TCPResult{}, "", "line rate"},
		{"cpu", 8.0, busy, host.TCPResult{}, "", "saturated CPU 1 (kthread 88%, softirq 11%)"},
		{"losses", 8.0, idle, host.TCPResult{Retransmits: 10}, "", "losses"},
		{"pacing", 8.0, idle, host.TCPResult{}, "500kpps", "pacing (traffic.rate 500kpps)"},
		{"window", 8.0, idle, host.TCPResult{RcvbufBytes: 425984}, "line", "the receive window (rcvbuf 425,984 B, fixed"},
		{"window autotuned", 8.0, idle, host.TCPResult{RcvbufBytes: 6 << 20, Autotuned: true, RcvRTTus: 52}, "line", "the receive window (rcvbuf 6,291,456 B, autotuned (rcv_rtt 52 us))"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &scenarios.Spec{}
			s.Traffic.Rate, s.Stack.Rcvbuf = c.rate, 425984
			r := &host.Result{CPU: c.cpu, Ext: host.Ext{GoodputGbps: c.gbps, TCP: &c.tcp}}
			if got := streamLimit(s, r, 9.415); !strings.Contains(got, c.wants) {
				t.Errorf("limit %q, want it to contain %q", got, c.wants)
			}
		})
	}
}
