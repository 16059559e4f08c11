package modeltest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/models/modeltest"
	"github.com/rxsim/rxsim/models/pkt"
)

// recT records Errorf instead of failing.
type recT struct {
	testing.TB
	msgs []string
}

func (r *recT) Helper()                      {}
func (r *recT) Errorf(f string, args ...any) { r.msgs = append(r.msgs, fmt.Sprintf(f, args...)) }

type held int

func (h held) Queued() int { return int(h) }

// TestConservation: the helper passes a balanced ledger and names the
// imbalance, reasons and deliveries of an unbalanced one.
func TestConservation(t *testing.T) {
	var led pkt.Ledger
	led.Offer(10)
	led.Drop(pkt.RxMissed, 3)
	led.Deliver(pkt.XDPTx, 2)
	cases := []struct {
		queued []pkt.Queuer
		fail   bool
	}{
		{[]pkt.Queuer{held(5)}, false},
		{[]pkt.Queuer{held(2), held(3)}, false},
		{[]pkt.Queuer{held(4)}, true},
		{nil, true},
	}
	for i, c := range cases {
		r := &recT{TB: t}
		modeltest.Conservation(r, &led, c.queued...)
		if got := len(r.msgs) > 0; got != c.fail {
			t.Errorf("case %d: failed %v, want %v (%v)", i, got, c.fail, r.msgs)
		}
		if c.fail && !strings.Contains(r.msgs[0], "[rx_missed 3]") || c.fail && !strings.Contains(r.msgs[0], "[xdp_tx 2]") {
			t.Errorf("case %d: message %q lacks the reasons", i, r.msgs[0])
		}
	}
}
