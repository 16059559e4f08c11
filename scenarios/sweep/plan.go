package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/rxsim/rxsim/scenarios"
)

// Plan is a complete experiment: a scenario, its base overrides, the grid
// and the replications. It is pure data; a Report stores it so that an
// experiment can be extended, sharded and merged.
type Plan struct {
	// Scenario is a built-in scenario name or a file path.
	Scenario string `json:"scenario"`
	// Sets are the base --set overrides, applied before a point's values.
	Sets []string `json:"sets,omitempty"`
	// Params are the swept fields in grid order.
	Params []Param `json:"params"`
	// Reps is the number of replications per point.
	Reps int `json:"reps"`
	// Seed is the base seed: replication i runs with Seed+i.
	Seed uint64 `json:"seed"`
}

// Job is one (point, replication) of a plan.
type Job struct {
	Index int    // position in the plan's job list
	Point int    // grid index of the point
	Rep   int    // replication number
	Seed  uint64 // Plan.Seed + Rep
}

// Points returns the plan's grid points in grid order.
func (p *Plan) Points() []Point { return Points(p.Params) }

// Jobs returns every (point, replication) in grid order: point-major,
// replication-minor.
func (p *Plan) Jobs() []Job {
	np := len(p.Points())
	out := make([]Job, 0, np*p.Reps)
	for i := 0; i < np; i++ {
		for r := 0; r < p.Reps; r++ {
			out = append(out, Job{Index: len(out), Point: i, Rep: r, Seed: p.Seed + uint64(r)})
		}
	}
	return out
}

// Shard returns the jobs of shard i of n (0 ≤ i < n): those whose index
// is i modulo n. Round-robin assignment keeps the shards' sizes within one
// job of each other and mixes cheap and expensive points.
func Shard(jobs []Job, i, n int) []Job {
	var out []Job
	for _, j := range jobs {
		if j.Index%n == i {
			out = append(out, j)
		}
	}
	return out
}

// ParseShard parses "--shard i/n" (0 ≤ i < n, i is 0-based like
// $SLURM_ARRAY_TASK_ID from 0 and $JOB_COMPLETION_INDEX).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			n, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("sweep: --shard %q: expected i/n with 0 <= i < n", s)
	}
	return i, n, nil
}

// Specs loads the Spec of every point, in grid order, with the base sets
// followed by the point's values.
func (p *Plan) Specs() ([]*scenarios.Spec, error) {
	pts := p.Points()
	out := make([]*scenarios.Spec, len(pts))
	for i, pt := range pts {
		sets := append(append([]string(nil), p.Sets...), pt.Sets(p.Params)...)
		s, err := scenarios.Load(p.Scenario, sets...)
		if err != nil {
			return nil, fmt.Errorf("sweep: point %s: %w", pt.Label(p.Params), err)
		}
		out[i] = s
	}
	return out, nil
}

// Fingerprint identifies a resolved Spec: the first 16 hex digits of the
// SHA-256 of its JSON encoding without the fields that do not change the
// simulation (name, description, seed, the [sweep] table). Two points
// with the same fingerprint simulate the same configuration.
func Fingerprint(s *scenarios.Spec) string {
	c := *s
	c.Name, c.Description, c.Seed, c.Sweep = "", "", 0, nil
	b, err := json.Marshal(&c)
	if err != nil {
		panic("sweep: cannot encode spec: " + err.Error()) // a Spec has no unencodable fields
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// sameExperiment reports whether two plans describe the same experiment
// (used by Merge).
func sameExperiment(a, b *Plan) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
