package nic

// PostedForTest exposes the posted-descriptor count to the external tests
// (posted + filled + cleaned = size - 1).
func (r *RxRing) PostedForTest() int { return r.posted }

// BufCapsForTest returns the capacity of each queue's demux buffer.
func (d *Demux) BufCapsForTest() []int {
	var out []int
	for _, f := range d.queues {
		out = append(out, cap(f.buf))
	}
	return out
}
