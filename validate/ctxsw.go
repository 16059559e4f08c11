package validate

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// ContextSwitch is one measurement of the cost of a context switch between
// two threads on one CPU, by lmbench's lat_ctx method: two threads pinned
// to the same CPU pass a byte through two pipes; a round trip is two
// switches (each with the wake-up of the other thread) plus two pipe
// write/read pairs, and the pairs are measured alone in one thread and
// subtracted.
type ContextSwitch struct {
	CPU        int       `json:"cpu"`
	RoundTrips int       `json:"round_trips"`
	PerSwitch  []float64 `json:"per_switch_ns"` // one per repetition
	Median     float64   `json:"median_ns"`
	// PerYield and YieldMedian measure a switch without the sleep and the
	// wake-up: two runnable threads on the CPU call sched_yield in turn,
	// less sched_yield in one thread alone (no switch).
	PerYield    []float64 `json:"per_yield_switch_ns"`
	YieldMedian float64   `json:"yield_median_ns"`
}

// MeasureContextSwitch runs reps repetitions of n round trips on cpu.
func MeasureContextSwitch(cpu, n, reps int) (*ContextSwitch, error) {
	if n < 1 || reps < 1 {
		return nil, usageErr("context switch: want n >= 1 and reps >= 1")
	}
	r := &ContextSwitch{CPU: cpu, RoundTrips: n}
	for i := 0; i < reps; i++ {
		pp, err := pingPong(cpu, n)
		if err != nil {
			return nil, err
		}
		sp, err := selfPipe(cpu, n)
		if err != nil {
			return nil, err
		}
		r.PerSwitch = append(r.PerSwitch, (pp-2*sp)/2)
		two, err := yieldLoop(cpu, n, 2)
		if err != nil {
			return nil, err
		}
		one, err := yieldLoop(cpu, n, 1)
		if err != nil {
			return nil, err
		}
		r.PerYield = append(r.PerYield, two-one)
	}
	r.Median = median(r.PerSwitch)
	r.YieldMedian = median(r.PerYield)
	return r, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// yieldLoop runs threads threads pinned to cpu, each calling sched_yield n
// times, and returns the wall time per call (ns) summed over the threads:
// with two runnable threads every call switches to the other one.
func yieldLoop(cpu, n, threads int) (float64, error) {
	start := make(chan struct{})
	var done []<-chan error
	for i := 0; i < threads; i++ {
		// The thread is pinned and discarded with its goroutine.
		done = append(done, goPinned(-1, cpu, func() error {
			<-start
			for j := 0; j < n; j++ {
				if _, _, e := unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0); e != 0 {
					return e
				}
			}
			return nil
		}))
	}
	t0 := time.Now()
	close(start)
	var err error
	for _, errc := range done {
		if e := <-errc; e != nil && err == nil {
			err = e
		}
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n*threads), err
}

// pinThread locks the goroutine to its thread and the thread to cpu (in
// the current namespace, so the caller may unlock it again).
func pinThread(cpu int) error { return lockAndPin(-1, cpu) }

// pingPong returns the mean round trip (ns) of a byte between two threads
// on cpu through two pipes.
func pingPong(cpu, n int) (float64, error) {
	var a, b [2]int
	if err := unix.Pipe2(a[:], unix.O_CLOEXEC); err != nil {
		return 0, err
	}
	if err := unix.Pipe2(b[:], unix.O_CLOEXEC); err != nil {
		unix.Close(a[0])
		unix.Close(a[1])
		return 0, err
	}
	defer func() {
		for _, fd := range []int{a[0], a[1], b[0], b[1]} {
			unix.Close(fd)
		}
	}()
	// The echo thread is pinned and discarded with its goroutine.
	errc := goPinned(-1, cpu, func() error {
		buf := make([]byte, 1)
		for i := 0; i < n; i++ {
			if _, err := unix.Read(a[0], buf); err != nil {
				return err
			}
			if _, err := unix.Write(b[1], buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err := pinThread(cpu); err != nil {
		return 0, err
	}
	defer runtime.UnlockOSThread()
	per, err := writeRead(a[1], b[0], n)
	if eerr := <-errc; err == nil {
		err = eerr
	}
	return per, err
}

// writeRead writes a byte to wfd and reads one from rfd n times and
// returns the mean time (ns) of one write and read.
func writeRead(wfd, rfd, n int) (float64, error) {
	buf := make([]byte, 1)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if _, err := unix.Write(wfd, buf); err != nil {
			return 0, err
		}
		if _, err := unix.Read(rfd, buf); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n), nil
}

// selfPipe returns the mean cost (ns) of a pipe write and read in one
// thread on cpu: no switch, no wake-up.
func selfPipe(cpu, n int) (float64, error) {
	var a [2]int
	if err := unix.Pipe2(a[:], unix.O_CLOEXEC); err != nil {
		return 0, err
	}
	defer unix.Close(a[0])
	defer unix.Close(a[1])
	if err := pinThread(cpu); err != nil {
		return 0, err
	}
	defer runtime.UnlockOSThread()
	return writeRead(a[1], a[0], n)
}

// WriteContextSwitch prints a measurement.
func WriteContextSwitch(w io.Writer, r *ContextSwitch) {
	fmt.Fprintf(w, "context switch on CPU %d (lat_ctx, 2 threads, %d round trips x %d): median %.0f ns per switch, reps",
		r.CPU, r.RoundTrips, len(r.PerSwitch), r.Median)
	for _, v := range r.PerSwitch {
		fmt.Fprintf(w, " %.0f", v)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "switch without sleep and wake-up (2 threads in sched_yield, less 1 alone): median %.0f ns, reps", r.YieldMedian)
	for _, v := range r.PerYield {
		fmt.Fprintf(w, " %.0f", v)
	}
	fmt.Fprintln(w)
}

// ctxswCLI implements `rxsim validate ctxsw`.
func ctxswCLI(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("rxsim validate ctxsw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cpu := fs.Int("cpu", 1, "CPU to measure on")
	n := fs.Int("n", 200000, "round trips per repetition")
	reps := fs.Int("reps", 7, "repetitions")
	if err := fs.Parse(args); err != nil {
		return usageErr("%v", err)
	}
	r, err := MeasureContextSwitch(*cpu, *n, *reps)
	if err != nil {
		return err
	}
	WriteContextSwitch(stdout, r)
	return nil
}
