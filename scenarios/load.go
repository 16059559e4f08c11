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
		return nil, &Error{File: file, Field: "hw", Line: findLine(src, "", "hw"), Msg: err.Error()}
	}
	if err := s.validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			sec, key := splitField(fe.field)
			return nil, &Error{File: file, Line: findLine(src, sec, key), Field: fe.field, Msg: fe.msg + setNote(fe.field, sets)}
		}
		return nil, &Error{File: file, Msg: err.Error()}
	}
	return s, nil
}

func setNote(field string, sets []string) string {
	for i := len(sets) - 1; i >= 0; i-- {
		if k, _, ok := strings.Cut(sets[i], "="); ok && strings.TrimSpace(k) == field {
			return fmt.Sprintf(" (from --set %s)", sets[i])
		}
	}
	return ""
}

func decode(file string, src []byte) (*Spec, toml.MetaData, error) {
	s := defaults()
	md, err := toml.NewDecoder(bytes.NewReader(src)).Decode(s)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, md, &Error{File: file, Line: pe.Position.Line, Field: pe.LastKey, Msg: firstLine(pe.Message)}
		}
		return nil, md, &Error{File: file, Msg: err.Error()}
	}
	if u := md.Undecoded(); len(u) > 0 {
		k := u[0].String()
		sec, key := splitField(k)
		return nil, md, &Error{File: file, Line: findLine(src, sec, key), Field: k, Msg: "unknown key" + suggest(k)}
	}
	return s, md, nil
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
		if strings.HasPrefix(line, "[") {
			cur = strings.Trim(line, "[] \t")
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
		if !knownField(k) {
			return nil, &Error{File: file, Field: k, Msg: fmt.Sprintf("--set %s: unknown key%s", set, suggest(k))}
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
	if len(s.NIC.IRQAffinity) == 0 {
		for i := 0; i < s.NIC.Queues; i++ {
			s.NIC.IRQAffinity = append(s.NIC.IRQAffinity, i%s.CPUs)
		}
	}
	return nil
}
