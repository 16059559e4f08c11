package traffic

import (
	"github.com/rxsim/rxsim/models/pkt"
	"github.com/rxsim/rxsim/sim"
)

const pktFlagPSH = pkt.FlagPSH

// TCPRRConfig configures netperf/neper TCP_RR clients on the remote host.
type TCPRRConfig struct {
	Flows    int
	ReqSize  int // request bytes (netperf -r REQ,RESP)
	RespSize int // response bytes
	MSS      int
	// RemoteDelay is the client's time from receiving a response to sending
	// the next request (its own stack and application).
	RemoteDelay sim.Time
	CsumOK      bool
	FirstFlow   uint32
	Start       sim.Time
}

// rrFlow is one client connection.
type rrFlow struct {
	flow, hash uint32
	seq        uint32  // next request byte
	ack        uint32  // response bytes received (the ACK it carries)
	sentAt     float64 // when the current request was sent (netperf's send())
	got        int     // response bytes of the current transaction received
	txn        uint32
}

// TCPRRStats are the clients' counters.
type TCPRRStats struct {
	Requests     uint64 // requests sent
	Segments     uint64 // request segments pushed
	Transactions uint64 // responses completely received
	Acks         uint64 // pure ACKs received from the host
}

// TCPRR is N closed-loop request/response clients: each sends a request,
// waits for the whole response, waits RemoteDelay, and sends the next one.
// Latency is measured as netperf does, from the request's send to the
// response's last byte arriving at the client; Record is called with it
// and the completion time. Lost requests are not retransmitted (the loop of
// that flow stops; the model's rings do not overflow at these rates).
type TCPRR struct {
	cfg    TCPRRConfig
	wire   *Wire
	rev    *Link
	flows  []rrFlow
	Record func(latency, at sim.Time)
	Stats  TCPRRStats
}

// NewTCPRR returns the clients pushing into wire; responses come back over rev.
func NewTCPRR(cfg TCPRRConfig, wire *Wire, rev *Link) *TCPRR {
	cfg.Flows = max(cfg.Flows, 1)
	r := &TCPRR{cfg: cfg, wire: wire, rev: rev, flows: make([]rrFlow, cfg.Flows)}
	for i := range r.flows {
		f := cfg.FirstFlow + uint32(i)
		r.flows[i] = rrFlow{flow: f, hash: FlowHash(f)}
	}
	return r
}

// Flows returns the flow ids of the clients.
func (r *TCPRR) Flows() []uint32 {
	out := make([]uint32, len(r.flows))
	for i := range r.flows {
		out[i] = r.flows[i].flow
	}
	return out
}

// Start sends every client's first request.
func (r *TCPRR) Start() {
	for i := range r.flows {
		r.request(&r.flows[i], float64(r.cfg.Start))
	}
}

// request sends the next request of f at time at, split into MSS segments
// with PSH on the last.
func (r *TCPRR) request(f *rrFlow, at float64) {
	f.sentAt = at
	f.got = 0
	f.txn++
	left := r.cfg.ReqSize
	for left > 0 {
		n := min(left, r.cfg.MSS)
		left -= n
		var flags uint8
		if left == 0 {
			flags = pktFlagPSH
		}
		r.wire.Send(at, segment(f.flow, f.hash, f.seq, f.ack, n, flags, r.cfg.CsumOK, f.txn))
		f.seq += uint32(n)
		r.Stats.Segments++
	}
	r.Stats.Requests++
	r.wire.Kick(f.hash)
}

func (r *TCPRR) client(flow uint32) *rrFlow {
	i := int(flow - r.cfg.FirstFlow)
	if i < 0 || i >= len(r.flows) {
		return nil
	}
	return &r.flows[i]
}

// Ack is a pure ACK from the host (the client has nothing to do with it:
// its requests fit in any window the host advertises).
func (r *TCPRR) Ack(t sim.Time, flow, ack, wnd uint32, sack []pkt.SackBlock) {
	if f := r.client(flow); f != nil {
		r.rev.Transmit(float64(t), TCPFrameOverhead)
		r.Stats.Acks++
	}
}

// Data is response data of bytes leaving the host at t. When the whole
// response has arrived the transaction completes and the next request
// follows RemoteDelay later.
func (r *TCPRR) Data(t sim.Time, flow, ack uint32, bytes int) {
	f := r.client(flow)
	if f == nil {
		return
	}
	at := float64(t)
	for left := bytes; left > 0; {
		n := min(left, r.cfg.MSS)
		left -= n
		at = r.rev.Transmit(float64(t), n+TCPFrameOverhead)
	}
	f.ack += uint32(bytes)
	f.got += bytes
	if f.got < r.cfg.RespSize {
		return
	}
	r.Stats.Transactions++
	if r.Record != nil {
		r.Record(sim.Time(at-f.sentAt), sim.Time(at))
	}
	r.request(f, at+float64(r.cfg.RemoteDelay))
}
