// Package traffic models the packet sources that feed a NIC: pktgen-style
// floods (threads, bursts, flows, rate or line rate, count), UDP flows, and
// the closed-loop TCP senders (streams and request/response).
//
// Open-loop sources are deterministic functions of time and are not events:
// the NIC asks a Source for the arrivals up to a time when a poll reads the
// ring. The closed-loop TCP senders (TCPStream, TCPRR) are not events
// either: they push segments into a Wire (the link's FIFO, so arrivals are
// in time order) when an ACK or a response from the host reaches them, and
// the Wire asks the host to Kick the RX queue of the flow; the RSS demux
// splits the Wire into per-queue feeds. Their ACK-clocked and window- or
// cwnd-limited behaviour follows tcp_output.c only as far as TCP_STREAM and
// TCP_RR need (no slow start without loss, no SACK, no pacing). Wire
// serialisation is modelled from the frame size plus 24 B of FCS,
// preamble/SFD and inter-frame gap (kernel-rx-path.md §1). Left out: the
// sender host's own TX path (qdisc, driver, TX completions), PAUSE frames,
// link errors.
package traffic
