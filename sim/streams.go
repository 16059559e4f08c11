package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Streams hands out independent random streams derived from one seed and a
// stream name, so that adding a component never shifts another component's
// random numbers. Each name always yields the same sequence for a given seed.
type Streams struct {
	seed uint64
}

// NewStreams returns the stream factory for seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed} }

// Seed returns the seed the streams derive from.
func (s Streams) Seed() uint64 { return s.seed }

// Get returns a fresh PCG generator for name (e.g. "pktgen/thread-1").
// Calling Get twice with the same name returns two generators with the same
// sequence; components keep the one they were given.
func (s Streams) Get(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	k := h.Sum64()
	return rand.New(rand.NewPCG(s.seed^0x9e3779b97f4a7c15, k))
}

// Source returns a rand.Source for name, for gonum distributions' Src field.
func (s Streams) Source(name string) rand.Source {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.NewPCG(s.seed^0x9e3779b97f4a7c15, h.Sum64())
}
