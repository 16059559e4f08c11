// Package pkt defines the packet value that flows through rxsim's models, the
// named drop reasons, and the conservation ledger that every model test checks:
// every offered packet is delivered, dropped with a named reason, or still
// queued somewhere.
//
// A Packet is a small value (no pointers) copied between preallocated ring
// buffers; it stands for an xdp_buff/xdp_frame or an sk_buff depending on
// where it is. A GRO super-packet is one Packet with Segs > 1.
package pkt
