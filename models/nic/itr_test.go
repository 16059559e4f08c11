package nic

import "testing"

// Hand-computed expectations for the adaptive ITR algorithms, from the
// kernel text in kernel-rx-path.md §2.5 (ixgbe_update_itr, ixgbe_set_itr)
// and §3.4 (i40e_update_itr, i40e_update_enable_itr). ITR tests involve no
// packets, so there is nothing to conserve.

const lat = ixgbeITRAdaptiveLatency

// TestIxgbeUpdateITR runs ixgbe_update_itr on the RX container of a vector
// whose EITR is eitrUsecs, from the given counts, in jiffy 4 with
// next_update 5 (fresh) unless stale.
func TestIxgbeUpdateITR(t *testing.T) {
	cases := []struct {
		name      string
		gbps      float64
		eitrUsecs uint32
		packets   uint64
		bytes     uint64
		stale     bool
		want      uint32
	}{
		// packets == 0: cur + 2, keeping the container's latency bit (126|LAT at start).
		{"idle", 10, 50, 0, 0, false, 52 | lat},
		{"idle-cap", 10, 125, 0, 0, false, 126 | lat},
		// packets < 4 && bytes < 9000: latency mode, size formula halved:
		// avg 60 -> 5120 >> 1 = 2560 -> ceil(2560/512)*2 = 10.
		{"latency-64B", 10, 50, 2, 120, false, 10 | lat},
		// avg 1000 -> 1000*15 + 11452 = 26452 >> 1 = 13226 -> ceil(/512) = 26 -> 52.
		{"latency-1000B", 10, 50, 3, 3000, false, 52 | lat},
		// bytes not < 9000: not latency mode; packets < 48 -> cur + 2 (bulk).
		{"3pkts-9000B", 10, 50, 3, 9000, false, 52},
		{"10pkts", 10, 50, 10, 600, false, 52},
		{"47pkts", 10, 50, 47, 47 * 60, false, 52},
		{"47pkts-cap", 10, 125, 47, 47 * 60, false, 126},
		// 48..95: keep cur.
		{"48pkts", 10, 50, 48, 48 * 60, false, 50},
		{"95pkts", 10, 50, 95, 95 * 60, false, 50},
		// 96..255: halve (q_vector->itr >> 3), min 10.
		{"96pkts", 10, 50, 96, 96 * 60, false, 25},
		{"255pkts", 10, 50, 255, 255 * 60, false, 25},
		{"halve-min", 10, 10, 200, 200 * 60, false, 10},
		// >= 256: bulk by size; 10G: ceil(size / 512) * 2.
		{"bulk-60B", 10, 50, 256, 256 * 60, false, 20},        // 5120 -> 10 -> 20 us (50K irq/s)
		{"bulk-64B", 10, 50, 1000, 1000 * 64, false, 22},      // 64*40+2720 = 5280 -> 11 -> 22
		{"bulk-316B", 10, 50, 300, 300 * 316, false, 60},      // 15360 -> 30 -> 60
		{"bulk-1084B", 10, 50, 300, 300 * 1084, false, 110},   // 27712 -> 54.1 -> 55 -> 110
		{"bulk-1514B", 10, 50, 300, 300 * 1514, false, 118},   // 29990 -> 58.6 -> 59 -> 118
		{"bulk-1967B", 10, 50, 300, 300 * 1967, false, 126},   // 32255 -> 63 -> 126
		{"bulk-1968B", 10, 50, 300, 300 * 1968, false, 126},   // plateau 32256 -> 63 -> 126 (~8K irq/s)
		{"bulk-60B-1G", 1, 50, 256, 256 * 60, false, 80},      // 1G: ceil(5120 / 128) * 2 = 80
		{"bulk-9000B-1G", 1, 50, 300, 300 * 9000, false, 126}, // 32256 capped 8064 -> 63 -> 126
		{"bulk-60B-2.5G", 2.5, 50, 256, 256 * 60, false, 80},  // 2.5G is in the *64 branch too
		{"bulk-60B-100M", 0.1, 50, 256, 256 * 60, false, 20},  // 100M: the default *256 branch
		{"bulk-60B-5G", 5, 50, 256, 256 * 60, false, 20},      // 5G: default branch
		{"stale", 10, 50, 1000, 1000 * 60, true, 10 | lat},    // > 1 jiffy: start value 10|LATENCY
		{"stale-idle", 10, 50, 0, 0, true, 10 | lat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := NewITR("ixgbe", true, int(c.eitrUsecs), c.gbps)
			it.rx.packets, it.rx.bytes, it.rx.nextUpdate = c.packets, c.bytes, 5
			j := int64(4)
			if c.stale {
				j = 6 // time_after(6, 5): no update for more than a jiffy
			}
			it.ixgbeUpdate(&it.rx, j)
			if it.rx.itr != c.want {
				t.Errorf("itr %d (%#x), want %d (%#x)", it.rx.itr, it.rx.itr, c.want, c.want)
			}
			if it.rx.packets != 0 || it.rx.bytes != 0 || it.rx.nextUpdate != j+1 {
				t.Errorf("clear_counts: packets %d bytes %d next_update %d, want 0 0 %d", it.rx.packets, it.rx.bytes, it.rx.nextUpdate, j+1)
			}
		})
	}
}

// TestIxgbeSetITR: EITR = (min(rx.itr, tx.itr) & ~LATENCY) << 2, the min
// taken with the latency bit set, written only when it changes.
func TestIxgbeSetITR(t *testing.T) {
	cases := []struct {
		name             string
		rxPkts, rxBytes  uint64
		txPkts, txBytes  uint64
		stale            bool
		wantUsecs        uint32
		wantUpdates      uint64
		wantRxIn, wantTx uint32
	}{
		// RX bulk 20; TX idle: 50+2 with TX's latency bit -> 180 > 20.
		{"bulk-rx", 1000, 60000, 0, 0, false, 20, 1, 20, 52 | lat},
		// Both stale: 10|LAT each -> 10 us.
		{"stale", 1000, 60000, 0, 0, true, 10, 1, 10 | lat, 10 | lat},
		// RX latency mode (10|LAT = 138) loses against TX bulk 52.
		{"latency-loses", 2, 120, 10, 600, false, 52, 1, 10 | lat, 52},
		// Keep: RX 48..95 keeps 50, TX in 48..95 too: EITR unchanged, no write.
		{"unchanged", 60, 3600, 60, 3600, false, 50, 0, 50, 50},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := NewITR("ixgbe", true, 50, 10)
			it.rx.packets, it.rx.bytes, it.rx.nextUpdate = c.rxPkts, c.rxBytes, 5
			it.tx.packets, it.tx.bytes, it.tx.nextUpdate = c.txPkts, c.txBytes, 5
			j := int64(4)
			if c.stale {
				j = 7
			}
			it.Update(j)
			if it.rx.itr != c.wantRxIn || it.tx.itr != c.wantTx {
				t.Errorf("rx.itr %#x tx.itr %#x, want %#x %#x", it.rx.itr, it.tx.itr, c.wantRxIn, c.wantTx)
			}
			if it.eitr != c.wantUsecs<<2 || it.IntervalNS() != int64(c.wantUsecs)*1000 {
				t.Errorf("EITR %d (interval %d ns), want %d (%d us)", it.eitr, it.IntervalNS(), c.wantUsecs<<2, c.wantUsecs)
			}
			if it.Updates != c.wantUpdates {
				t.Errorf("register writes %d, want %d", it.Updates, c.wantUpdates)
			}
		})
	}
}

// TestIxgbeFixedITR: with adaptive ITR off the interval is rx-usecs and
// Update changes nothing.
func TestIxgbeFixedITR(t *testing.T) {
	it := NewITR("ixgbe", false, 50, 10)
	it.Count(1000, 60000)
	it.Update(3)
	if it.IntervalNS() != 50000 || it.Updates != 0 {
		t.Errorf("fixed ITR: interval %d ns, %d writes; want 50000 and 0", it.IntervalNS(), it.Updates)
	}
}

const ilat = i40eITRAdaptiveLatency

// TestI40eUpdateITR runs i40e_update_itr on the RX (or TX) container with
// countdown 0, current ITRs 50 us, from the given counts.
func TestI40eUpdateITR(t *testing.T) {
	cases := []struct {
		name      string
		gbps      float64
		tx        bool   // update the TX container
		txLatency bool   // tx.target_itr has the latency bit
		target    uint32 // container's target before the update
		packets   uint64
		bytes     uint64
		stale     bool
		countdown int
		want      uint32
	}{
		// Bulk (> 256 packets): size formula, 40G divisor 2048.
		{"40G-bulk-60B", 40, false, false, 50, 300, 300 * 60, false, 0, 4},       // 4096 -> 2 -> 4 us (250K irq/s)
		{"40G-bulk-1514B", 40, false, false, 50, 300, 300 * 1514, false, 0, 30},  // 1514*5+22420 = 29990 -> 15 -> 30
		{"40G-bulk-2000B", 40, false, false, 50, 300, 300 * 2000, false, 0, 32},  // plateau 32256 -> 16 -> 32 us
		{"10G-bulk-60B", 10, false, false, 50, 300, 300 * 60, false, 0, 16},      // 4096 / 512 = 8 -> 16
		{"10G-bulk-2000B", 10, false, false, 50, 300, 300 * 2000, false, 0, 126}, // 63 -> 126
		{"25G-bulk-60B", 25, false, false, 50, 300, 300 * 60, false, 0, 8},       // 4096 / 1024 = 4 -> 8
		{"1G-bulk-60B", 1, false, false, 50, 300, 300 * 60, false, 0, 126},       // 4096 / 64 = 64 -> 128, capped 126
		{"1G-bulk-200B", 1, false, false, 50, 300, 300 * 200, false, 0, 126},     // 9696 / 64 -> 152 -> 304, capped 126
		{"5G-bulk-60B", 5, false, false, 50, 300, 300 * 60, false, 0, 16},        // default branch 2*256 like 10G
		{"1G-latency", 1, false, true, 50, 2, 120, false, 0, 64 | ilat},          // 2048 / 64 = 32 -> 64
		{"40G-bulk-380B", 40, false, false, 50, 300, 300 * 380, false, 0, 18},    // 380*40+1696 = 16896 -> 8.25 -> 9 -> 18
		{"40G-bulk-1084B", 40, false, false, 50, 300, 300 * 1084, false, 0, 28},  // 27712 -> 13.5 -> 14 -> 28
		// RX latency: 1..3 packets, < 9000 B, TX in latency mode: halved size formula.
		{"40G-latency", 40, false, true, 50, 2, 120, false, 0, 2 | ilat},     // 2048 / 2048 = 1 -> 2
		{"10G-latency", 10, false, true, 50, 2, 120, false, 0, 8 | ilat},     // 2048 / 512 = 4 -> 8
		{"rx-few-tx-bulk", 40, false, false, 50, 2, 120, false, 0, 52},       // TX bulk: packets < 56 -> +2
		{"rx-idle", 40, false, false, 50, 0, 0, false, 0, 52},                // 0 packets: < 56 -> +2
		{"rx-55", 40, false, false, 126, 55, 55 * 60, false, 0, 126},         // 126 + 2 capped at 126
		{"rx-55-odd", 40, false, false, 125, 55, 55 * 60, false, 0, 127},     // cap tests itr & 0x1FFE: 127 -> 126 is not > 126
		{"rx-56", 40, false, false, 80, 56, 56 * 60, false, 0, 50},           // 56..112: min(currents) = 50
		{"rx-112", 40, false, false, 80, 112, 112 * 60, false, 0, 50},        // still the goldilocks zone
		{"rx-113", 40, false, false, 80, 113, 113 * 60, false, 0, 24},        // halve: 25 & 0x1FFE = 24
		{"rx-256", 40, false, false, 80, 256, 256 * 60, false, 0, 24},        // 256 is still "halve"
		{"countdown", 40, false, false, 80, 300, 300 * 60, false, 2, 80},     // itr_countdown: keep the target
		{"rx-stale", 40, false, false, 80, 300, 300 * 60, true, 0, 2 | ilat}, // start value RX 2|LATENCY
		{"tx-stale", 40, true, false, 80, 0, 0, true, 0, 126 | ilat},         // start value TX 126|LATENCY
		{"tx-few-maxed", 40, true, false, 126, 2, 120, false, 0, 126 | ilat}, // TX & RX at 126, < 4 pkts: start value
		{"tx-bulkify", 40, true, false, 60 | ilat, 40, 2400, false, 0, 62},   // > 32 pkts clears LATENCY, then +2
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := NewITR("i40e", true, 50, c.gbps)
			it.countdown = c.countdown
			if c.txLatency {
				it.tx.itr |= ilat
			}
			rc := &it.rx
			if c.tx {
				rc = &it.tx
				if c.name == "tx-few-maxed" {
					it.rx.itr = 126
				}
			}
			rc.itr = c.target
			rc.packets, rc.bytes, rc.nextUpdate = c.packets, c.bytes, 5
			j := int64(4)
			if c.stale {
				j = 6
			}
			it.i40eUpdate(rc, !c.tx, j)
			if rc.itr != c.want {
				t.Errorf("target_itr %d (%#x), want %d (%#x)", rc.itr, rc.itr, c.want, c.want)
			}
			if rc.packets != 0 || rc.bytes != 0 || rc.nextUpdate != j+1 {
				t.Errorf("clear_counts not applied")
			}
		})
	}
}

// TestI40eUpdateEnableITRPriority: at most one of the RX/TX throttles is
// written per completion, in the order (1) RX down, (2) TX down or TX up
// by more than RX, (3) RX change, (4) none (itr_countdown--). Targets are
// frozen by a non-zero countdown so that only the priority rule acts.
func TestI40eUpdateEnableITRPriority(t *testing.T) {
	cases := []struct {
		name           string
		rxT, txT       uint32 // targets; both currents are 50
		wantRx, wantTx uint32 // currents after
		wantCountdown  int
		wantWrites     uint64
	}{
		{"rx-down-first", 30, 20, 30, 50, ITRCountdownStart, 1},
		{"tx-down", 50, 20, 50, 20, ITRCountdownStart, 1},
		{"tx-rises-more", 60, 80, 50, 80, ITRCountdownStart, 1},
		{"rx-rises-more", 80, 60, 80, 50, ITRCountdownStart, 1},
		{"same-rise-rx-wins", 60, 60, 60, 50, ITRCountdownStart, 1},
		{"no-change", 50, 50, 50, 50, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := NewITR("i40e", true, 50, 40)
			it.countdown = 1
			it.rx.itr, it.tx.itr = c.rxT, c.txT
			it.rx.nextUpdate, it.tx.nextUpdate = 5, 5
			it.Update(4)
			if it.rx.current != c.wantRx || it.tx.current != c.wantTx {
				t.Errorf("currents rx %d tx %d, want %d %d", it.rx.current, it.tx.current, c.wantRx, c.wantTx)
			}
			if it.countdown != c.wantCountdown || it.Updates != c.wantWrites {
				t.Errorf("countdown %d writes %d, want %d %d", it.countdown, it.Updates, c.wantCountdown, c.wantWrites)
			}
		})
	}
}

// TestI40eAdaptiveSequence follows a 40G vector through six completions
// (hand-computed from §3.4):
//  1. 300 x 60 B: RX target 4 (bulk), TX idle 50+2 = 52; RX down first:
//     RX current 4, countdown 3.
//  2. countdown keeps both targets; TX rises (52 vs RX 0): TX current 52.
//     3-5. countdown keeps the targets; nothing to write: 3 -> 2 -> 1 -> 0
//     (completions 3, 4, 5), whatever the counts.
//  6. 10 packets: RX < 56 -> 4+2 = 6; TX idle 52+2 = 54; rises are equal
//     (2 and 2), so RX is written: RX current 6.
func TestI40eAdaptiveSequence(t *testing.T) {
	it := NewITR("i40e", true, 50, 40)
	steps := []struct {
		pkts, bytes     int
		rxCur, txCur    uint32
		countdown       int
		writes          uint64
		intervalNS      int64
		rxTarget, txTgt uint32
	}{
		{300, 300 * 60, 4, 50, 3, 1, 4000, 4, 52},
		{300, 300 * 60, 4, 52, 3, 2, 4000, 4, 52},
		{10, 600, 4, 52, 2, 2, 4000, 4, 52},
		{1000, 60000, 4, 52, 1, 2, 4000, 4, 52},
		{10, 600, 4, 52, 0, 2, 4000, 4, 52},
		{10, 600, 6, 52, 3, 3, 6000, 6, 54},
	}
	for i, s := range steps {
		it.Count(s.pkts, s.bytes)
		it.Update(int64(i)) // one completion per jiffy from jiffy 0: never stale
		if it.rx.current != s.rxCur || it.tx.current != s.txCur || it.countdown != s.countdown ||
			it.Updates != s.writes || it.IntervalNS() != s.intervalNS || it.rx.itr != s.rxTarget || it.tx.itr != s.txTgt {
			t.Fatalf("completion %d: rx %d/%d tx %d/%d countdown %d writes %d interval %d; want rx %d/%d tx %d/%d countdown %d writes %d interval %d",
				i+1, it.rx.itr, it.rx.current, it.tx.itr, it.tx.current, it.countdown, it.Updates, it.IntervalNS(),
				s.rxTarget, s.rxCur, s.txTgt, s.txCur, s.countdown, s.writes, s.intervalNS)
		}
	}
}
