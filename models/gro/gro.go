package gro

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Kernel constants.
const (
	// GROHashBuckets is GRO_HASH_BUCKETS (include/net/gro.h): the bucket is
	// skb_get_hash_raw(skb) & (GRO_HASH_BUCKETS - 1) (net/core/gro.c
	// dev_gro_receive).
	GROHashBuckets = 8
	// MaxGROSkbs is MAX_GRO_SKBS (net/core/gro.c): held skbs per bucket;
	// when a new skb must be held in a full bucket the oldest is completed
	// (gro_flush_oldest).
	MaxGROSkbs = 8
	// MaxSkbFrags is MAX_SKB_FRAGS with the default CONFIG_MAX_SKB_FRAGS=17
	// (net/Kconfig, include/linux/skbuff.h): page fragments per skb before
	// skb_gro_receive chains the next segment on frag_list.
	MaxSkbFrags = 17
	// GROLegacyMaxSize is GRO_LEGACY_MAX_SIZE (include/linux/netdevice.h),
	// the default gro_max_size / gro_ipv4_max_size.
	GROLegacyMaxSize = 65536
	// DefaultNormalBatch is the default of net.core.gro_normal_batch
	// (net/core/hotdata.c).
	DefaultNormalBatch = 8
	// EthHLen is ETH_HLEN: a Packet's Len is the L2 length, GRO's skb->len
	// starts at the network header (eth_type_trans pulled the MAC header).
	EthHLen = 14
	// IPv4HLen is the IPv4 header without options; Len - EthHLen - IPv4HLen
	// is the L4 length the software checksum covers.
	IPv4HLen = 20
)

// Result is enum gro_result (include/linux/netdevice.h), what
// dev_gro_receive did with a packet.
type Result uint8

// GRO results.
const (
	// GROMerged: merged into a held skb and chained on its frag_list.
	GROMerged Result = iota
	// GROMergedFree: merged into a held skb as page fragments; the skb
	// shell is freed (NAPI_GRO_FREE / NAPI_GRO_FREE_STOLEN_HEAD).
	GROMergedFree
	// GROHeld: held as a new skb in its bucket.
	GROHeld
	// GRONormal: not aggregated; appended to the gro_normal list.
	GRONormal
	// NumResults is the number of results.
	NumResults
)

var resultNames = [NumResults]string{"merged", "merged_free", "held", "normal"}

// String returns the result's report name.
func (r Result) String() string {
	if r < NumResults {
		return resultNames[r]
	}
	return "unknown"
}

// FlushReason says why held skbs were completed. The names are the keys of
// the report's `gro.flushes`.
type FlushReason uint8

// Flush reasons, in report order.
const (
	// ReasonComplete: napi_complete_done without gro_flush_timeout
	// (gro_flush(gro, false)).
	ReasonComplete FlushReason = iota
	// ReasonOld: gro_flush(gro, true) at repoll (__napi_poll with
	// HZ >= 1000) or at napi_complete_done with a timeout armed: held since
	// an earlier jiffy.
	ReasonOld
	// ReasonOverflow: MAX_GRO_SKBS exceeded in a bucket (gro_flush_oldest).
	ReasonOverflow
	// ReasonPSH: a merged segment carried PSH (or URG/RST/SYN, which a held
	// skb never carries, so in practice PSH).
	ReasonPSH
	// ReasonFIN: a merged segment carried FIN.
	ReasonFIN
	// ReasonShort: a merged segment was shorter than gso_size.
	ReasonShort
	// ReasonMismatch: the new segment could not merge (CWR, flags, ACK,
	// sequence, or longer than gso_size).
	ReasonMismatch
	// ReasonMaxSize: the merge would reach gro_max_size.
	ReasonMaxSize
	// ReasonTimeout: the gro_flush_timeout hrtimer (napi_watchdog) path.
	ReasonTimeout
	// ReasonCpumap64: cpumap kthread after NAPI_POLL_WEIGHT packets with a
	// non-empty ring (old-only flush).
	ReasonCpumap64
	// ReasonCpumapEmpty: cpumap kthread with an empty ring (full flush).
	ReasonCpumapEmpty
	// NumReasons is the number of flush reasons.
	NumReasons
)

var reasonNames = [NumReasons]string{
	"complete", "old", "overflow", "psh", "fin", "short", "mismatch",
	"max_size", "timeout", "cpumap_64", "cpumap_empty",
}

// String returns the reason's report name.
func (r FlushReason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Deliverer receives the gro_normal list: the stack implements it as
// netif_receive_skb_list_internal. skbs is only valid during the call (the
// engine reuses its storage), and the call must not re-enter the Engine.
// Each skb's WireSegs counts its wire segments for the ledger.
type Deliverer interface {
	DeliverList(w *sim.Work, skbs []pkt.Packet)
}

// Costs are the GRO cost items in nanoseconds. The values come from the hw
// cost profile; the non-mergeable attempt cost is 26 ns on the reference CPU
// (E5-1650 v4: i40e UDP drop 5.71 Mpps with GRO on vs 6.70 Mpps off,
// kernel-rx-path.md §8.5, xp:cpumap02); the others are set by the host
// builder. Per packet on a GRO device the engine charges Attempt, plus
// MergePerSeg if the packet merged or HoldNew if it became a held skb,
// plus CsumPerByte per L4 byte when the packet has no checksum status.
type Costs struct {
	// Attempt is dev_gro_receive + inet/tcp4/udp4_gro_receive for any
	// packet on a GRO device (bucket lookup, header compare): all a
	// non-mergeable packet pays.
	Attempt float64
	// MergePerSeg is skb_gro_receive for a merged segment (frag attach,
	// head free), on top of Attempt.
	MergePerSeg float64
	// HoldNew is holding a new skb in its bucket (gso_size set-up,
	// frag0 pull, list add), on top of Attempt.
	HoldNew float64
	// Flush is napi_gro_complete (inet_gro_complete, tcp4_gro_complete:
	// header fix-up) per completed super-skb of more than one segment.
	Flush float64
	// CsumPerByte is the software checksum (__skb_gro_checksum_complete)
	// per L4 byte when pkt.Packet.CsumOK is false (CHECKSUM_NONE, e.g.
	// cpumap-built skbs, kernel-rx-path.md §6.5).
	CsumPerByte float64
}

// Config is the GRO configuration of one device / GRO node.
type Config struct {
	// GRO is NETIF_F_GRO on the device (`ethtool -K dev gro on`).
	GRO bool
	// NormalBatch is net.core.gro_normal_batch; 0 or 1 delivers each skb
	// alone.
	NormalBatch int
	// MaxSize is gro_max_size (gro_ipv4_max_size); 0 means
	// GROLegacyMaxSize.
	MaxSize int
}

// DefaultConfig returns GRO on, gro_normal_batch 8, gro_max_size 65536.
func DefaultConfig() Config {
	return Config{GRO: true, NormalBatch: DefaultNormalBatch, MaxSize: GROLegacyMaxSize}
}

// held is one held skb: NAPI_GRO_CB(skb) state plus the packet.
type held struct {
	p pkt.Packet
	// age is when the skb was held (NAPI_GRO_CB(skb)->age, in time rather
	// than jiffies).
	age sim.Time
	// gsoSize is skb_shinfo(p)->gso_size: the first segment's payload.
	gsoSize int32
	// netLen is p->len at the GRO layer: from the network header, grown
	// by each merged payload.
	netLen int32
	// lastFrags is nr_frags of NAPI_GRO_CB(p)->last.
	lastFrags int32
}

// bucket is one gro_hash[] list: slot[0] is the oldest (the list tail in
// the kernel), slot[n-1] the newest.
type bucket struct {
	n    int
	slot [MaxGROSkbs]held
}

// Engine is one GRO node (struct gro_node: napi->gro, or rcpu->gro in the
// cpumap) with its gro_normal list. It does not allocate per packet once
// built.
type Engine struct {
	cfg     Config
	costs   Costs
	maxSize int32
	d       Deliverer

	fAttempt, fMerge, fFlush, fCsum sim.FuncID

	buckets  [GROHashBuckets]bucket
	bitmask  uint8 // gro_bitmask: non-empty buckets
	heldSkbs int
	heldSegs int

	list       []pkt.Packet // rx_list
	rxCount    int          // rx_count
	normalSegs int          // wire segments on rx_list

	stats Stats
}

var _ pkt.Queuer = (*Engine)(nil)

// New returns a GRO engine. Cost items are registered in funcs under kernel
// function names: dev_gro_receive (Attempt, HoldNew), skb_gro_receive
// (MergePerSeg), napi_gro_complete (Flush), __skb_gro_checksum_complete
// (CsumPerByte). d may be nil and set later with SetDeliverer.
func New(cfg Config, costs Costs, funcs *sim.Funcs, d Deliverer) *Engine {
	e := &Engine{cfg: cfg, costs: costs, d: d}
	e.maxSize = int32(cfg.MaxSize)
	if e.maxSize <= 0 {
		e.maxSize = GROLegacyMaxSize
	}
	e.fAttempt = funcs.ID("dev_gro_receive")
	e.fMerge = funcs.ID("skb_gro_receive")
	e.fFlush = funcs.ID("napi_gro_complete")
	e.fCsum = funcs.ID("__skb_gro_checksum_complete")
	// rx_list never holds more than gro_normal_batch skbs (each counts at
	// least 1); preallocate that plus a full bucket set, capped for absurd
	// batch values (the list then grows once, not per packet).
	n := min(max(cfg.NormalBatch, 1), 4096)
	e.list = make([]pkt.Packet, 0, n+GROHashBuckets*MaxGROSkbs)
	return e
}

// SetDeliverer sets where the gro_normal list goes.
func (e *Engine) SetDeliverer(d Deliverer) { e.d = d }

// SetGRO turns NETIF_F_GRO on or off (`ethtool -K dev gro on|off`). Turning
// it off does not flush held skbs: they stay until the caller's next flush.
func (e *Engine) SetGRO(on bool) { e.cfg.GRO = on }

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Queued returns the wire segments the engine holds: in held skbs and on the
// gro_normal list (pkt.Queuer, for conservation checks).
func (e *Engine) Queued() int { return e.heldSegs + e.normalSegs }

// HeldSkbs returns the number of held skbs in all buckets.
func (e *Engine) HeldSkbs() int { return e.heldSkbs }

// HasHeld reports whether any skb is held (gro_bitmask != 0); napi_complete_done
// arms gro_flush_timeout only then.
func (e *Engine) HasHeld() bool { return e.bitmask != 0 }

// NormalPending returns the skbs and rx_count waiting on the gro_normal list.
func (e *Engine) NormalPending() (skbs, rxCount int) { return len(e.list), e.rxCount }

// Stats returns a copy of the counters.
func (e *Engine) Stats() Stats { return e.stats }

func ns(x float64) sim.Time { return sim.Time(x + 0.5) }

// Receive is napi_gro_receive / dev_gro_receive for one wire segment (Segs
// 0 or 1). The caller charges its own per-packet work; Receive charges the
// GRO items to w and may deliver the gro_normal list (when rx_count reaches
// gro_normal_batch) through the Deliverer.
func (e *Engine) Receive(w *sim.Work, p pkt.Packet) Result {
	segs := p.WireSegs()
	e.stats.SegsIn += uint64(segs)
	if !e.cfg.GRO || segs > 1 {
		return e.normal(w, p)
	}
	w.Add(e.fAttempt, ns(e.costs.Attempt))
	if !p.CsumOK && !p.ZeroCsum {
		// skb_gro_checksum_validate in tcp4/udp4_gro_receive (a UDP
		// datagram without checksum is not summed: zero_okay); once
		// validated the stack does not checksum again.
		if l4 := p.Len - EthHLen - IPv4HLen; l4 > 0 {
			w.Add(e.fCsum, ns(e.costs.CsumPerByte*float64(l4)))
		}
		p.CsumOK = true
	}
	if p.Proto != pkt.TCP {
		// udp4_gro_receive: no UDP_GRO socket, no fraglist: flush.
		return e.normal(w, p)
	}

	bi := p.Hash & (GROHashBuckets - 1)
	b := &e.buckets[bi]
	length := p.Payload // skb_gro_len(skb)
	mss := int32(1)
	if i := b.find(p.Flow, p.Hash); i >= 0 {
		h := &b.slot[i]
		// tcp_gro_receive: flush conditions before skb_gro_receive.
		mismatch := p.Flags&pkt.FlagCWR != 0 ||
			(p.Flags^h.p.Flags)&^(pkt.FlagCWR|pkt.FlagFIN|pkt.FlagPSH) != 0 ||
			p.Ack != h.p.Ack ||
			uint32(length-1) >= uint32(h.gsoSize) ||
			h.p.Seq+uint32(h.p.Payload) != p.Seq
		switch {
		case mismatch:
			e.complete(w, bi, i, ReasonMismatch)
		case h.netLen+length >= e.maxSize:
			// skb_gro_receive: p->len + len >= gro_max_size -> -E2BIG.
			e.complete(w, bi, i, ReasonMaxSize)
		default:
			mss = h.gsoSize
			res := GROMergedFree
			if h.lastFrags+1 > MaxSkbFrags {
				res = GROMerged // chained on frag_list; it becomes ->last
				h.lastFrags = 0
			} else {
				h.lastFrags++
			}
			w.Add(e.fMerge, ns(e.costs.MergePerSeg))
			h.p.Segs = uint16(h.p.WireSegs() + 1)
			h.p.Len += p.Len
			h.p.Payload += p.Payload
			h.p.Flags |= p.Flags & (pkt.FlagFIN | pkt.FlagPSH)
			h.netLen += length
			e.heldSegs++
			e.stats.Results[res]++
			// out_check_final: len < mss or URG/PSH/RST/SYN/FIN.
			switch {
			case p.Flags&pkt.FlagFIN != 0:
				e.complete(w, bi, i, ReasonFIN)
			case p.Flags&(pkt.FlagPSH|pkt.FlagURG|pkt.FlagRST|pkt.FlagSYN) != 0:
				e.complete(w, bi, i, ReasonPSH)
			case length < mss:
				e.complete(w, bi, i, ReasonShort)
			}
			return res
		}
	}
	// Not merged (no held skb of this flow, or it was just completed):
	// out_check_final with mss = 1.
	if length < mss || p.Flags&(pkt.FlagURG|pkt.FlagPSH|pkt.FlagRST|pkt.FlagSYN|pkt.FlagFIN) != 0 {
		return e.normal(w, p)
	}
	if b.n >= MaxGROSkbs {
		e.complete(w, bi, 0, ReasonOverflow) // gro_flush_oldest
	}
	w.Add(e.fAttempt, ns(e.costs.HoldNew))
	p.Segs = 1
	b.slot[b.n] = held{p: p, age: w.Now(), gsoSize: length, netLen: p.Len - EthHLen}
	b.n++
	e.bitmask |= 1 << bi
	e.heldSkbs++
	e.heldSegs++
	e.stats.Results[GROHeld]++
	return GROHeld
}

// normal is the GRO_NORMAL path of napi_skb_finish: gro_normal_one(gro,
// skb, 1).
func (e *Engine) normal(w *sim.Work, p pkt.Packet) Result {
	e.stats.Results[GRONormal]++
	e.normalOne(w, p, 1)
	return GRONormal
}

func (b *bucket) find(flow, hash uint32) int {
	for i := 0; i < b.n; i++ {
		if b.slot[i].p.Flow == flow && b.slot[i].p.Hash == hash {
			return i
		}
	}
	return -1
}
