package xdp

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

// Redirector is a redirect target map (the cpumap): bq_enqueue per frame and
// __cpu_map_flush at xdp_do_flush. rxCPU is the CPU running the driver poll.
type Redirector interface {
	Enqueue(w *sim.Work, rxCPU, target int, p pkt.Packet)
	Flush(w *sim.Work, rxCPU int)
}

// Stack receives XDP_PASS packets: the driver's skb build and
// napi_gro_receive (the GRO layer and the stack behind it).
type Stack interface {
	Receive(w *sim.Work, p pkt.Packet)
}

// Costs are the driver-side XDP costs (ns, from the hw cost profile).
type Costs struct {
	ReturnFrame   float64 // xdp_return_frame: DROP recycle per packet
	TxPkt, TxCall float64 // xdp_tx per frame and per tail bump
	Redirect      float64 // xdp_do_redirect per frame (buff -> frame + bq_enqueue)
	Flush         float64 // xdp_do_flush per call
}

// Hook is the per-RX-queue XDP handling in the driver: it runs the program on
// each descriptor and acts on the verdict; Finalize is the end-of-poll part
// (*_finalize_xdp_rx: xdp_do_flush and the XDP_TX tail bump).
type Hook struct {
	Prog  *Program
	Redir Redirector
	Stack Stack
	Led   *pkt.Ledger
	// Tx is the queue's XDP TX ring (nil: XDP_TX frames are finished at
	// once); Release returns the buffers of completed frames to their RX
	// queue.
	Tx      *TxRing
	Release func(q uint16, n int)
	rxCPU   int

	fnRet, fnTx, fnRedir, fnFlush sim.FuncID
	cRet, cTxPkt, cTxCall         sim.Time
	cRedir, cFlush                sim.Time

	txPending, redirPending bool

	// Stats.
	RxPackets   uint64
	TxFrames    uint64
	TxErrors    uint64 // XDP_TX frames that found the TX ring full
	Redirects   uint64
	Passed      uint64
	Dropped     uint64
	TxDoorbells uint64
}

// NewHook returns the XDP handling of a queue polled on rxCPU. prog may be
// nil (no XDP program: every packet goes to the stack).
func NewHook(prog *Program, rxCPU int, c Costs, led *pkt.Ledger, funcs *sim.Funcs) *Hook {
	return &Hook{
		Prog: prog, rxCPU: rxCPU, Led: led,
		fnRet: funcs.ID("xdp_return_frame"), fnTx: funcs.ID("xdp_tx"),
		fnRedir: funcs.ID("xdp_do_redirect"), fnFlush: funcs.ID("xdp_do_flush"),
		cRet: sim.Time(c.ReturnFrame), cTxPkt: sim.Time(c.TxPkt), cTxCall: sim.Time(c.TxCall),
		cRedir: sim.Time(c.Redirect), cFlush: sim.Time(c.Flush),
	}
}

// SetRxCPU moves the hook to the CPU that polls the queue (a busy
// poller's, napi.NAPI.OnPollCPU).
func (h *Hook) SetRxCPU(cpu int) { h.rxCPU = cpu }

// RxCPU returns the CPU the queue's driver poll (and XDP) runs on.
func (h *Hook) RxCPU() int { return h.rxCPU }

// Rx handles one received frame. It reports whether the buffer is now held
// downstream (queued in a redirect target or the stack, which must later
// release it to the queue) rather than recycled in place (DROP, ABORTED) or
// finished at once (XDP_TX completion, deliveries outside the model).
func (h *Hook) Rx(w *sim.Work, p pkt.Packet) bool {
	if h.Prog == nil {
		return h.pass(w, p)
	}
	h.RxPackets++
	v, target := h.Prog.Run(w, p)
	switch v {
	case Drop, Aborted:
		w.Add(h.fnRet, h.cRet)
		h.Dropped++
		if v == Drop {
			h.Led.Drop(pkt.XDPDrop, 1)
		} else {
			h.Led.Drop(pkt.XDPAborted, 1)
		}
		return false
	case TX:
		if h.Tx != nil && !h.Tx.Post(w.Now(), p.Queue) {
			// ring full: *_xmit_xdp_tx_ring fails, the frame is recycled
			w.Add(h.fnRet, h.cRet)
			h.TxErrors++
			h.Led.Drop(pkt.XDPTxErr, 1)
			return false
		}
		w.Add(h.fnTx, h.cTxPkt)
		h.TxFrames++
		h.txPending = true
		h.Led.Deliver(pkt.XDPTx, 1)
		return h.Tx != nil // the buffer stays on the TX ring until it is cleaned
	case Redirect:
		w.Add(h.fnRedir, h.cRedir)
		h.Redirects++
		// xdp_xmit |= REDIR whatever the target: xdp_do_flush runs at the
		// end of the poll even for targets outside the model.
		h.redirPending = true
		if h.Redir == nil || target < 0 {
			h.Led.Deliver(pkt.Redirected, 1)
			return false
		}
		h.Redir.Enqueue(w, h.rxCPU, target, p)
		return true
	}
	return h.pass(w, p)
}

func (h *Hook) pass(w *sim.Work, p pkt.Packet) bool {
	h.Passed++
	if h.Stack == nil {
		h.Led.Deliver(pkt.ToStack, 1)
		return false
	}
	h.Stack.Receive(w, p)
	return true
}

// Finalize is the end-of-poll XDP work: the TX clean of the XDP TX ring
// (frames that left the wire give their buffers back), xdp_do_flush if
// anything was redirected, one XDP_TX tail write if anything was
// transmitted.
func (h *Hook) Finalize(w *sim.Work) {
	if h.Tx != nil {
		h.Tx.Complete(w.Now(), h.Release) // the poll's TX clean
		h.Tx.Arm()
	}
	if h.redirPending {
		h.redirPending = false
		w.Add(h.fnFlush, h.cFlush)
		if h.Redir != nil {
			h.Redir.Flush(w, h.rxCPU)
		}
	}
	if h.txPending {
		h.txPending = false
		h.TxDoorbells++
		w.Add(h.fnTx, h.cTxCall)
	}
}
