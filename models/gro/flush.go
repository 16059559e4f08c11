package gro

import (
	"math/bits"

	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// complete removes held skb i from b and completes it: napi_gro_complete
// then gro_normal_one(gro, skb, NAPI_GRO_CB(skb)->count).
func (e *Engine) complete(w *sim.Work, bi uint32, i int, r FlushReason) {
	b := &e.buckets[bi]
	h := b.slot[i]
	copy(b.slot[i:b.n], b.slot[i+1:b.n])
	b.n--
	if b.n == 0 {
		e.bitmask &^= 1 << bi
	}
	e.finish(w, h.p, r)
}

// finish accounts for and queues a completed held skb that is already out
// of its bucket.
func (e *Engine) finish(w *sim.Work, p pkt.Packet, r FlushReason) {
	segs := p.WireSegs()
	e.heldSkbs--
	e.heldSegs -= segs
	if segs > 1 {
		// gro_complete: count == 1 skips the protocol callbacks.
		w.Add(e.fFlush, ns(e.costs.Flush))
	}
	e.stats.Flushes[r]++
	e.stats.FlushedSegs += uint64(segs)
	e.normalOne(w, p, segs)
}

// FlushAll is gro_flush(gro, false): complete every held skb, buckets in
// ascending order and the oldest skb of each first, counting them under r.
// Callers: napi_complete_done without gro_flush_timeout (ReasonComplete),
// the gro_flush_timeout hrtimer path (ReasonTimeout), the cpumap kthread on
// an empty ring (ReasonCpumapEmpty), __napi_poll with HZ < 1000. Completed
// skbs go to the gro_normal list; call NormalList afterwards, as the kernel
// does (gro_flush_normal).
func (e *Engine) FlushAll(w *sim.Work, r FlushReason) {
	for e.bitmask != 0 {
		bi := lowestBit(e.bitmask)
		b := &e.buckets[bi]
		n := b.n
		b.n = 0
		e.bitmask &^= 1 << bi
		for i := 0; i < n; i++ {
			e.finish(w, b.slot[i].p, r)
		}
	}
}

// FlushOld is gro_flush(gro, true): in each bucket, complete held skbs from
// the oldest on and stop at the first one held in the current jiffy
// (NAPI_GRO_CB(skb)->age == jiffies), so only skbs held since an earlier
// jiffy are completed. The jiffy of a time t is t / jiffy (jiffy = 1e9/HZ
// ns); now is the caller's clock (usually w.Now()). jiffy <= 0 completes
// everything. Callers: __napi_poll at repoll with HZ >= 1000 (ReasonOld),
// napi_complete_done with gro_flush_timeout armed (ReasonOld), the cpumap
// kthread after 64 packets (ReasonCpumap64). Call NormalList afterwards.
func (e *Engine) FlushOld(w *sim.Work, now sim.Time, jiffy sim.Duration, r FlushReason) {
	if jiffy <= 0 {
		e.FlushAll(w, r)
		return
	}
	cur := now / jiffy
	mask := e.bitmask
	for mask != 0 {
		bi := lowestBit(mask)
		mask &^= 1 << bi
		b := &e.buckets[bi]
		k := 0
		for k < b.n && b.slot[k].age/jiffy != cur {
			k++
		}
		if k == 0 {
			continue
		}
		n := b.n
		// Take the k oldest out first so the bucket is consistent while
		// they are completed (completion may deliver the normal list).
		var done [MaxGROSkbs]pkt.Packet
		for i := 0; i < k; i++ {
			done[i] = b.slot[i].p
		}
		copy(b.slot[:n-k], b.slot[k:n])
		b.n = n - k
		if b.n == 0 {
			e.bitmask &^= 1 << bi
		}
		for i := 0; i < k; i++ {
			e.finish(w, done[i], r)
		}
	}
}

func lowestBit(m uint8) uint { return uint(bits.TrailingZeros8(m)) }

// normalOne is gro_normal_one(gro, skb, segs).
func (e *Engine) normalOne(w *sim.Work, p pkt.Packet, count int) {
	e.list = append(e.list, p)
	e.rxCount += count
	e.normalSegs += p.WireSegs()
	if e.rxCount >= e.cfg.NormalBatch {
		e.NormalList(w)
	}
}

// NormalList is gro_normal_list: hand the pending gro_normal list to the
// Deliverer (netif_receive_skb_list_internal) if rx_count is non-zero.
// Callers: the end of every NAPI poll (after FlushAll / FlushOld), busy-poll
// stop, and the cpumap kthread after its flush.
func (e *Engine) NormalList(w *sim.Work) {
	if e.rxCount == 0 {
		return
	}
	skbs := e.list
	e.stats.Lists++
	e.stats.SkbsDelivered += uint64(len(skbs))
	e.stats.SegsDelivered += uint64(e.normalSegs)
	e.rxCount = 0
	e.normalSegs = 0
	if e.d == nil {
		panic("gro: gro_normal list delivered with no Deliverer")
	}
	e.d.DeliverList(w, skbs)
	e.list = e.list[:0]
}
