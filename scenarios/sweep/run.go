package sweep

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rxsim/rxsim/models/host"
	"github.com/rxsim/rxsim/scenarios"
)

// Simulator runs one replication of a Spec with a seed and returns its
// metrics and latency histogram. It must be safe to call from several
// goroutines at once (each call builds its own host).
type Simulator func(s *scenarios.Spec, seed uint64) (Outcome, error)

// Outcome is what one replication returns: its metrics and, for models
// that measure latency, the latency histogram.
type Outcome struct {
	Metrics Metrics
	Latency *host.LatencyHist
}

// OutcomeOf returns the metrics and latency histogram of a host result.
func OutcomeOf(r *host.Result) Outcome {
	o := Outcome{Metrics: FromResult(r)}
	if r.LatencyUS != nil {
		o.Latency = r.LatencyUS.Hist
	}
	return o
}

// Options configure Execute.
type Options struct {
	// Workers is the number of goroutines running simulations
	// (0 = runtime.GOMAXPROCS(0)).
	Workers int
	// Sim runs one replication.
	Sim Simulator
	// Progress, if not nil, is called once per finished job, from the
	// goroutine that called Execute (never from a worker).
	Progress func()
}

// Run is one stored replication: the point's label, the fingerprint of
// its resolved Spec, the seed and the metrics.
type Run struct {
	Point   string  `json:"point"`
	Config  string  `json:"config"`
	Seed    uint64  `json:"seed"`
	Metrics Metrics `json:"metrics"`
	// Latency is the run's latency histogram (per packet or per
	// transaction), when the model measures latency.
	Latency *host.LatencyHist `json:"latency_hist,omitempty"`
}

type runKey struct {
	config string
	seed   uint64
}

func (r Run) key() runKey { return runKey{r.Config, r.Seed} }

// Missing returns the jobs whose (configuration, seed) has no run in have.
// configs holds the fingerprint of each point, in grid order.
func Missing(jobs []Job, configs []string, have []Run) []Job {
	idx := map[runKey]bool{}
	for _, r := range have {
		idx[r.key()] = true
	}
	var out []Job
	for _, j := range jobs {
		if !idx[runKey{configs[j.Point], j.Seed}] {
			out = append(out, j)
		}
	}
	return out
}

// Execute runs jobs on opt.Workers goroutines and returns their runs in
// the order of jobs, whatever the number of workers. specs holds each
// point's Spec and labels its label, by point index (Job.Point). The
// first error, in job order, stops the dispatch of new jobs and is
// returned.
func Execute(labels []string, specs []*scenarios.Spec, jobs []Job, opt Options) ([]Run, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(jobs)))
	configs := make([]string, len(specs))
	for i, s := range specs {
		configs[i] = Fingerprint(s)
	}
	out := make([]Run, len(jobs))
	errs := make([]error, len(jobs))
	var failed atomic.Bool
	next := make(chan int)
	done := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				o, err := opt.Sim(specs[j.Point], j.Seed)
				if err != nil {
					errs[i] = fmt.Errorf("sweep: point %s seed %d: %w", labels[j.Point], j.Seed, err)
					failed.Store(true)
				} else {
					out[i] = Run{Point: labels[j.Point], Config: configs[j.Point], Seed: j.Seed, Metrics: o.Metrics, Latency: o.Latency}
				}
				done <- i
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range jobs {
			if failed.Load() {
				return
			}
			next <- i
		}
	}()
	go func() { wg.Wait(); close(done) }()
	for range done {
		if opt.Progress != nil {
			opt.Progress()
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Do runs the jobs of plan, or of shard i of n when n > 0, that prev (a
// Report read from a --save file, or nil) does not already have, and
// returns the Report of plan with prev's runs and the new ones, and the
// number of runs simulated.
func Do(plan Plan, prev *Report, i, n int, opt Options) (*Report, int, error) {
	if plan.Reps < 1 {
		return nil, 0, fmt.Errorf("sweep: reps %d, expected >= 1", plan.Reps)
	}
	specs, err := plan.Specs()
	if err != nil {
		return nil, 0, err
	}
	configs := make([]string, len(specs))
	for k, s := range specs {
		configs[k] = Fingerprint(s)
	}
	jobs := plan.Jobs()
	shard := ""
	if n > 0 {
		jobs = Shard(jobs, i, n)
		shard = fmt.Sprintf("%d/%d", i, n)
	}
	var have []Run
	if prev != nil {
		have = prev.Runs
	}
	todo := Missing(jobs, configs, have)
	var labels []string
	for _, pt := range plan.Points() {
		labels = append(labels, pt.Label(plan.Params))
	}
	runs, err := Execute(labels, specs, todo, opt)
	if err != nil {
		return nil, 0, err
	}
	rep, err := Assemble(plan, configs, append(append([]Run(nil), have...), runs...), shard)
	return rep, len(todo), err
}
