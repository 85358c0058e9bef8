package study

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/internal/typo"
)

// The walker checks a YAML node tree against the schema structs before
// anything is decoded, so that every error names the field, its path and
// its line, in words rather than Go types: yaml.v3's own KnownFields error
// says "field comand not found in type study.serverSpec".

// maxErrors is how many problems one parse reports.
const maxErrors = 10

// posError is one problem at a line of the study file.
type posError struct {
	line int
	msg  string
}

type walker struct {
	errs []posError
}

func (w *walker) errorf(n *yaml.Node, format string, a ...any) {
	if len(w.errs) < maxErrors {
		w.errs = append(w.errs, posError{line: n.Line, msg: fmt.Sprintf(format, a...)})
	}
}

var durationType = reflect.TypeFor[time.Duration]()

// walk checks n against t. path names n for messages ("cells[1].server").
func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		w.errorf(n, "%s: YAML anchors and aliases are not supported (use the top-level server, load and check defaults)", where(path))
		return
	}
	if isNull(n) {
		return // an empty value is the zero value
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		w.scalar(n, path, "a duration such as 500ms or 2s", func(s string) bool {
			d, err := time.ParseDuration(s)
			return err == nil && d >= 0
		})
	case t == reflect.TypeFor[intList]():
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				w.walk(c, reflect.TypeFor[int](), fmt.Sprintf("%s[%d]", path, i))
			}
			return
		}
		w.walk(n, reflect.TypeFor[int](), path)
	case t == reflect.TypeFor[strList]():
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				w.walk(c, reflect.TypeFor[string](), fmt.Sprintf("%s[%d]", path, i))
			}
			return
		}
		w.walk(n, reflect.TypeFor[string](), path)
	case t.Kind() == reflect.Struct:
		w.mapping(n, t, path)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.errorf(n, "%s: want %s, got %s", where(path), describe(t), got(n))
			return
		}
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.errorf(n, "%s: want %s, got %s", where(path), describe(t), got(n))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value == "" {
				w.errorf(k, "%s: want a name as key, got %s", where(path), got(k))
				continue
			}
			if seen[k.Value] {
				w.errorf(k, "%s: %q given twice", where(path), k.Value)
			}
			seen[k.Value] = true
			w.walk(v, t.Elem(), path+"."+k.Value)
		}
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.errorf(n, "%s: want a string, got %s", where(path), got(n))
		}
	case t.Kind() == reflect.Bool:
		w.scalar(n, path, "true or false", func(s string) bool { _, err := strconv.ParseBool(s); return err == nil && n.Tag == "!!bool" })
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		w.scalar(n, path, "a whole number", func(s string) bool { return n.Tag == "!!int" && n.Decode(new(int64)) == nil })
	case t.Kind() == reflect.Float64:
		w.scalar(n, path, "a number", func(s string) bool {
			var f float64
			return (n.Tag == "!!int" || n.Tag == "!!float") && n.Decode(&f) == nil && f == f && f < 1e300 && f > -1e300
		})
	default:
		w.errorf(n, "%s: unsupported type %v", where(path), t) // a schema bug
	}
}

func (w *walker) scalar(n *yaml.Node, path, want string, ok func(string) bool) {
	if n.Kind != yaml.ScalarNode || !ok(n.Value) {
		w.errorf(n, "%s: want %s, got %s", where(path), want, got(n))
	}
}

// mapping checks a mapping against struct t: every key a known field
// (by its yaml tag), none twice.
func (w *walker) mapping(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.errorf(n, "%s: want a mapping (name: value lines), got %s", where(path), got(n))
		return
	}
	fields := map[string]reflect.StructField{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f
		names = append(names, name)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			w.errorf(k, "%s: want a field name, got %s", where(path), got(k))
			continue
		}
		f, ok := fields[k.Value]
		if !ok {
			w.errorf(k, "unknown field %q in %s%s", k.Value, where(path), suggest(k.Value, names))
			continue
		}
		if seen[k.Value] {
			w.errorf(k, "%s: field %q given twice", where(path), k.Value)
			continue
		}
		seen[k.Value] = true
		w.walk(v, f.Type, join(path, k.Value))
	}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func where(path string) string {
	if path == "" {
		return "the study"
	}
	return path
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// got describes a node for "want X, got Y".
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	}
	return "something else"
}

func describe(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return `a list of strings, such as ["./srv", "-addr", "127.0.0.1:{port}"]`
	case t.Kind() == reflect.Slice:
		return "a list"
	case t.Kind() == reflect.Map:
		return "a mapping of names to values"
	}
	return t.String()
}

// suggest proposes the closest known name to a misspelt one, or lists the
// known names when none is close.
func suggest(name string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := typo.Distance(strings.ToLower(name), k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(1, len(name)/3) {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return " (known: " + strings.Join(slices.Sorted(slices.Values(known)), ", ") + ")"
}
