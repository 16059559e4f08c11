package traffic_test

import (
	"fmt"

	"github.com/rxsim/rxsim/models/traffic"
	"github.com/rxsim/rxsim/sim"
)

// A TCP_STREAM sender on a 10G wire: the initial window goes out back to
// back at line rate (1538 B per segment on the wire: 1230.4 ns), and an
// ACK of two segments lets two more follow from the ACK's arrival.
func ExampleTCPStream() {
	w := traffic.NewWire(10, 24, 2*sim.Microsecond, 64)
	rev := traffic.NewLink(10, 24, 2*sim.Microsecond)
	s := traffic.NewTCPStream(traffic.TCPStreamConfig{Streams: 1, MSS: 1448, TSOBytes: 65536, InitWindow: 3 * 1448}, w, rev, nil)
	s.Start()
	for w.Peek() != sim.Never {
		p := w.Pop()
		fmt.Printf("seq %5d arrives %v\n", p.Seq, p.Arrival)
	}
	s.Ack(10*sim.Microsecond, 0, 2*1448, 3*1448, nil)
	for w.Peek() != sim.Never {
		p := w.Pop()
		fmt.Printf("seq %5d arrives %v\n", p.Seq, p.Arrival)
	}
	// Output:
	// seq     0 arrives 3.23us
	// seq  1448 arrives 4.461us
	// seq  2896 arrives 5.691us
	// seq  4344 arrives 15.302us
	// seq  5792 arrives 16.533us
}
