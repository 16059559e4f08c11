package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

var (
	specType     = reflect.TypeOf(Spec{})
	durationType = reflect.TypeOf(Duration{})
)

// checkDoc checks a decoded TOML document against the Spec schema before it
// is decoded into a Spec, in document order, and returns the first problem:
// a key that names no field (matched exactly: BurntSushi/toml would also
// accept "RING_SIZE" for ring_size, and ignore it for defaults), or a value of
// the wrong TOML type. BurntSushi/toml reports type mismatches as unstructured
// strings; this gives them a file, line and field.
func checkDoc(file string, src []byte, doc map[string]any, keys []toml.Key) error {
	for _, k := range keys {
		field := k.String()
		t, ok := fieldType(k)
		if !ok {
			return &Error{File: file, Line: keyLine(src, k), Field: field, Msg: "unknown key" + suggest(field)}
		}
		v, ok := lookup(doc, k)
		if !ok {
			continue // under an array of tables: its parent is already the wrong type
		}
		if msg := checkValue(t, v); msg != "" {
			return &Error{File: file, Line: keyLine(src, k), Field: field, Msg: msg}
		}
	}
	return nil
}

// fieldType returns the Go type of the field at the dotted path k.
func fieldType(k []string) (reflect.Type, bool) {
	t := specType
	for _, p := range k {
		switch {
		case t.Kind() == reflect.Struct && t != durationType:
			f, ok := fieldByTag(t, p)
			if !ok {
				return nil, false
			}
			t = f.Type
		case t.Kind() == reflect.Map:
			t = t.Elem()
		default:
			return nil, false
		}
	}
	return t, true
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name == tag && name != "-" && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func lookup(doc map[string]any, k []string) (any, bool) {
	var cur any = doc
	for _, p := range k {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// checkValue returns "" if v (a value decoded by BurntSushi/toml into an
// any) fits a field of type t, and what is wrong otherwise. Table values are
// not descended into: their keys are checked one by one by checkDoc.
func checkValue(t reflect.Type, v any) string {
	if t == durationType {
		s, ok := v.(string)
		if !ok {
			return wrongType(v, `a duration string like "50ms"`)
		}
		if _, err := time.ParseDuration(s); err != nil {
			return fmt.Sprintf(`invalid duration %q, expected a duration like "50ms" or "250us"`, s)
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			return wrongType(v, "a table")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(int64)
		if !ok {
			return wrongType(v, "an integer")
		}
		if bits := t.Bits(); bits < 64 && (n < -1<<(bits-1) || n > 1<<(bits-1)-1) {
			return fmt.Sprintf("%d out of range for a %d-bit integer", n, bits)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(int64)
		if !ok {
			return wrongType(v, "a non-negative integer")
		}
		if n < 0 || (t.Bits() < 64 && uint64(n) >= 1<<t.Bits()) {
			return fmt.Sprintf("%d out of range, expected a non-negative %d-bit integer", n, t.Bits())
		}
	case reflect.Float32, reflect.Float64:
		switch n := v.(type) {
		case float64:
		case int64:
			// BurntSushi/toml refuses integers a float64 cannot hold exactly.
			if n < -(1<<53) || n > 1<<53 {
				return fmt.Sprintf("%d out of range, expected an integer of at most 2^53 in magnitude or a float", n)
			}
		default:
			return wrongType(v, "a number")
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return wrongType(v, "a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return wrongType(v, "a boolean (true or false)")
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return wrongType(v, "an array")
		}
		for i, e := range a {
			if msg := checkValue(t.Elem(), e); msg != "" {
				return fmt.Sprintf("element %d: %s", i, msg)
			}
		}
	case reflect.Interface:
	default:
		return fmt.Sprintf("field of Go type %s cannot be set from TOML", t)
	}
	return ""
}

func wrongType(v any, want string) string {
	return fmt.Sprintf("wrong type: TOML value is %s, expected %s", tomlKind(v), want)
}

// tomlKind names the TOML type of a value decoded into an any.
func tomlKind(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "a float (" + fmt.Sprint(v) + ")"
		}
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a datetime"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

// keyLine returns the line of key k in src, or of its closest enclosing
// table that can be found (inline tables, dotted keys inside a table), or 0.
func keyLine(src []byte, k []string) int {
	for n := len(k); n > 0; n-- {
		sec := strings.Join(k[:n-1], ".")
		if l := findLine(src, sec, k[n-1]); l > 0 {
			return l
		}
		if l := findHeader(src, strings.Join(k[:n], ".")); l > 0 {
			return l
		}
	}
	return 0
}

// findHeader returns the line of the table header "[name]" in src, or 0.
func findHeader(src []byte, name string) int {
	for i, raw := range strings.Split(string(src), "\n") {
		if h, ok := tableHeader(raw); ok && h == name {
			return i + 1
		}
	}
	return 0
}

// tableHeader returns the name in a "[name]" or "[[name]]" line (spaces
// around the name and a trailing comment allowed).
func tableHeader(raw string) (string, bool) {
	line := strings.TrimSpace(raw)
	if !strings.HasPrefix(line, "[") {
		return "", false
	}
	line, _, _ = strings.Cut(line, "#")
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "[]")), true
}
