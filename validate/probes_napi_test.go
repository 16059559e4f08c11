package validate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// polls sums the napi_poll histogram.
func polls(c ProbeCounts) uint64 {
	var n uint64
	for _, h := range c.NapiHist {
		for _, v := range h {
			n += v
		}
	}
	return n
}

// TestNapiPollDeviceFilter sends 20,000 frames into the veth with the
// napi_poll probe filtered to the receiving device and to a name no device
// has: the first counts polls, the second none.
func TestNapiPollDeviceFilter(t *testing.T) {
	requireBPF(t)
	for _, c := range []struct {
		name  string
		dev   func(h *Harness) string
		polls bool
	}{{"receiving veth", func(h *Harness) string { return h.Rcv }, true}, {"no such device", func(*Harness) string { return "rxsim-nodev" }, false}} {
		t.Run(c.name, func(t *testing.T) { napiFilterCase(t, c.dev, c.polls) })
	}
}

// napiFilterCase runs one case on its own harness (harnesses are
// serialised, so each lives only as long as its subtest).
func napiFilterCase(t *testing.T, dev func(*Harness) string, wantPolls bool) {
	h := newTestHarness(t)
	x, err := LoadXDP(XDPSpec{Program: ProgDrop})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := h.AttachXDP(x.Prog, false); err != nil {
		t.Fatal(err)
	}
	pr, err := AttachProbes(dev(h))
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("skip: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var sent atomic.Uint64
	g := GenOptions{Kind: GenAFPacket, PktSize: 60, Flows: 1, Count: 20000, CPU: 0, Duration: 10 * time.Second}
	if err := RunGenerator(context.Background(), h, g, &sent); err != nil {
		t.Fatal(err)
	}
	got, err := pr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := polls(got); (n > 0) != wantPolls || (wantPolls && n > 20000) {
		t.Errorf("device %q: %d polls for 20,000 frames, want polls %v (at most one per frame)", dev(h), n, wantPolls)
	}
}
