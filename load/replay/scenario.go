package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Options configure a replay. The zero value of each field is its default.
type Options struct {
	File   string   // the recording
	Format string   // FormatAuto by default
	Fields FieldMap // JSON lines
	Speed  float64  // 1: recorded timing; 2: twice as fast
	Loop   bool
	// MaxGap bounds a recorded pause (ScheduleOptions.MaxGap).
	MaxGap time.Duration
	// Options are where and how to connect (package conn). URL is where
	// every request goes (scheme, host, port): a recording never sends
	// traffic to the hosts it names. Transport is conn.HTTP1 ("" too;
	// over TLS for https://), conn.H2C (http://), conn.H2 or conn.H3
	// (https://), with Connections shared by the VUs (0: 1); Insecure,
	// CAFile, CertFile and KeyFile are https://'s, as load's -k, --cacert,
	// --cert and --key.
	conn.Options
	// Host is the Host header sent; "" is URL's host, HostRecorded each
	// request's recorded one (its URL's host or Host header).
	Host string
	// DropHeaders are header names not sent (case-insensitive), beside
	// the hop-by-hop ones, Host, Content-Length and User-Agent.
	DropHeaders []string
	// AsFormat, one of AsFormats, re-encodes the reference API's recorded
	// JSON request bodies into that format and sets Content-Type and
	// Accept to its media type; "" sends bodies and headers as recorded.
	AsFormat string
	// DryRun schedules and prepares every request but sends none (each
	// "answers" its recorded status at once): the schedule's own cost.
	DryRun bool
	// Record, if set, gets every request as sent (send time, target,
	// Host, headers, body, status) as wirebench's request log, kept as
	// RecordKeep says (no secrets by default); Close flushes and closes it.
	Record     io.WriteCloser
	RecordKeep reqlog.Options
}

// HostRecorded in Options.Host sends each request's recorded Host.
const HostRecorded = "recorded"

// hopByHop are the headers of one connection (RFC 9110 7.6.1), never
// replayed, with those the client sets itself.
var hopByHop = []string{"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
	"proxy-authenticate", "proxy-authorization", "host", "content-length", "user-agent"}

// Scenario replays a recording: a load.Scenario whose schedule
// (Pacer) goes into load.Options.Pacer. Close it after the run.
type Scenario struct {
	o         Options
	u         *url.URL
	sched     *Schedule
	routes    *routes
	drop      map[string]bool
	c         clients
	as        *asFormat // nil: as recorded
	rec       *reqlog.Writer
	stopFlush func() // ends rec's periodic flush
	// What the recording did not hold as sent: bodies kept out (sent as
	// filler of their length) and requests with REDACTED values.
	filled, redacted atomic.Int64
}

// filler stands in for a body a recording kept out (reqlog.Options):
// as many bytes as it had, up to reqlog.MaxBody, so that the replay
// sends its size if not its content. Made on first use: a 1-MiB global
// made at init was live heap in every process of the binary, the
// server's too, where it acted as a GC ballast.
var filler = sync.OnceValue(func() []byte { return bytes.Repeat([]byte("x"), reqlog.MaxBody) })

// New opens the recording and starts its schedule.
func New(o Options) (*Scenario, error) {
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: target URL %q: want http(s)://host:port", ErrReplay, o.URL)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Format == FormatGRPC || o.Format == FormatAuto && IsGRPCRecording(o.File) {
		return nil, fmt.Errorf("%w: %s is a recording of gRPC calls: replay it against a gRPC server's host:port (docs/grpc.md)", ErrReplay, o.File)
	}
	s := &Scenario{o: o, u: u, routes: newRoutes(), drop: map[string]bool{}}
	for _, h := range hopByHop {
		s.drop[h] = true
	}
	for _, h := range o.DropHeaders {
		s.drop[strings.ToLower(strings.TrimSpace(h))] = true
	}
	if s.c, err = newClients(o, u); err != nil {
		return nil, err
	}
	if o.AsFormat != "" {
		if s.as, err = newAsFormat(o.AsFormat); err != nil {
			return nil, err
		}
	}
	open := func() (Source, io.Closer, error) { return Open(o.File, o.Format, o.Fields) }
	s.sched, err = NewSchedule(open, ScheduleOptions{Speed: o.Speed, Loop: o.Loop, MaxGap: o.MaxGap, Op: func(r *reqlog.Request) int {
		return s.routes.op(r.Method, r.Target)
	}})
	if err != nil {
		return nil, err
	}
	if o.Record != nil {
		s.rec = reqlog.NewWriter(o.Record, o.RecordKeep)
		s.stopFlush = s.rec.FlushEvery(reqlog.FlushInterval)
	}
	return s, nil
}

// Pacer is the schedule, for load.Options.Pacer.
func (s *Scenario) Pacer() load.Pacer { return s.sched }

// Stats is what the schedule read (complete after Finish or Close).
func (s *Scenario) Stats() Stats { return s.sched.Stats() }

func (s *Scenario) Name() string { return "replay" }

// Ops implements load.Scenario: MaxEndpoints slots and Other, named in
// Finish once the templates are known.
func (s *Scenario) Ops() []string {
	ops := make([]string, MaxEndpoints+1)
	for i := range ops {
		ops[i] = "endpoint " + strconv.Itoa(i)
	}
	ops[MaxEndpoints] = Other
	return ops
}

func (s *Scenario) Driver() load.Driver { return load.PerVU }

// NewVU implements load.Scenario.
func (s *Scenario) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	v := &vu{s: s, base: s.u.Scheme + "://" + s.u.Host}
	switch {
	case s.o.DryRun:
	case s.c.h2 != nil:
		v.std = s.c.h2.Client(id)
	case s.c.h3 != nil:
		if id == 0 { // the handshakes before the run, apart from latency
			s.c.h3.Warm(ctx)
		}
		v.std = s.c.h3.Client(id)
	default:
		v.conn = h1.NewConn(s.c.addr, wire, s.o.Timeout, true)
		v.conn.TLS = s.c.tls
	}
	return v, nil
}

// Finish implements load.Scenario: the endpoints' names (empty ones
// dropped), h2c's shared bytes, and what the schedule skipped.
func (s *Scenario) Finish(res *results.Load) {
	s.sched.Close()
	ops := res.Ops[:0]
	for i, op := range res.Ops {
		if op.Requests > 0 {
			op.Name = s.routes.name(i)
			ops = append(ops, op)
		}
	}
	res.Ops = ops
	conn.FinishPools(res, s.c.h2, s.c.h3)
	st := s.sched.Stats()
	if st.Malformed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d malformed lines or entries skipped (first: %s)", st.Malformed, strings.Join(st.Examples, "; ")))
	}
	if n := s.filled.Load(); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d requests' bodies were kept out of the recording (--record without --record-bodies): each was sent as filler of its recorded length, up to %d bytes", n, reqlog.MaxBody))
	}
	if n := s.redacted.Load(); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d requests carried %s values (recorded without --record-secrets): sent as recorded; a server may refuse them", n, reqlog.Redacted))
	}
	if st.GapsCut > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d pauses longer than %v between recorded requests were cut to it (the longest: %v); --max-gap changes the bound", st.GapsCut, s.sched.o.MaxGap, st.LongestGap))
	}
	if st.Reordered > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d requests were recorded more than %d requests out of time order: sent at the time of the one before", st.Reordered, Window))
	}
	if st.Err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: reading the recording stopped early: %v", st.Err))
	}
}

// RecordStats is what Options.Record holds and kept out; false without
// a record.
func (s *Scenario) RecordStats() (reqlog.WriterStats, bool) {
	if s.rec == nil {
		return reqlog.WriterStats{}, false
	}
	return s.rec.Stats(), true
}

// Close stops the schedule's reader and ends the record.
func (s *Scenario) Close() error {
	err := s.sched.Close()
	if s.c.h3 != nil {
		err = errors.Join(err, s.c.h3.Close())
	}
	if s.rec != nil && s.o.Record != nil {
		s.stopFlush()
		err = errors.Join(err, s.rec.Flush(), s.o.Record.Close())
		s.o.Record = nil // closed once; s.rec's stats stay
	}
	return err
}

// vu sends the requests the engine gives it (Outcome.Hit).
type vu struct {
	s    *Scenario
	conn *h1.Conn
	std  *http.Client
	base string // scheme://host of the std client's URLs
	buf  []byte
	hdr  []string
	body []byte
}

// errUnscheduled is a request the engine numbered but the schedule did
// not hold: cannot happen, as Due(hit) comes first.
var errUnscheduled = errors.New("replay: no request scheduled")

func (v *vu) Do(ctx context.Context, o *load.Outcome) {
	it, ok := v.s.sched.Take(o.Hit)
	status, err := 0, errUnscheduled
	if ok {
		o.Op = it.Op
		status, err = v.send(ctx, o, &it.Req)
	}
	o.Status = status
	switch {
	case errors.Is(err, ErrAsFormat):
		o.Fail = ErrAsFormat.Error() // one reason, not one per request
		return
	case err != nil:
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Fail = checkStatus(status, it.Req.Status)
}

// send sends r (or, in a dry run, only prepares it) and writes it to the
// record, if any.
func (v *vu) send(ctx context.Context, o *load.Outcome, r *reqlog.Request) (status int, err error) {
	target, host := v.s.target(r)
	v.hdr = v.hdr[:0]
	for _, h := range r.Header {
		if !v.s.drop[strings.ToLower(h[0])] {
			v.hdr = append(v.hdr, h[0]+": "+h[1])
		}
	}
	body := r.Body
	if len(body) == 0 && r.BodyLen > 0 {
		body = filler()[:min(r.BodyLen, reqlog.MaxBody)]
		v.s.filled.Add(1)
	}
	if hasRedacted(r) {
		v.s.redacted.Add(1)
	}
	if v.s.as != nil {
		if v.hdr, body, err = v.s.as.request(r.Method, target, v.hdr, body); err != nil {
			return 0, err
		}
	}
	o.BodyOut = len(body)
	t0 := time.Now().UnixNano()
	switch {
	case v.s.o.DryRun:
		v.buf = h1.AppendRequest(v.buf[:0], r.Method, target, host, v.hdr, body, true)
		status = r.Status
		if status == 0 {
			status = http.StatusOK
		}
	case v.std != nil:
		// net/http sends URL's host as :authority: Host applies to HTTP/1.1.
		var in []byte
		status, in, err = h1.StdDo(ctx, v.std, r.Method, v.base+target, v.hdr, body, &v.body, nil, nil)
		o.BodyIn = len(in)
		if v.s.c.h2 != nil {
			o.BodyOut = 0 // HTTP/2's DATA frames count it (Finish)
		}
	default:
		v.buf = h1.AppendRequest(v.buf[:0], r.Method, target, host, v.hdr, body, true)
		var resp *h1.Response
		resp, err = v.conn.RoundTrip(ctx, v.buf, r.Method == http.MethodHead, true)
		if resp != nil {
			status, o.BodyIn = resp.Status, resp.BodyLen
		}
	}
	if rec := v.s.rec; rec != nil {
		q := reqlog.Request{At: t0, Method: r.Method, Target: target, Body: body, Status: status}
		if host != v.s.u.Host {
			q.Header = append(q.Header, [2]string{"Host", host})
		}
		for _, h := range v.hdr {
			if k, val, ok := h1.CutHeader(h); ok {
				q.Header = append(q.Header, [2]string{k, val})
			}
		}
		_ = rec.Write(&q)
	}
	return status, err
}

func (v *vu) Close() error {
	if v.conn != nil {
		v.conn.Close()
	}
	return nil
}

// hasRedacted: a request recorded with a secret replaced.
func hasRedacted(r *reqlog.Request) bool {
	if strings.Contains(r.Target, reqlog.Redacted) {
		return true
	}
	for _, h := range r.Header {
		if h[1] == reqlog.Redacted {
			return true
		}
	}
	return false
}

// target is the request target sent (the recorded path and query) and
// the Host header.
func (s *Scenario) target(r *reqlog.Request) (target, host string) {
	target, host = r.Target, s.u.Host
	if h, rest, ok := reqlog.SplitAbsolute(target); ok {
		if s.o.Host == HostRecorded {
			host = h[strings.LastIndexByte(h, '@')+1:] // no user information in Host
		}
		target = rest
	} else if s.o.Host == HostRecorded {
		for _, h := range r.Header {
			if strings.EqualFold(h[0], "host") {
				host = h[1]
			}
		}
	}
	if s.o.Host != "" && s.o.Host != HostRecorded {
		host = s.o.Host
	}
	if i := strings.IndexByte(target, '#'); i >= 0 {
		target = target[:i]
	}
	return target, host
}

// checkStatus fails a response whose status class differs from the
// recorded one's; an unknown recorded status wants 1xx–3xx.
func checkStatus(got, recorded int) string {
	switch {
	case recorded == 0 && got >= 100 && got < 400:
		return ""
	case recorded != 0 && got/100 == recorded/100:
		return ""
	case recorded == 0:
		return fmt.Sprintf("status %dxx, recorded unknown (want 1xx-3xx)", got/100)
	}
	return fmt.Sprintf("status %dxx, recorded %dxx", got/100, recorded/100)
}
