package nic

// PostedForTest exposes the posted-descriptor count to the external tests
// (posted + filled + cleaned = size - 1).
func (r *RxRing) PostedForTest() int { return r.posted }
