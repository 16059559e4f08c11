package scenarios

import (
	"strings"
	"testing"
)

// checkSpecOrError is the loader's invariant (after cilium/ebpf's
// FuzzLoadCollectionSpec): a spec or an error, never both, never neither; an
// error is a *Error; a spec passes validation again.
func checkSpecOrError(t *testing.T, s *Spec, err error) {
	t.Helper()
	if (s == nil) == (err == nil) {
		t.Fatalf("got spec %v and error %v: want exactly one", s != nil, err)
	}
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error %T %q is not a *scenarios.Error", err, err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "scenario ") {
			t.Fatalf("error %q lacks the \"scenario \" prefix", msg)
		}
		return
	}
	if verr := s.validate(); verr != nil {
		t.Fatalf("returned spec fails validate: %v", verr)
	}
}

// FuzzParse feeds arbitrary bytes to the scenario parser. Seed corpus:
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, name := range Builtins() {
		_, src, err := Source(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("fuzz.toml", src)
		checkSpecOrError(t, s, err)
	})
}

// FuzzSet applies two arbitrary --set strings to a built-in scenario. Seed
// corpus: testdata/fuzz/FuzzSet.
func FuzzSet(f *testing.F) {
	f.Add("nic.ring_size=1024", "traffic.threads=1")
	f.Fuzz(func(t *testing.T, set1, set2 string) {
		s, err := Load(Default, set1, set2)
		checkSpecOrError(t, s, err)
	})
}
