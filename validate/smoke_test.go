package validate

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	h, err := NewHarness()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	o, err := LoadXDP(XDPSpec{Program: ProgDrop})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := h.AttachXDP(o.Prog, false); err != nil {
		t.Fatal(err)
	}
	if err := h.Configure(NetSettings{}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []GenKind{GenLive, GenAFPacket, GenUDP} {
		before, _, _ := ReadCounter(o.Counters, SlotRx)
		var sent atomic.Uint64
		t0 := time.Now()
		err := RunGenerator(context.Background(), h, GenOptions{Kind: g, PktSize: 60, Flows: 4, Count: 100000, CPU: 0, Duration: 5 * time.Second}, &sent)
		if err != nil {
			t.Fatal(g, err)
		}
		time.Sleep(50 * time.Millisecond)
		after, per, _ := ReadCounter(o.Counters, SlotRx)
		t.Logf("%s sent %d counted %d per %v in %v; bytes %d", g, sent.Load(), after.Packets-before.Packets, per, time.Since(t0), after.Bytes-before.Bytes)
	}
	st, err := h.EthtoolStats()
	t.Log(st, err)
	s, err := h.SNMP()
	t.Log(s["Udp"], err)
}
