package cpumap_test

import (
	"fmt"

	"github.com/rxsim/rxsim/models/cpumap"
	"github.com/rxsim/rxsim/models/pkt"
)

// A full ring of 64: the consumer takes 15 frames, but zeroes slots only 16
// at a time, so the producer still finds the ring full; one more frame
// consumed frees 16 slots at once.
func ExamplePtrRing() {
	r := cpumap.NewPtrRing(64)
	for r.Produce(pkt.Packet{Segs: 1}) {
	}
	buf := make([]pkt.Packet, 15)
	r.ConsumeBatched(buf)
	fmt.Println("after 15:", r.Len(), "queued,", r.Occupied(), "slots look full, produce ok:", r.Produce(pkt.Packet{Segs: 1}))
	r.ConsumeBatched(buf[:1])
	n := 0
	for r.Produce(pkt.Packet{Segs: 1}) {
		n++
	}
	fmt.Println("after 16:", n, "produced")
	// Output:
	// after 15: 49 queued, 64 slots look full, produce ok: false
	// after 16: 16 produced
}
