package gro

// Stats are the engine's counters. Segment counts are wire segments.
type Stats struct {
	// SegsIn counts wire segments given to Receive.
	SegsIn uint64
	// Results counts Receive calls by result.
	Results [NumResults]uint64
	// Flushes counts completed held skbs (super-skbs, including
	// single-segment ones) by reason.
	Flushes [NumReasons]uint64
	// FlushedSegs counts the wire segments in completed held skbs.
	FlushedSegs uint64
	// Lists counts gro_normal_list deliveries (Deliverer calls).
	Lists uint64
	// SkbsDelivered and SegsDelivered count what the Deliverer received.
	SkbsDelivered uint64
	SegsDelivered uint64
}

// FlushesTotal returns all completed held skbs.
func (s *Stats) FlushesTotal() uint64 {
	var n uint64
	for _, v := range s.Flushes {
		n += v
	}
	return n
}

// MergedPerSuperSkb returns the average number of segments per completed
// held skb (0 when none completed).
func (s *Stats) MergedPerSuperSkb() float64 {
	n := s.FlushesTotal()
	if n == 0 {
		return 0
	}
	return float64(s.FlushedSegs) / float64(n)
}

// SegsPerSkb returns the average number of wire segments per skb delivered
// to the stack, GRO_NORMAL skbs included (0 when none delivered).
func (s *Stats) SegsPerSkb() float64 {
	if s.SkbsDelivered == 0 {
		return 0
	}
	return float64(s.SegsDelivered) / float64(s.SkbsDelivered)
}

// FlushesByName returns the non-zero flush counts keyed by reason name, for
// the report's `gro.flushes`.
func (s *Stats) FlushesByName() map[string]uint64 {
	m := make(map[string]uint64)
	for r, v := range s.Flushes {
		if v != 0 {
			m[FlushReason(r).String()] = v
		}
	}
	return m
}
