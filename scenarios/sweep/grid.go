package sweep

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rxsim/rxsim/scenarios"
)

// Param is one swept field and the values it takes, as TOML literals
// (the text after "=" in a --set).
type Param struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Point is one point of a grid.
type Point struct {
	// Index is the point's position in grid order.
	Index int `json:"index"`
	// Values holds the point's value of each Param, in Params order.
	Values []string `json:"values"`
}

// Sets returns the point's overrides, "key=value" per parameter.
func (p Point) Sets(params []Param) []string {
	out := make([]string, len(params))
	for i, pr := range params {
		out[i] = pr.Key + "=" + p.Values[i]
	}
	return out
}

// Label returns the point's "key=value key=value" label, with string
// values unquoted.
func (p Point) Label(params []Param) string {
	parts := make([]string, len(params))
	for i, pr := range params {
		parts[i] = pr.Key + "=" + Display(p.Values[i])
	}
	return strings.Join(parts, " ")
}

// Display returns a TOML literal as it is shown in tables: a quoted
// string loses its quotes, everything else is unchanged.
func Display(lit string) string {
	if len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"' {
		if s, err := strconv.Unquote(lit); err == nil {
			return s
		}
	}
	return lit
}

// ParseFlag parses a --sweep flag, "key=v1,v2,...". Values are split at
// commas outside brackets and quotes, so "xdp.cpus=[0,1],[1]" has two
// values.
func ParseFlag(s string) (Param, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.TrimSpace(v) == "" {
		return Param{}, fmt.Errorf("sweep: --sweep %q: expected key=v1,v2,...", s)
	}
	vals := splitTop(v)
	for _, x := range vals {
		if x == "" {
			return Param{}, fmt.Errorf("sweep: --sweep %q: empty value", s)
		}
	}
	return Param{Key: k, Values: vals}, nil
}

// splitTop splits s at commas that are not inside [...] or quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// FromSpec returns the Params of a scenario's [sweep] table, sorted by key.
func FromSpec(s *scenarios.Spec) ([]Param, error) {
	keys := make([]string, 0, len(s.Sweep))
	for k := range s.Sweep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Param, 0, len(keys))
	for _, k := range keys {
		vs := s.Sweep[k]
		if len(vs) == 0 {
			return nil, fmt.Errorf("sweep: [sweep] %s: no values", k)
		}
		p := Param{Key: k}
		for _, v := range vs {
			lit, err := Literal(v)
			if err != nil {
				return nil, fmt.Errorf("sweep: [sweep] %s: %v", k, err)
			}
			p.Values = append(p.Values, lit)
		}
		out = append(out, p)
	}
	return out, nil
}

// Literal formats a decoded TOML value as a TOML literal for --set.
func Literal(v any) (string, error) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("value %v is not finite", x)
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s, nil
	case bool:
		return strconv.FormatBool(x), nil
	case string:
		return strconv.Quote(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := Literal(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return "", fmt.Errorf("unsupported value %v (%T)", v, v)
}

// MergeParams returns the scenario's params with the flag params applied: a flag
// replaces the values of the same key or adds a key. The result is sorted
// by key. A key given twice in flags is an error.
func MergeParams(fromSpec, flags []Param) ([]Param, error) {
	m := map[string]Param{}
	for _, p := range fromSpec {
		m[p.Key] = p
	}
	seen := map[string]bool{}
	for _, p := range flags {
		if seen[p.Key] {
			return nil, fmt.Errorf("sweep: --sweep %s given twice", p.Key)
		}
		seen[p.Key] = true
		m[p.Key] = p
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Param, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out, nil
}

// Points enumerates the grid of params in grid order (see the package
// documentation): the first param is the outermost loop. No params give
// one point with no values.
func Points(params []Param) []Point {
	n := 1
	for _, p := range params {
		n *= len(p.Values)
	}
	out := make([]Point, n)
	for i := range out {
		vals := make([]string, len(params))
		rem := i
		for j := len(params) - 1; j >= 0; j-- {
			k := len(params[j].Values)
			vals[j] = params[j].Values[rem%k]
			rem /= k
		}
		out[i] = Point{Index: i, Values: vals}
	}
	return out
}
