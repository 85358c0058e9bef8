package flow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Options are where and how a flow connects (conn.Options: URL is the
// base URL every step's path is below) and, for the reference API, the
// wire format its JSON steps run in ("" or json: as written).
type Options struct {
	conn.Options
	Format string
}

// Scenario runs a flow against a base URL: a load.Scenario whose
// operations are the flow's steps. Close it after the run.
type Scenario struct {
	f      *Flow
	fmt    *format // nil: bodies and headers as written
	o      conn.Options
	c      *conn.Conns
	base   string // scheme://host, for net/http's URLs
	prefix string // the base URL's path, without a trailing /
	host   string // the Host header (HTTP/1.1)
	iter   atomic.Uint64
	// konst are each step's constant header lines ("K: V"), rendered
	// once; a templated header is rendered per request.
	konst [][]string
}

// New connects f to o.URL, the base URL every step's path is below, by
// package conn's rule (HTTP/1.1, h2c, h2, h3; auto follows Alt-Svc).
func New(f *Flow, opts Options) (*Scenario, error) {
	if f == nil || len(f.Steps) == 0 {
		return nil, fmt.Errorf("%w: no steps", ErrFlow)
	}
	var wf *format
	if opts.Format != "" && opts.Format != "json" {
		var err error
		if wf, err = newFormat(opts.Format); err != nil {
			return nil, err
		}
	}
	o := opts.Options
	method := "HEAD" // --transport auto's first request changes nothing on the server
	if f.Steps[0].Method == "GET" {
		method = "GET"
	}
	c, err := conn.New(o, conn.Speaks{Transports: []string{conn.HTTP1, conn.H2C, conn.H2, conn.H3}, Method: method})
	if err != nil {
		return nil, err
	}
	u := c.Target
	s := &Scenario{f: f, fmt: wf, o: c.Options(), c: c, base: u.Scheme + "://" + u.Host, host: u.Host,
		prefix: strings.TrimSuffix(u.EscapedPath(), "/")}
	if u.RawQuery != "" {
		c.Close()
		return nil, fmt.Errorf("%w: URL %q: a flow's base URL has no query: each step's url has its own", conn.ErrOptions, o.URL)
	}
	for _, st := range f.Steps {
		var k []string
		for _, h := range st.Headers {
			if h.value.constant() {
				k = append(k, h.name+": "+string(h.value.konst))
			}
		}
		s.konst = append(s.konst, k)
	}
	return s, nil
}

// Flow is the flow the scenario runs.
func (s *Scenario) Flow() *Flow { return s.f }

// Transport is the transport in effect and, for auto, why.
func (s *Scenario) Transport() (string, string) { return s.o.Transport, s.c.Auto }

func (s *Scenario) Name() string { return "flow" }

// Ops are the steps' names.
func (s *Scenario) Ops() []string {
	ops := make([]string, len(s.f.Steps))
	for i, st := range s.f.Steps {
		ops[i] = st.Name
	}
	return ops
}

func (s *Scenario) Driver() load.Driver { return load.PerVU }

// NewVU implements load.Scenario.
func (s *Scenario) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	v := &vu{s: s, id: id, vars: map[string]string{}}
	switch {
	case s.c.H2 != nil:
		v.std = s.c.H2.Client(id)
	case s.c.H3 != nil:
		if id == 0 { // the handshakes before the run, apart from latency
			s.c.H3.Warm(ctx)
		}
		v.std = s.c.H3.Client(id)
	case s.o.Client == conn.ClientStd:
		v.std = h1.NewStdClient(wire, s.o.Timeout, s.o.NoKeepAlive, s.c.H1TLS())
	default:
		v.h1 = h1.NewConn(s.c.Addr, wire, s.o.Timeout, !s.o.NoKeepAlive)
		v.h1.TLS = s.c.H1TLS()
	}
	return v, nil
}

// Finish implements load.Scenario: the shared connections' bytes.
func (s *Scenario) Finish(res *results.Load) {
	res.Conn = load.ConnResult(s.o.URL, s.o.Transport, s.c.Auto, nil, nil)
	conn.FinishPools(res, s.c.H2, s.c.H3)
}

// Close releases the shared connections.
func (s *Scenario) Close() error {
	s.c.Close()
	return nil
}

// vu runs iterations of the flow, one step per Do.
type vu struct {
	s    *Scenario
	id   int
	step int // the next step; 0 starts an iteration
	vars map[string]string
	h1   *h1.Conn
	std  *http.Client

	path, body, req, buf, val []byte
	hdr                       []string
	keep                      keep
}

// keep holds a std response's kept headers as h1.Response does.
type keep struct {
	kept [][]byte
	seen []bool
}

func (v *vu) Close() error {
	if v.h1 != nil {
		v.h1.Close()
	}
	return nil
}

// begin starts an iteration: its number, the VU's, the data row, and no
// captures yet.
func (v *vu) begin() {
	clear(v.vars)
	n := v.s.iter.Add(1) - 1
	v.vars[VarN] = strconv.FormatUint(n, 10)
	v.vars[VarVU] = strconv.Itoa(v.id)
	if d := v.s.f.Data; d != nil {
		row := d.Rows[n%uint64(len(d.Rows))]
		for i, c := range d.Columns {
			v.vars[c] = row[i]
		}
	}
}

// Do sends the iteration's next step and checks its response. A failed
// step ends the iteration; its reason names the step.
func (v *vu) Do(ctx context.Context, o *load.Outcome) {
	if v.step == 0 && v.s.f.usesVars {
		v.begin()
	}
	i := v.step
	st := &v.s.f.Steps[i]
	o.Op, o.Iteration = i, true
	if reason := v.do(ctx, i, st, o); reason != "" {
		o.Fail = results.StepFailure(i+1, st.Name, reason)
		v.step = 0
		return
	}
	o.Wait = st.Think
	if v.step++; v.step == len(v.s.f.Steps) {
		v.step = 0
		return
	}
	o.More = true
}

// do is one step: "" or why it failed.
func (v *vu) do(ctx context.Context, i int, st *Step, o *load.Outcome) string {
	var err error
	v.path = append(v.path[:0], v.s.prefix...)
	if v.path, err = st.URL.render(v.path, v.vars); err != nil {
		return "url: " + templateErr(err)
	}
	if p := v.path[len(v.s.prefix):]; len(p) == 0 || p[0] != '/' || bytes.ContainsAny(p, " \r\n") {
		return "url: not a path below the base URL" // a captured Location that was a full URL, say
	}
	v.hdr = append(v.hdr[:0], v.s.konst[i]...)
	for _, h := range st.Headers {
		if h.value.constant() {
			continue
		}
		if v.val, err = h.value.render(v.val[:0], v.vars); err != nil {
			return "header " + h.name + ": " + templateErr(err)
		}
		if bytes.ContainsAny(v.val, "\r\n") {
			return "header " + h.name + ": a value with a line break"
		}
		v.hdr = append(v.hdr, h.name+": "+string(v.val))
	}
	var body []byte
	if st.Body != nil {
		if v.body, err = st.Body.render(v.body[:0], v.vars); err != nil {
			return "body: " + templateErr(err)
		}
		body = v.body
	}
	var route string // the path below the base URL, for --format's routes
	if f := v.s.fmt; f != nil {
		route, _, _ = strings.Cut(string(v.path[len(v.s.prefix):]), "?")
		if body != nil {
			var reason string
			if body, reason = f.request(st.Method, route, body); reason != "" {
				return reason
			}
		}
		v.hdr = f.headers(v.hdr, body != nil)
	}
	o.BodyOut = len(body)
	status, in, n, kh, err := v.send(ctx, st, body)
	o.Status, o.BodyIn = status, n
	if err != nil {
		return clientio.FailReason(err)
	}
	if f := v.s.fmt; f != nil && st.readsBody {
		var reason string
		if in, reason = f.response(st.Method, route, status, in); reason != "" {
			return reason
		}
	}
	if v.std != nil && v.s.c.H2 != nil {
		o.BodyOut = 0 // HTTP/2's DATA frames count it (Finish)
	}
	if v.h1 != nil {
		o.Conn = v.h1.LocalPort
	}
	return v.check(st, status, in, kh)
}

// send makes the exchange: the status, the body (nil when nothing reads
// it), the body's length as received, the kept headers.
func (v *vu) send(ctx context.Context, st *Step, body []byte) (int, []byte, int, keep, error) {
	if v.h1 != nil {
		r := &v.h1.Resp
		r.Keep = st.keep
		if len(r.Kept) < len(st.keep) {
			r.Kept, r.Seen = make([][]byte, len(st.keep)), make([]bool, len(st.keep))
		}
		r.Kept, r.Seen = r.Kept[:len(st.keep)], r.Seen[:len(st.keep)]
		host, hdr := v.s.host, v.hdr
		for i, h := range hdr { // a step's own Host replaces the URL's
			if len(h) > 5 && h[4] == ':' && strings.EqualFold(h[:4], "host") {
				host = strings.TrimSpace(h[5:])
				hdr = append(hdr[:i:i], hdr[i+1:]...)
				break
			}
		}
		v.req = h1.AppendRequest(v.req[:0], st.Method, string(v.path), host, hdr, body, !v.s.o.NoKeepAlive)
		// The body is kept only when something reads it.
		resp, err := v.h1.RoundTrip(ctx, v.req, st.Method == http.MethodHead, !st.readsBody)
		if err != nil {
			return 0, nil, 0, keep{}, err
		}
		in := resp.Body
		if !st.readsBody {
			in = nil
		}
		return resp.Status, in, resp.BodyLen, keep{kept: resp.Kept, seen: resp.Seen}, nil
	}
	status, in, err := v.stdDo(ctx, st, body)
	return status, in, len(in), v.keep, err
}

// stdDo is the exchange over net/http's client (h2, h2c, h3, --client
// std), keeping the headers the step reads.
func (v *vu) stdDo(ctx context.Context, st *Step, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, st.Method, v.s.base+string(v.path), nil)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	for _, h := range v.hdr {
		k, val, _ := h1.CutHeader(h)
		if !h1.Replaced(k) {
			req.Header.Add(k, val)
		}
	}
	host, ua := h1.Defaults(req.Host, v.hdr)
	req.Host, req.Header["User-Agent"] = host, []string{ua}
	resp, err := clientio.Send(v.std, req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	v.keep.kept, v.keep.seen = v.keep.kept[:0], v.keep.seen[:0]
	for _, k := range st.keep {
		vals, ok := resp.Header[http.CanonicalHeaderKey(k)]
		val := ""
		if ok && len(vals) > 0 {
			val = vals[len(vals)-1]
		}
		v.keep.kept = append(v.keep.kept, []byte(val))
		v.keep.seen = append(v.keep.seen, ok)
	}
	if resp.ContentLength > clientio.MaxBody {
		return resp.StatusCode, nil, fmt.Errorf("%w: body of %d bytes", clientio.ErrTooLarge, resp.ContentLength)
	}
	v.buf, err = h1.ReadLimited(v.buf, resp.Body, clientio.MaxBody)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return resp.StatusCode, nil, clientio.ErrClosedDuring
		}
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, v.buf, nil
}

// check applies the step's status checks, its captures, then its other
// checks: "" or the first failure's reason.
func (v *vu) check(st *Step, status int, body []byte, kh keep) string {
	for i := range st.Check {
		c := &st.Check[i]
		if !c.isStatus() {
			continue
		}
		if !statusOK(c, status) {
			return "status " + strconv.Itoa(status) + ", want " + strings.TrimPrefix(c.text, "status ")
		}
	}
	for i := range st.Capture {
		c := &st.Capture[i]
		var val string
		if c.JSON != nil {
			raw, ok := c.JSON.Find(body)
			if !ok {
				return "capture " + c.As + ": " + c.JSON.String() + " not found in the response body"
			}
			val = Text(raw)
		} else {
			if !kh.seen[c.hi] {
				return "capture " + c.As + ": no " + c.Header + " header in the response"
			}
			val = string(kh.kept[c.hi])
		}
		v.vars[c.As] = val
	}
	for i := range st.Check {
		c := &st.Check[i]
		if c.isStatus() {
			continue
		}
		var got []byte
		var ok bool
		if c.JSON != nil {
			got, ok = c.JSON.Find(body)
			if ok {
				got = []byte(Text(got))
			}
		} else {
			got, ok = kh.kept[c.hi], kh.seen[c.hi]
		}
		if reason := v.test(c, got, ok); reason != "" {
			return "check " + c.text + ": " + reason
		}
	}
	return ""
}

func statusOK(c *Check, status int) bool {
	if c.Status == nil {
		return status >= 200 && status < 300
	}
	for _, s := range c.Status {
		if s == status {
			return true
		}
	}
	return false
}

// test is one value check: "" or why it failed (no values in reasons:
// failures are counted by reason).
func (v *vu) test(c *Check, got []byte, found bool) string {
	switch {
	case c.Exists != nil && *c.Exists:
		if !found {
			return "not found"
		}
	case c.Exists != nil:
		if found {
			return "present"
		}
	case !found:
		return "not found"
	case c.Equals != nil:
		want, err := c.Equals.render(v.val[:0], v.vars)
		if err != nil {
			return templateErr(err)
		}
		v.val = want
		if !bytes.Equal(got, want) {
			return "differs"
		}
	case c.Contains != nil:
		want, err := c.Contains.render(v.val[:0], v.vars)
		if err != nil {
			return templateErr(err)
		}
		v.val = want
		if !bytes.Contains(got, want) {
			return "not contained"
		}
	}
	return ""
}

// templateErr is a template's run-time error without its position.
func templateErr(err error) string {
	m := err.Error()
	if i := strings.LastIndex(m, ": "); i >= 0 && strings.HasPrefix(m, "template: ") {
		return "template: " + m[i+2:]
	}
	return m
}
