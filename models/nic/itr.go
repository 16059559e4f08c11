package nic

// Adaptive interrupt moderation, transcribed from the drivers
// (kernel-rx-path.md §2.5 ixgbe_update_itr/ixgbe_set_itr and §3.4
// i40e_update_itr/i40e_update_enable_itr). Values keep the drivers'
// encodings: ixgbe containers hold usecs with bit 0x80 = latency mode and
// q_vector->itr holds EITR (usecs << 2); i40e holds usecs (2 us resolution)
// with bit 0x8000 = latency mode.

// ixgbe constants (ixgbe.h, ixgbe_main.c).
const (
	ixgbeITRAdaptiveMinInc   = 2
	ixgbeITRAdaptiveMinUsecs = 10
	ixgbeITRAdaptiveMaxUsecs = 126
	ixgbeITRAdaptiveLatency  = 0x80
	ixgbeITRAdaptiveBulk     = 0x00
	// IXGBE20KITR is q_vector->itr at allocation: 50 us << 2.
	IXGBE20KITR = 200
)

// i40e constants (i40e_txrx.h, i40e_txrx.c).
const (
	i40eITRAdaptiveMinInc   = 2
	i40eITRAdaptiveMinUsecs = 2
	i40eITRAdaptiveMaxUsecs = 126
	i40eITRAdaptiveLatency  = 0x8000
	i40eITRAdaptiveBulk     = 0
	i40eITRMask             = 0x1FFE
	// ITRCountdownStart is ITR_COUNTDOWN_START.
	ITRCountdownStart = 3
)

// container is a ring container's adaptive state (struct ixgbe_ring_container /
// i40e_ring_container).
type container struct {
	itr        uint32 // ixgbe: target; i40e: target_itr
	current    uint32 // i40e current_itr
	nextUpdate int64  // jiffies
	packets    uint64
	bytes      uint64
	hasRing    bool
}

// ITR is a queue vector's interrupt moderation state.
type ITR struct {
	driver    string
	adaptive  bool
	gbps      float64
	rx, tx    container
	eitr      uint32 // ixgbe q_vector->itr (usecs << 2)
	countdown int    // i40e itr_countdown
	fixedNS   int64
	Updates   uint64 // register writes
}

// NewITR returns the moderation state of a vector with RX and TX rings.
func NewITR(driver string, adaptive bool, usecs int, gbps float64) *ITR {
	it := &ITR{driver: driver, adaptive: adaptive, gbps: gbps, fixedNS: int64(usecs) * 1000}
	it.rx.hasRing, it.tx.hasRing = true, true
	switch driver {
	case "ixgbe":
		it.eitr = uint32(usecs) << 2
		it.rx.itr = ixgbeITRAdaptiveMaxUsecs | ixgbeITRAdaptiveLatency
		it.tx.itr = ixgbeITRAdaptiveMaxUsecs | ixgbeITRAdaptiveLatency
	case "i40e":
		v := uint32(usecs) & i40eITRMask
		it.rx.itr, it.rx.current = v, v
		it.tx.itr, it.tx.current = v, v
	}
	return it
}

// IntervalNS returns the current minimum spacing of RX interrupts.
func (it *ITR) IntervalNS() int64 {
	if !it.adaptive {
		return it.fixedNS
	}
	switch it.driver {
	case "ixgbe":
		return int64(it.eitr>>2) * 1000
	case "i40e":
		return int64(it.rx.current&i40eITRMask) * 1000
	}
	return it.fixedNS
}

// Count adds received packets and bytes (q_vector->rx.total_packets/bytes).
func (it *ITR) Count(packets, bytes int) {
	it.rx.packets += uint64(packets)
	it.rx.bytes += uint64(bytes)
}

// Update runs the driver's adaptive algorithm after a successful
// napi_complete_done; jiffies is the current jiffy count.
func (it *ITR) Update(jiffies int64) {
	if !it.adaptive {
		return
	}
	switch it.driver {
	case "ixgbe":
		it.ixgbeSetITR(jiffies)
	case "i40e":
		it.i40eUpdateEnableITR(jiffies)
	}
}

func (it *ITR) ixgbeSetITR(j int64) {
	it.ixgbeUpdate(&it.tx, j)
	it.ixgbeUpdate(&it.rx, j)
	n := min(it.rx.itr, it.tx.itr)
	n &^= ixgbeITRAdaptiveLatency
	n <<= 2
	if n != it.eitr {
		it.eitr = n
		it.Updates++
	}
}

func (it *ITR) ixgbeUpdate(rc *container, j int64) {
	itr := uint32(ixgbeITRAdaptiveMinUsecs | ixgbeITRAdaptiveLatency)
	defer func() {
		rc.itr = itr
		rc.nextUpdate = j + 1
		rc.packets, rc.bytes = 0, 0
	}()
	if !rc.hasRing || j > rc.nextUpdate {
		return
	}
	packets := rc.packets
	if packets == 0 {
		itr = min((it.eitr>>2)+ixgbeITRAdaptiveMinInc, ixgbeITRAdaptiveMaxUsecs)
		itr += rc.itr & ixgbeITRAdaptiveLatency
		return
	}
	bytes := rc.bytes
	switch {
	case packets < 4 && bytes < 9000:
		itr = ixgbeITRAdaptiveLatency
	case packets < 48:
		itr = min((it.eitr>>2)+ixgbeITRAdaptiveMinInc, ixgbeITRAdaptiveMaxUsecs)
		return
	case packets < 96:
		itr = it.eitr >> 2
		return
	case packets < 256:
		itr = max(it.eitr>>3, ixgbeITRAdaptiveMinUsecs)
		return
	default:
		itr = ixgbeITRAdaptiveBulk
	}
	avg := ixgbeWireSize(uint32(bytes / packets))
	if itr&ixgbeITRAdaptiveLatency != 0 {
		avg >>= 1
	}
	if !ixgbeSlowLink(it.gbps) {
		itr += divRoundUp(avg, ixgbeITRAdaptiveMinInc*256) * ixgbeITRAdaptiveMinInc
	} else {
		avg = min(avg, 8064)
		itr += divRoundUp(avg, ixgbeITRAdaptiveMinInc*64) * ixgbeITRAdaptiveMinInc
	}
}

// ixgbeSlowLink reports the link speeds ixgbe_update_itr scales with
// 2*64 instead of 2*256: 2.5G, 1G and 10M (10G, 5G, 100M and any other
// speed take the default 2*256 branch of its switch).
func ixgbeSlowLink(gbps float64) bool {
	switch gbps {
	case 2.5, 1, 0.01:
		return true
	}
	return false
}

func ixgbeWireSize(a uint32) uint32 {
	switch {
	case a <= 60:
		return 5120
	case a <= 316:
		return a*40 + 2720
	case a <= 1084:
		return a*15 + 11452
	case a < 1968:
		return a*5 + 22420
	}
	return 32256
}

func divRoundUp(a, b uint32) uint32 { return (a + b - 1) / b }

// i40eDivisor is i40e_itr_divisor: by link speed, 40G 2*1024, 25G/20G
// 2*512, 1G/100M 2*32, 10G and anything else (the switch's default) 2*256.
func (it *ITR) i40eDivisor() uint32 {
	switch it.gbps {
	case 40:
		return 2 * 1024
	case 25, 20:
		return 2 * 512
	case 1, 0.1:
		return 2 * 32
	}
	return 2 * 256
}

func (it *ITR) i40eUpdate(rc *container, isRx bool, j int64) {
	itr := uint32(i40eITRAdaptiveMaxUsecs | i40eITRAdaptiveLatency)
	if isRx {
		itr = i40eITRAdaptiveMinUsecs | i40eITRAdaptiveLatency
	}
	clear := func() {
		rc.itr = itr
		rc.nextUpdate = j + 1
		rc.packets, rc.bytes = 0, 0
	}
	if !rc.hasRing || j > rc.nextUpdate {
		clear()
		return
	}
	if it.countdown > 0 {
		itr = rc.itr
		clear()
		return
	}
	packets, bytes := rc.packets, rc.bytes
	latency := false
	if isRx {
		if packets > 0 && packets < 4 && bytes < 9000 && it.tx.itr&i40eITRAdaptiveLatency != 0 {
			itr = i40eITRAdaptiveLatency
			latency = true
		}
	} else if packets < 4 {
		if rc.itr == i40eITRAdaptiveMaxUsecs && it.rx.itr&i40eITRMask == i40eITRAdaptiveMaxUsecs {
			clear() // goto clear_counts with the start value

			return
		}
	} else if packets > 32 {
		rc.itr &^= i40eITRAdaptiveLatency
	}
	if !latency {
		if packets < 56 {
			itr = rc.itr + i40eITRAdaptiveMinInc
			if itr&i40eITRMask > i40eITRAdaptiveMaxUsecs {
				itr &= i40eITRAdaptiveLatency
				itr += i40eITRAdaptiveMaxUsecs
			}
			clear()
			return
		}
		if packets <= 256 {
			itr = min(it.tx.current, it.rx.current) & i40eITRMask
			if packets > 112 {
				itr = (itr / 2) & i40eITRMask
				itr = max(itr, i40eITRAdaptiveMinUsecs)
			}
			clear()
			return
		}
		itr = i40eITRAdaptiveBulk
	}
	avg := i40eWireSize(uint32(bytes / max(packets, 1)))
	if itr&i40eITRAdaptiveLatency != 0 {
		avg >>= 1
	}
	itr += divRoundUp(avg, it.i40eDivisor()) * i40eITRAdaptiveMinInc
	if itr&i40eITRMask > i40eITRAdaptiveMaxUsecs {
		itr &= i40eITRAdaptiveLatency
		itr += i40eITRAdaptiveMaxUsecs
	}
	clear()
}

func i40eWireSize(a uint32) uint32 {
	switch {
	case a <= 60:
		return 4096
	case a <= 380:
		return a*40 + 1696
	case a <= 1084:
		return a*15 + 11452
	case a <= 1980:
		return a*5 + 22420
	}
	return 32256
}

func (it *ITR) i40eUpdateEnableITR(j int64) {
	it.i40eUpdate(&it.tx, false, j)
	it.i40eUpdate(&it.rx, true, j)
	rx, tx := &it.rx, &it.tx
	switch {
	case rx.itr < rx.current:
		rx.current = rx.itr
		it.countdown = ITRCountdownStart
		it.Updates++
	case tx.itr < tx.current || int64(rx.itr)-int64(rx.current) < int64(tx.itr)-int64(tx.current):
		tx.current = tx.itr
		it.countdown = ITRCountdownStart
		it.Updates++
	case rx.current != rx.itr:
		rx.current = rx.itr
		it.countdown = ITRCountdownStart
		it.Updates++
	default:
		if it.countdown > 0 {
			it.countdown--
		}
	}
}
