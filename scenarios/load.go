package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/rxsim/rxsim/hw"
)

//go:embed builtin/*.toml
var builtin embed.FS

// Builtins returns the names of the built-in scenarios, sorted.
func Builtins() []string {
	ents, _ := builtin.ReadDir("builtin")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(out)
	return out
}

// Default is the scenario run when none is named.
const Default = "xdp-drop-ixgbe"

// Error is a scenario error: the file, the line (0 if unknown), the field
// (dotted TOML path) and what is wrong.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("scenario ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Source returns the TOML text and display name of a scenario given by
// built-in name or file path.
func Source(nameOrPath string) (name string, src []byte, err error) {
	if b, err := builtin.ReadFile("builtin/" + nameOrPath + ".toml"); err == nil {
		return "builtin:" + nameOrPath, b, nil
	}
	b, err := os.ReadFile(nameOrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nameOrPath, nil, &Error{File: nameOrPath, Msg: fmt.Sprintf("no such file or built-in scenario (built-ins: %s)", strings.Join(Builtins(), ", "))}
		}
		return nameOrPath, nil, &Error{File: nameOrPath, Msg: err.Error()}
	}
	return filepath.Clean(nameOrPath), b, nil
}

// Load reads a scenario by built-in name or path and applies sets
// ("dotted.key=value", in order).
func Load(nameOrPath string, sets ...string) (*Spec, error) {
	file, src, err := Source(nameOrPath)
	if err != nil {
		return nil, err
	}
	return Parse(file, src, sets...)
}

// Parse decodes, overrides, defaults and validates a scenario. file names the
// source in errors. It never returns both a Spec and an error.
func Parse(file string, src []byte, sets ...string) (*Spec, error) {
	s, md, err := decode(file, src)
	if err != nil {
		return nil, err
	}
	if len(sets) > 0 {
		merged, err := applySets(file, src, sets)
		if err != nil {
			return nil, err
		}
		s, md, err = decode(file+" (with --set)", merged)
		if err != nil {
			return nil, err
		}
	}
	if err := applyDefaults(s, md); err != nil {
		field := "hw"
		if s.Costs != "" {
			if _, cerr := hw.LoadCosts(s.Costs); cerr != nil {
				field = "costs"
			}
		}
		line, note := 0, setNote(field, sets)
		if note == "" {
			line = findLine(src, "", field)
		}
		return nil, &Error{File: file, Field: field, Line: line, Msg: err.Error() + note}
	}
	if err := s.validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			line := 0
			note := setNote(fe.field, sets)
			if note == "" { // the value is in the file, not from a --set
				line = keyLine(src, strings.Split(fe.field, "."))
			}
			return nil, &Error{File: file, Line: line, Field: fe.field, Msg: fe.msg + note}
		}
		return nil, &Error{File: file, Msg: err.Error()}
	}
	return s, nil
}

func setNote(field string, sets []string) string {
	field, _, _ = strings.Cut(field, "[") // xdp.flow_actions[1] was set as xdp.flow_actions
	for i := len(sets) - 1; i >= 0; i-- {
		if k, _, ok := strings.Cut(sets[i], "="); ok && strings.TrimSpace(k) == field {
			return fmt.Sprintf(" (from --set %s)", sets[i])
		}
	}
	return ""
}

func decode(file string, src []byte) (*Spec, toml.MetaData, error) {
	// Decode generically first: syntax errors come out as ParseErrors, and
	// checkDoc gives type mismatches and unknown keys a line and a field
	// (BurntSushi/toml reports type mismatches as plain fmt errors).
	doc := map[string]any{}
	md, err := toml.NewDecoder(bytes.NewReader(src)).Decode(&doc)
	if err != nil {
		return nil, md, tomlError(file, err)
	}
	if err := checkDoc(file, src, doc, md.Keys()); err != nil {
		return nil, md, err
	}
	s := defaults()
	md, err = toml.NewDecoder(bytes.NewReader(src)).Decode(s)
	if err != nil {
		return nil, md, tomlError(file, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		k := u[0].String()
		sec, key := splitField(k)
		return nil, md, &Error{File: file, Line: findLine(src, sec, key), Field: k, Msg: "unknown key" + suggest(k)}
	}
	return s, md, nil
}

func tomlError(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Position.Line, Field: pe.LastKey, Msg: firstLine(pe.Message)}
	}
	return &Error{File: file, Msg: err.Error()}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// splitField splits "nic.ring_size" into ("nic", "ring_size"); top-level keys have section "".
func splitField(f string) (string, string) {
	if i := strings.LastIndex(f, "."); i >= 0 {
		return f[:i], f[i+1:]
	}
	return "", f
}

// findLine returns the 1-based line of key in section of a TOML source
// (0 if not found): a line "key = ..." after "[section]", or
// "section.key = ..." anywhere.
func findLine(src []byte, section, key string) int {
	cur := ""
	for i, raw := range strings.Split(string(src), "\n") {
		line := strings.TrimSpace(raw)
		if h, ok := tableHeader(line); ok {
			cur = h
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if (cur == section && k == key) || (section != "" && cur == "" && k == section+"."+key) {
			return i + 1
		}
	}
	return 0
}

// applySets merges "dotted.key=value" overrides into the TOML document.
func applySets(file string, src []byte, sets []string) ([]byte, error) {
	doc := map[string]any{}
	if _, err := toml.NewDecoder(bytes.NewReader(src)).Decode(&doc); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	for _, set := range sets {
		k, v, ok := strings.Cut(set, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %q: expected key=value", set)}
		}
		val, err := parseValue(strings.TrimSpace(v))
		if err != nil {
			return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %s: %v", set, err)}
		}
		if f, ok := tableField(k); ok {
			return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %s: %s is a table, expected one of its fields such as %s", set, k, f)}
		}
		if !knownField(k) {
			return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %s: unknown key%s", set, suggest(k))}
		}
		if t, ok := fieldType(strings.Split(k, ".")); ok {
			if msg := checkValue(t, val); msg != "" {
				return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %s: %s", set, msg)}
			}
		}
		if err := setPath(doc, strings.Split(k, "."), val); err != nil {
			return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %s: %v", set, err)}
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	return buf.Bytes(), nil
}

// parseValue reads a TOML value (number, bool, array, quoted string); a bare
// word that is not valid TOML is taken as a string.
func parseValue(v string) (any, error) {
	var m map[string]any
	if _, err := toml.Decode("v = "+v, &m); err == nil {
		if len(m) != 1 { // "1\nnic.ring_size = 64": more than one value
			return nil, fmt.Errorf("cannot parse value %q: more than one TOML value", v)
		}
		return m["v"], nil
	}
	if strings.ContainsAny(v, "\"'[]{}\n") {
		return nil, fmt.Errorf("cannot parse value %q", v)
	}
	return v, nil
}

func setPath(doc map[string]any, path []string, val any) error {
	for i, p := range path[:len(path)-1] {
		next, ok := doc[p]
		if !ok {
			m := map[string]any{}
			doc[p] = m
			doc = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not a table", strings.Join(path[:i+1], "."))
		}
		doc = m
	}
	doc[path[len(path)-1]] = val
	return nil
}

func applyDefaults(s *Spec, md toml.MetaData) error {
	p, err := hw.Load(s.HW, s.Costs)
	if err != nil {
		return err
	}
	if !md.IsDefined("nic", "ring_size") {
		s.NIC.RingSize = int(p.NIC.RingSize.V)
	}
	if !md.IsDefined("nic", "itr_usecs") {
		s.NIC.ITRUsecs = int(p.NIC.ITRUsecs.V)
	}
	if !md.IsDefined("nic", "adaptive_itr") {
		s.NIC.AdaptiveITR = p.NIC.AdaptiveITR
	}
	if !md.IsDefined("nic", "max_pps") {
		s.NIC.MaxPPS = p.NIC.MaxPPS.V
	}
	s.rcvbufSet = md.IsDefined("stack", "rcvbuf")
	if !s.rcvbufSet {
		s.Stack.Rcvbuf = RmemDefault // sock_init_data: a socket without SO_RCVBUF
		if s.Traffic.TCP() {
			s.Stack.Rcvbuf = TCPRmemDefault // tcp_init_sock, then autotuned
		}
	}
	s.ringMax = int(p.NIC.RingMax.V)
	s.profGHz = p.GHz
	// Out-of-range cpus and queues are reported by validate; do not divide
	// by zero or build a huge list for them here.
	if len(s.NIC.IRQAffinity) == 0 && s.CPUs > 0 && s.NIC.Queues <= maxQueues {
		for i := 0; i < s.NIC.Queues; i++ {
			s.NIC.IRQAffinity = append(s.NIC.IRQAffinity, i%s.CPUs)
		}
	}
	return nil
}
