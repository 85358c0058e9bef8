package flow

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/load"
)

// Bounds of a flow file, checked before anything is built from it.
const (
	MaxFileSize = 1 << 20
	MaxSteps    = 1000
	MaxThink    = time.Hour
)

// Methods are the step keys, as Artillery names them.
var Methods = []string{"get", "post", "put", "patch", "delete", "head", "options"}

// Load reads and checks a flow file. dataFile, if not "", is the data
// file (it replaces the flow's own data:); relative paths in the flow
// (data, body_file) are the flow file's directory's.
func Load(file, dataFile string) (*Flow, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFlow, err)
	}
	return Parse(file, b, dataFile, os.ReadFile)
}

// Parse checks a flow file's text. The first problem found is the error,
// as file:line: message. readFile reads body_file and is given paths
// already joined to the flow file's directory.
func Parse(file string, text []byte, dataFile string, readFile func(string) ([]byte, error)) (*Flow, error) {
	p := &parser{file: file, dir: filepath.Dir(file), readFile: readFile}
	f, err := p.parse(text, dataFile)
	if err != nil {
		return nil, err
	}
	return f, nil
}

type parser struct {
	file     string
	dir      string
	readFile func(string) ([]byte, error)
	flow     *Flow
	known    []string // variables set so far: built-ins, data columns, earlier captures
}

// posError stops the parse at its first problem.
type posError struct{ msg string }

func (p *parser) fail(n *yaml.Node, format string, a ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	panic(posError{fmt.Sprintf("%s:%d: %s", p.file, line, fmt.Sprintf(format, a...))})
}

func (p *parser) parse(text []byte, dataFile string) (f *Flow, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(posError)
			if !ok {
				panic(r)
			}
			f, err = nil, fmt.Errorf("%w: %s", ErrFlow, pe.msg)
		}
	}()
	if len(text) > MaxFileSize {
		p.fail(nil, "%d bytes, more than the limit of %d", len(text), MaxFileSize)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 1
		if _, after, ok := strings.Cut(msg, "line "); ok {
			if n, err := strconv.Atoi(strings.TrimRight(strings.SplitN(after, ":", 2)[0], " ")); err == nil {
				line = n
				msg = strings.TrimSpace(strings.SplitN(after, ":", 2)[1])
			}
		}
		return nil, fmt.Errorf("%w: %s:%d: not YAML: %s", ErrFlow, p.file, line, msg)
	}
	if len(root.Content) == 0 {
		p.fail(nil, "the file is empty: want a flow: list of steps (docs/flows.md)")
	}
	doc := root.Content[0]
	p.flow = &Flow{File: p.file}
	keys := p.mapping(doc, "the flow file", "name", "headers", "data", "flow")
	if n := keys["name"]; n != nil {
		p.flow.Name = p.str(n, "name")
	}
	data := dataFile
	if n := keys["data"]; n != nil && data == "" {
		data = p.str(n, "data")
		if !filepath.IsAbs(data) {
			data = filepath.Join(p.dir, data)
		}
	}
	p.known = []string{VarN, VarVU}
	if data != "" {
		d, err := ReadData(data)
		if err != nil {
			if n := keys["data"]; n != nil && dataFile == "" {
				p.fail(n, "data: %s", strings.TrimPrefix(err.Error(), ErrFlow.Error()+": "))
			}
			return nil, err
		}
		p.flow.Data = d
		p.known = append(p.known, d.Columns...)
	}
	var common []header
	if n := keys["headers"]; n != nil {
		common = p.headers(n, "headers")
	}
	steps := keys["flow"]
	if steps == nil {
		p.fail(doc, "no flow: want a flow: list of steps such as - get: {url: /users}")
	}
	if steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		p.fail(steps, "flow: want a list of steps (- get: ..., - think: 1s), got %s", got(steps))
	}
	if len(steps.Content) > MaxSteps {
		p.fail(steps, "flow: %d steps, more than the limit of %d", len(steps.Content), MaxSteps)
	}
	for i, sn := range steps.Content {
		p.step(sn, i+1, common)
	}
	p.names()
	return p.flow, nil
}

// step reads the flow's i-th entry: a request or a think.
func (p *parser) step(n *yaml.Node, i int, common []header) {
	what := fmt.Sprintf("step %d", i)
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		p.fail(n, "%s: want one of %s or think, as in - get: {url: /users}, got %s", what, strings.Join(Methods, ", "), got(n))
	}
	k, v := n.Content[0], n.Content[1]
	if k.Value == "think" {
		d, err := load.ParseDuration(scalar(v))
		if err != nil || v.Kind != yaml.ScalarNode || d > MaxThink {
			p.fail(v, "%s: think: want a pause such as 500ms, 2s or 1 (seconds) up to %v, got %s", what, MaxThink, got(v))
		}
		if len(p.flow.Steps) == 0 {
			p.fail(k, "%s: think before the first request: put the pause at the end of the flow (it then comes before every iteration but the first)", what)
		}
		p.flow.Steps[len(p.flow.Steps)-1].Think += d
		return
	}
	if !slices.Contains(Methods, k.Value) {
		p.fail(k, "%s: unknown step %q%s", what, k.Value, didYouMean(strings.ToLower(k.Value), append(slices.Clone(Methods), "think")))
	}
	st := Step{Line: k.Line, Method: strings.ToUpper(k.Value)}
	keys := p.mapping(v, what+" ("+k.Value+")", "name", "url", "headers", "body", "body_file", "capture", "check")
	if keys["url"] == nil {
		p.fail(v, "%s: no url: want the path below the command's URL, such as /users/{{.id}}", what)
	}
	if n := keys["name"]; n != nil {
		st.Name = p.str(n, what+": name")
		if st.Name == "" {
			p.fail(n, "%s: name: want a name", what)
		}
	}
	u := p.str(keys["url"], what+": url")
	if strings.Contains(u, "://") || !(strings.HasPrefix(u, "/") || strings.HasPrefix(u, "{{")) {
		p.fail(keys["url"], "%s: url %q: want a path such as /users/{{.id}}: the scheme, host and port are the command's URL", what, u)
	}
	st.URL = p.tmpl(keys["url"], what+": url", u)
	st.Headers = slices.Clone(common)
	if n := keys["headers"]; n != nil {
		for _, h := range p.headers(n, what+": headers") {
			st.Headers = slices.DeleteFunc(st.Headers, func(c header) bool { return strings.EqualFold(c.name, h.name) })
			st.Headers = append(st.Headers, h)
		}
	}
	switch b, bf := keys["body"], keys["body_file"]; {
	case b != nil && bf != nil:
		p.fail(bf, "%s: body and body_file: give one", what)
	case b != nil:
		st.Body = p.tmpl(b, what+": body", p.str(b, what+": body"))
	case bf != nil:
		name := p.str(bf, what+": body_file")
		if !filepath.IsAbs(name) {
			name = filepath.Join(p.dir, name)
		}
		data, err := p.readFile(name)
		if err != nil {
			p.fail(bf, "%s: body_file: %v", what, err)
		}
		st.Body = p.tmpl(bf, what+": body_file "+filepath.Base(name), string(data))
	}
	// A response's status is checked first, then the captures are taken,
	// then the other checks, which may use them.
	if n := keys["capture"]; n != nil {
		st.Capture = p.captures(n, what, &st)
	}
	for _, c := range st.Capture {
		if !slices.Contains(p.known, c.As) {
			p.known = append(p.known, c.As)
		}
	}
	if n := keys["check"]; n != nil {
		st.Check = p.checks(n, what, &st)
	}
	if !slices.ContainsFunc(st.Check, func(c Check) bool { return c.Status != nil }) {
		st.Check = append([]Check{{Line: st.Line, text: "status 2xx"}}, st.Check...) // every response is checked
	}
	for _, c := range st.Capture {
		st.readsBody = st.readsBody || c.JSON != nil
	}
	for _, c := range st.Check {
		st.readsBody = st.readsBody || c.JSON != nil
	}
	p.flow.Steps = append(p.flow.Steps, st)
}

// checks reads a step's check: list. Its templates see the variables of
// the steps before and this step's captures.
func (p *parser) checks(n *yaml.Node, what string, st *Step) []Check {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, "%s: check: want a list such as - status: 201, got %s", what, got(n))
	}
	var out []Check
	for i, cn := range n.Content {
		cw := fmt.Sprintf("%s: check %d", what, i+1)
		keys := p.mapping(cn, cw, "status", "json", "header", "equals", "contains", "exists")
		c := Check{Line: cn.Line, hi: -1}
		switch {
		case keys["status"] != nil:
			if keys["json"] != nil || keys["header"] != nil || keys["equals"] != nil || keys["contains"] != nil || keys["exists"] != nil {
				p.fail(cn, "%s: status is a check of its own: give json or header checks as other list items", cw)
			}
			c.Status = p.statuses(keys["status"], cw)
			parts := make([]string, len(c.Status))
			for i, s := range c.Status {
				parts[i] = strconv.Itoa(s)
			}
			c.text = "status " + strings.Join(parts, " or ")
		case keys["json"] != nil && keys["header"] != nil:
			p.fail(cn, "%s: json and header: one check reads one value", cw)
		case keys["json"] != nil:
			src := p.str(keys["json"], cw+": json")
			path, err := ParsePath(src)
			if err != nil {
				p.fail(keys["json"], "%s: %v", cw, err)
			}
			c.JSON, c.text = path, "json "+src
		case keys["header"] != nil:
			c.Header = strings.ToLower(p.str(keys["header"], cw+": header"))
			if c.Header == "" {
				p.fail(keys["header"], "%s: header: want a header's name", cw)
			}
			c.text = "header " + c.Header
		default:
			p.fail(cn, "%s: want status, json or header, as in - status: 201 or - json: $.id", cw)
		}
		if c.Status == nil {
			n := 0
			if v := keys["equals"]; v != nil {
				c.Equals, n = p.tmpl(v, cw+": equals", p.str(v, cw+": equals")), n+1
				c.text += " equals " + strconv.Quote(v.Value)
			}
			if v := keys["contains"]; v != nil {
				c.Contains, n = p.tmpl(v, cw+": contains", p.str(v, cw+": contains")), n+1
				c.text += " contains " + strconv.Quote(v.Value)
			}
			if v := keys["exists"]; v != nil {
				var b bool
				if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
					p.fail(v, "%s: exists: want true or false, got %s", cw, got(v))
				}
				c.Exists, n = &b, n+1
				if !b {
					c.text += " absent"
				}
			}
			if n > 1 {
				p.fail(cn, "%s: give one of equals, contains and exists", cw)
			}
			if n == 0 {
				t := true
				c.Exists = &t
			}
			if c.Exists != nil && *c.Exists {
				c.text += " exists"
			}
		}
		if c.Header != "" {
			c.hi = st.keepHeader(c.Header)
		}
		out = append(out, c)
	}
	return out
}

func (p *parser) statuses(n *yaml.Node, what string) []int {
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	}
	if len(items) == 0 {
		p.fail(n, "%s: status: want a status such as 201, or a list [200, 204], got %s", what, got(n))
	}
	var out []int
	for _, it := range items {
		s, err := strconv.Atoi(it.Value)
		if it.Kind != yaml.ScalarNode || it.Tag != "!!int" || err != nil || s < 100 || s > 999 {
			p.fail(it, "%s: status: want a status 100..999, got %s", what, got(it))
		}
		out = append(out, s)
	}
	return out
}

// captures reads a step's capture: list.
func (p *parser) captures(n *yaml.Node, what string, st *Step) []Capture {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, "%s: capture: want a list such as - json: $.id\\n  as: id, got %s", what, got(n))
	}
	var out []Capture
	for i, cn := range n.Content {
		cw := fmt.Sprintf("%s: capture %d", what, i+1)
		keys := p.mapping(cn, cw, "json", "header", "as")
		c := Capture{Line: cn.Line, hi: -1}
		if keys["as"] == nil {
			p.fail(cn, "%s: no as: want the variable's name, as in as: id", cw)
		}
		c.As = p.str(keys["as"], cw+": as")
		switch {
		case !isIdent(c.As):
			p.fail(keys["as"], "%s: as %q: a variable's name is letters, digits and _ (not first a digit)", cw, c.As)
		case c.As == VarN || c.As == VarVU:
			p.fail(keys["as"], "%s: as %q: the name of a built-in variable", cw, c.As)
		case p.flow.Data != nil && slices.Contains(p.flow.Data.Columns, c.As):
			p.fail(keys["as"], "%s: as %q: a column of the data file %s", cw, c.As, p.flow.Data.File)
		}
		switch {
		case keys["json"] != nil && keys["header"] != nil:
			p.fail(cn, "%s: json and header: one capture reads one value", cw)
		case keys["json"] != nil:
			path, err := ParsePath(p.str(keys["json"], cw+": json"))
			if err != nil {
				p.fail(keys["json"], "%s: %v", cw, err)
			}
			c.JSON = path
		case keys["header"] != nil:
			c.Header = strings.ToLower(p.str(keys["header"], cw+": header"))
			if c.Header == "" {
				p.fail(keys["header"], "%s: header: want a header's name", cw)
			}
			c.hi = st.keepHeader(c.Header)
		default:
			p.fail(cn, "%s: want json: $.path or header: Name", cw)
		}
		out = append(out, c)
	}
	return out
}

// keepHeader is the index of name in the headers the step's response
// keeps.
func (st *Step) keepHeader(name string) int {
	if i := slices.Index(st.keep, name); i >= 0 {
		return i
	}
	st.keep = append(st.keep, name)
	return len(st.keep) - 1
}

// headers reads a mapping of header names to value templates.
func (p *parser) headers(n *yaml.Node, what string) []header {
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s: want a mapping such as Content-Type: application/json, got %s", what, got(n))
	}
	var out []header
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if k.Kind != yaml.ScalarNode || name == "" || strings.ContainsAny(name, ": \t\r\n") {
			p.fail(k, "%s: want a header name, got %s", what, got(k))
		}
		switch strings.ToLower(name) {
		case "content-length", "transfer-encoding", "connection":
			p.fail(k, "%s: %s is the client's to set (from the body, and keep-alive)", what, name)
		}
		for _, h := range out {
			if strings.EqualFold(h.name, name) {
				p.fail(k, "%s: %q given twice", what, name)
			}
		}
		val := p.str(v, what+": "+name)
		if strings.ContainsAny(val, "\r\n") {
			p.fail(v, "%s: %s: a header value is one line", what, name)
		}
		out = append(out, header{name: name, value: p.tmpl(v, what+": "+name, val)})
	}
	return out
}

// tmpl compiles a template against the variables known here.
func (p *parser) tmpl(n *yaml.Node, what, src string) *tmpl {
	t, err := compile(what, src, func(s string) bool { return slices.Contains(p.known, s) }, func() []string { return p.known })
	if err != nil {
		p.fail(n, "%v", err)
	}
	if !t.constant() {
		p.flow.usesVars = true
	}
	return t
}

// mapping checks that n is a mapping of known keys, none twice, and
// returns its values by key.
func (p *parser) mapping(n *yaml.Node, what string, known ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s: want a mapping (name: value lines), got %s", what, got(n))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || !slices.Contains(known, k.Value) {
			p.fail(k, "unknown key %q in %s%s", k.Value, what, hint(k.Value, known))
		}
		if out[k.Value] != nil {
			p.fail(k, "%s: %q given twice", what, k.Value)
		}
		if v.Kind == yaml.AliasNode {
			p.fail(v, "%s: YAML aliases are not supported", what)
		}
		out[k.Value] = v
	}
	return out
}

// hint is what to say after an unknown key: the close known one, or what
// Artillery's name is here.
func hint(key string, known []string) string {
	switch key {
	case "expect":
		if slices.Contains(known, "check") {
			return `; checks are check: (- status: 201, - json: $.id, - header: Location)`
		}
	case "json":
		if slices.Contains(known, "body") {
			return `; a JSON body is body: '{"name": "{{.name}}"}' with a Content-Type header`
		}
	}
	return didYouMean(key, known)
}

func didYouMean(key string, known []string) string {
	if s := suggest(key, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.fail(n, "%s: want a string, got %s", what, got(n))
	}
	return n.Value
}

func scalar(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// got describes a node for "want X, got Y".
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	}
	return "something else"
}

// names gives every step its operation's name: its own, else METHOD url,
// numbered when two steps would share one.
func (p *parser) names() {
	seen := map[string]int{}
	for i := range p.flow.Steps {
		st := &p.flow.Steps[i]
		if st.Name != "" {
			if j, dup := seen[st.Name]; dup {
				p.fail(&yaml.Node{Line: st.Line}, "step name %q is also step %d's: names tell the steps apart in results", st.Name, j+1)
			}
			seen[st.Name] = i
		}
	}
	for i := range p.flow.Steps {
		st := &p.flow.Steps[i]
		if st.Name == "" {
			st.Name = st.Method + " " + st.URL.src
			if _, dup := seen[st.Name]; dup {
				st.Name = fmt.Sprintf("%s #%d", st.Name, i+1)
			}
			seen[st.Name] = i
		}
	}
}
