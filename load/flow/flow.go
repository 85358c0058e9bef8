// Package flow runs multi-step HTTP flows: a YAML file of steps, each a
// request (method, URL template, headers, body) whose response is checked
// and from which values are captured into variables for the steps after
// it, with think time between steps and a data file feeding variables.
// The model is Artillery's flow with capture; templates are Go's
// ({{.id}}), JSON paths a small documented subset ($.items[0].id).
//
// A flow is a load.Scenario: each step is an operation (per-step
// histograms and failure counts), an iteration is one pass through the
// steps, and the engine paces iterations in open loop (Outcome.More), so
// latency counts from each iteration's scheduled start. Connections come
// from load/conn, as every client's do. docs/flows.md.
package flow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrFlow is a flow file or data file that cannot run; its messages name
// the file and line.
var ErrFlow = errors.New("flow")

// Flow is a parsed, checked flow file.
type Flow struct {
	File  string // as given, for messages
	Name  string
	Steps []Step // requests; think time is each one's Think
	// Data feeds variables, row N mod rows to iteration N; nil without.
	Data *Data
	// usesVars: some template reads a variable. Without, an iteration
	// sets none (a flow of constant requests costs what raw mode does).
	usesVars bool
}

// Step is one request of a flow.
type Step struct {
	Line    int    // of the step in the flow file
	Name    string // the operation's name in results
	Method  string
	URL     *tmpl // a path (and query) below the base URL
	Headers []header
	Body    *tmpl // nil: no body
	Capture []Capture
	Check   []Check
	// Think is the pause after this step's response, before the next
	// step (or the next iteration, after the last step).
	Think time.Duration
	// keep are the headers the captures and checks read (lower case);
	// readsBody is set when a capture or check reads the body.
	keep      []string
	readsBody bool
}

type header struct {
	name  string
	value *tmpl
}

// Capture sets variable As from the response: the value at a JSON path
// of the body, or a header's value. Finding nothing fails the iteration.
type Capture struct {
	Line   int
	As     string
	JSON   *Path  // or
	Header string // lower case
	hi     int    // index of Header in the step's keep
}

// Check is one test of a response: its status, or the value at a JSON
// path or of a header (equals a template's text, contains it, exists or
// not). A response failing one is a failed request, named by the step
// and the check.
type Check struct {
	Line     int
	Status   []int // any of them
	JSON     *Path
	Header   string // lower case
	Equals   *tmpl
	Contains *tmpl
	Exists   *bool
	hi       int
	text     string // the check as written, for failure reasons
}

// isStatus: a status check (the default one, 2xx, too).
func (c *Check) isStatus() bool { return c.JSON == nil && c.Header == "" }

// AddHeaders adds "Name: value" headers to every step, in place of a
// step's own of the same name (the command line's -H: a token for the
// whole run). Values are sent as given, not as templates.
func (f *Flow) AddHeaders(hs []string) error {
	for _, h := range hs {
		name, val, ok := strings.Cut(h, ":")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(val, "\r\n") {
			return fmt.Errorf("%w: header %q: want 'Name: value'", ErrFlow, h)
		}
		for i := range f.Steps {
			st := &f.Steps[i]
			st.Headers = slices.DeleteFunc(st.Headers, func(c header) bool { return strings.EqualFold(c.name, name) })
			st.Headers = append(st.Headers, header{name: name, value: &tmpl{src: val, konst: []byte(val)}})
		}
	}
	return nil
}
