package sweep

import (
	"testing"

	"github.com/rxsim/rxsim/scenarios"
)

// TestStudies loads every built-in study and every point of its grid.
func TestStudies(t *testing.T) {
	tests := []struct {
		name   string
		keys   []string
		points int
	}{
		{"qsize-sweep", []string{"cpumap.qsize", "traffic.rate"}, 8 * 7},
		{"batch-sweep", []string{"gro.normal_batch"}, 6},
		{"delivery-modes", []string{"cpumap.delivery", "traffic.rate"}, 5 * 7},
	}
	for _, tt := range tests {
		s, err := scenarios.Load(tt.name)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		params, err := FromSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, p := range params {
			keys = append(keys, p.Key)
		}
		if len(keys) != len(tt.keys) || keys[0] != tt.keys[0] || keys[len(keys)-1] != tt.keys[len(tt.keys)-1] {
			t.Errorf("%s: keys %v, want %v", tt.name, keys, tt.keys)
		}
		p := Plan{Scenario: tt.name, Params: params, Reps: 1, Seed: s.Seed}
		specs, err := p.Specs()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(specs) != tt.points {
			t.Errorf("%s: %d points, want %d", tt.name, len(specs), tt.points)
		}
		seen := map[string]bool{}
		for _, sp := range specs {
			seen[Fingerprint(sp)] = true
		}
		if len(seen) != tt.points {
			t.Errorf("%s: %d distinct configurations, want %d", tt.name, len(seen), tt.points)
		}
	}
}
