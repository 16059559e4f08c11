package validate

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestSmokeCPUMap(t *testing.T) {
	h, err := NewHarness()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	o, err := LoadXDP(XDPSpec{Program: ProgRedirectCPU, CPUs: []int{1}, Qsize: 192, Mode: ModeRoundRobin, RemoteAction: RemotePass})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := h.AttachXDP(o.Prog, false); err != nil {
		t.Fatal(err)
	}
	if err := h.Configure(NetSettings{Threaded: false}); err != nil {
		t.Fatal(err)
	}
	p, err := AttachProbes()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var sent atomic.Uint64
	err = RunGenerator(context.Background(), h, GenOptions{Kind: GenLive, PktSize: 60, Flows: 1, Count: 1000000, CPU: 0, Duration: 5 * time.Second}, &sent)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	rx, _, _ := ReadCounter(o.Counters, SlotRx)
	rem, _, _ := ReadCounter(o.Counters, SlotRemote)
	re, _, _ := ReadCounter(o.Counters, SlotRedirErr)
	c, err := p.Read()
	t.Logf("sent %d rx %d remote %d redirerr %d", sent.Load(), rx.Packets, rem.Packets, re.Packets)
	t.Logf("enq %+v kth %+v full %v err %v", c.Enq, c.Kth, c.NapiFull, err)
	t.Logf("napi %v", c.NapiHist)
	s, _ := h.SNMP()
	t.Log(s["Udp"])
}
