package modeltest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/models/pkt"
)

// Conservation fails t unless led balances: offered = delivered + dropped
// (by reason) + the packets the queuers still hold.
func Conservation(t testing.TB, led *pkt.Ledger, queuers ...pkt.Queuer) {
	t.Helper()
	queued := 0
	for _, q := range queuers {
		queued += q.Queued()
	}
	if d := led.Check(queued); d != 0 {
		t.Errorf("conservation broken (imbalance %d): %s", d, Describe(led, queued))
	}
}

// Describe renders a ledger with its non-zero reasons and deliveries, for
// failure messages.
func Describe(led *pkt.Ledger, queued int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "offered %d = delivered %d", led.Offered, led.DeliveredTotal())
	for d := pkt.Delivery(0); d < pkt.NumDeliveries; d++ {
		if v := led.Delivered[d]; v > 0 {
			fmt.Fprintf(&b, " [%s %d]", d, v)
		}
	}
	fmt.Fprintf(&b, " + dropped %d", led.DroppedTotal())
	for r := pkt.Reason(0); r < pkt.NumReasons; r++ {
		if v := led.Dropped[r]; v > 0 {
			fmt.Fprintf(&b, " [%s %d]", r, v)
		}
	}
	fmt.Fprintf(&b, " + queued %d", queued)
	return b.String()
}
