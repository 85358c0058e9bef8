package flow

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/wirebench/wirebench/internal/typo"
)

// Built-in variables of every iteration's templates.
const (
	VarN  = "N"  // the iteration's number in the run, from 0: unique across VUs
	VarVU = "VU" // the VU's number, from 0
)

// tmpl is a compiled text/template, or the constant text of one without
// actions (rendered for free: most URLs and headers).
type tmpl struct {
	src   string
	t     *template.Template
	konst []byte // the text when t is nil
}

// compile parses src as a Go template ({{.var}}) and checks that every
// variable it names is one of known. what names it in messages ("url").
func compile(what, src string, known func(string) bool, names func() []string) (*tmpl, error) {
	if !strings.Contains(src, "{{") {
		return &tmpl{src: src, konst: []byte(src)}, nil
	}
	t, err := template.New(what).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: bad template: %s", what, strings.TrimPrefix(err.Error(), "template: "))
	}
	var bad []string
	walkFields(t.Tree.Root, func(name string) {
		if !known(name) && !slices.Contains(bad, name) {
			bad = append(bad, name)
		}
	})
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s: {{.%s}} is not a variable here: %s", what, bad[0], knownText(bad[0], names()))
	}
	if onlyText(t.Tree.Root) {
		var b bytes.Buffer
		_ = t.Execute(&b, nil)
		return &tmpl{src: src, konst: b.Bytes()}, nil
	}
	return &tmpl{src: src, t: t}, nil
}

// knownText lists the variables a template may use, or the closest one.
func knownText(name string, names []string) string {
	if len(names) == 0 {
		return "none is set at this step"
	}
	if s := suggest(name, names); s != "" {
		return "did you mean {{." + s + "}}?"
	}
	return "known here: " + strings.Join(names, ", ") + " (a capture's name is known from the step after it; a data file, --data-file or data:, names more)"
}

// walkFields calls f with the first name of every field ({{.id}},
// {{.id.x}}) at the template's top level: inside range and with, dot is
// something else, and is left to the run's missingkey=error.
func walkFields(n parse.Node, f func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkFields(c, f)
		}
	case *parse.ActionNode:
		walkFields(n.Pipe, f)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkFields(c, f)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkFields(a, f)
		}
	case *parse.FieldNode:
		f(n.Ident[0])
	case *parse.ChainNode:
		walkFields(n.Node, f)
	case *parse.IfNode:
		walkFields(n.Pipe, f)
		walkFields(n.List, f)
		walkFields(n.ElseList, f)
	case *parse.RangeNode:
		walkFields(n.Pipe, f)
	case *parse.WithNode:
		walkFields(n.Pipe, f)
	}
}

// onlyText: a template whose actions are all comments renders as text.
func onlyText(l *parse.ListNode) bool {
	for _, n := range l.Nodes {
		if n.Type() != parse.NodeText {
			return false
		}
	}
	return true // text/template keeps comments out of the tree
}

// render appends the template's text for vars to b.
func (t *tmpl) render(b []byte, vars map[string]string) ([]byte, error) {
	if t.t == nil {
		return append(b, t.konst...), nil
	}
	w := bytes.NewBuffer(b)
	if err := t.t.Execute(w, vars); err != nil {
		return b, err
	}
	return w.Bytes(), nil
}

// constant reports whether the template renders the same for any vars.
func (t *tmpl) constant() bool { return t.t == nil }

// suggest is the closest known name to a misspelt one ("" if none is).
func suggest(name string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := typo.Distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(1, len(name)/3) {
		return best
	}
	return ""
}
