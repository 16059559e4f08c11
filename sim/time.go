package sim

import "fmt"

// Time is simulated time in nanoseconds since the start of a run.
type Time int64

// Duration is a span of simulated time in nanoseconds.
type Duration = Time

// Units of simulated time.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Never is a time after every event of a run.
const Never Time = 1<<63 - 1

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// Micros returns t in microseconds.
func (t Time) Micros() float64 { return float64(t) / 1e3 }

// String formats t with a unit, e.g. "1.5ms".
func (t Time) String() string {
	switch {
	case t == Never:
		return "never"
	case t >= Second || t <= -Second:
		return fmt.Sprintf("%gs", float64(t)/1e9)
	case t >= Millisecond || t <= -Millisecond:
		return fmt.Sprintf("%gms", float64(t)/1e6)
	case t >= Microsecond || t <= -Microsecond:
		return fmt.Sprintf("%gus", float64(t)/1e3)
	}
	return fmt.Sprintf("%dns", int64(t))
}
