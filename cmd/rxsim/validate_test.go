package main

import (
	"bytes"
	"testing"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/validate"
)

func TestSideBySideArgs(t *testing.T) {
	cases := []struct {
		args       []string
		scen, save string
		ok         bool
	}{
		{[]string{"veth-xdp-drop", "--gen", "live"}, "veth-xdp-drop", "", true},
		{[]string{"veth-xdp-drop", "--save", "x.json"}, "veth-xdp-drop", "x.json", true},
		{[]string{"veth-xdp-drop", "--save=y.json"}, "veth-xdp-drop", "y.json", true},
		{[]string{"veth-xdp-drop", "--json"}, "", "", false},
		{[]string{"--iface", "eth9", "--program", "drop"}, "", "", false},
		{[]string{"--all", "--reps", "5"}, "", "", false},
		{[]string{"--program", "drop"}, "", "", false},
	}
	for _, c := range cases {
		scen, save, ok := sideBySide(c.args)
		if scen != c.scen || save != c.save || ok != c.ok {
			t.Errorf("sideBySide(%q) = %q, %q, %v; want %q, %q, %v", c.args, scen, save, ok, c.scen, c.save, c.ok)
		}
	}
}

func TestWriteSideBySide(t *testing.T) {
	m := &validate.Result{RxPPS: 1000000, DeliveredPPS: 0, Drops: map[string]float64{"cpumap_enqueue": 500000},
		CPUMap: &validate.CPUMapResult{EnqueuePPS: 500000, DropPPS: 500000, KthreadPPS: 500000}}
	r := &host.Result{RxPPS: 1100000, Drops: map[string]float64{"cpumap_enqueue": 450000, "udp_noports": 600000}}
	r.Cpumap = &host.CpumapResult{EnqueuePPS: 600000, DropPPS: 450000, KthreadPPS: 600000}
	var b bytes.Buffer
	writeSideBySide(&b, m, r)
	want := `  metric                         measured      simulated     error
  rx_pps                        1,000,000      1,100,000    +10.0%
  delivered_pps                         0              0      0.0%
  cpumap.enqueue_pps              500,000        600,000    +20.0%
  cpumap.drop_pps                 500,000        450,000    -10.0%
  cpumap.kthread_pps              500,000        600,000    +20.0%
  drops.cpumap_enqueue            500,000        450,000    -10.0%
  drops.udp_noports                     0        600,000         -
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
