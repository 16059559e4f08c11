// Package traffic models the packet sources that feed a NIC: pktgen-style
// floods (threads, bursts, flows, rate or line rate, count), UDP flows, and
// the closed-loop TCP senders (streams and request/response).
//
// Open-loop sources are deterministic functions of time and are not events:
// the NIC asks a Source for the arrivals up to a time when a poll reads the
// ring. Wire serialisation is modelled from the frame size plus 24 B of FCS,
// preamble/SFD and inter-frame gap (kernel-rx-path.md §1). Left out: the
// sender host's own TX path (qdisc, driver, TX completions), PAUSE frames,
// link errors.
package traffic
