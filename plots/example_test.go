package plots_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/rxsim/rxsim/plots"
)

// A throughput chart from a sweep: the cpumap line stops at its
// saturation point (8 Mpps offered), not at the end of the sweep.
func ExampleThroughputVsLoad() {
	load := []float64{2, 4, 6, 8, 10, 12}
	series := []plots.Series{
		{Name: "xdp-drop", X: load, Y: []float64{2, 4, 6, 8, 10, 12}},
		{Name: "cpumap", X: load, Y: []float64{2, 4, 5.9, 7.1, 7.12, 6.4}},
	}
	for _, s := range series {
		i := plots.SaturationIndex(s.Y, 0)
		fmt.Printf("%s: ends at %g Mpps offered\n", s.Name, s.X[i])
	}
	p, err := plots.ThroughputVsLoad("XDP_REDIRECT to cpumap", series, plots.Options{
		XLabel: "offered load (Mpps)", YLabel: "rx (Mpps)", Ideal: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "plots")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := plots.Save(p, filepath.Join(dir, "rx.svg"), 0, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote rx.svg")
	// Output:
	// xdp-drop: ends at 12 Mpps offered
	// cpumap: ends at 8 Mpps offered
	// wrote rx.svg
}
