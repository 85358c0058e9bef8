package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// FieldMap names, for a JSON-lines log, the field holding each part of
// a request; a dotted name reaches into objects ("req.method"). The
// zero value reads ts=time, method=method, path=path, status=status,
// headers=headers (an object of strings), body=body.
type FieldMap struct {
	TS, Method, Path, Status, Headers, Body string
}

// ParseFieldMap reads "ts=time,method=verb,path=uri".
func ParseFieldMap(s string) (FieldMap, error) {
	var m FieldMap
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return m, fmt.Errorf("%w: field map %q: want key=field, e.g. ts=time,method=verb,path=uri", ErrReplay, kv)
		}
		switch k {
		case "ts":
			m.TS = v
		case "method":
			m.Method = v
		case "path", "url":
			m.Path = v
		case "status":
			m.Status = v
		case "headers":
			m.Headers = v
		case "body":
			m.Body = v
		default:
			return m, fmt.Errorf("%w: field map: unknown key %q (want ts, method, path, status, headers, body)", ErrReplay, k)
		}
	}
	return m, nil
}

func (m FieldMap) withDefaults() FieldMap {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	return FieldMap{def(m.TS, "time"), def(m.Method, "method"), def(m.Path, "path"), def(m.Status, "status"), def(m.Headers, "headers"), def(m.Body, "body")}
}

// jsonlReader reads one JSON object a line, through a FieldMap. A time
// is a number of Unix seconds, ms, µs or ns (told apart by size: below
// 1e11 seconds, 1e14 ms, 1e17 µs, else ns), a string of such a number,
// an RFC 3339 time, or an access log's 10/Oct/2000:13:55:36 -0700.
type jsonlReader struct {
	lines *reqlog.Lines
	bad   reqlog.Malformed
	f     FieldMap
}

func newJSONLReader(r io.Reader, f FieldMap) *jsonlReader {
	j := &jsonlReader{f: f.withDefaults()}
	j.lines = reqlog.NewLines(r, &j.bad)
	return j
}

func (j *jsonlReader) Malformed() *reqlog.Malformed { return &j.bad }

func (j *jsonlReader) Next() (reqlog.Request, error) {
	for {
		b, err := j.lines.Next()
		if err != nil {
			return reqlog.Request{}, err
		}
		req, why := j.parse(b)
		if why != "" {
			j.bad.Add(j.lines.No, why)
			continue
		}
		return req, nil
	}
}

func (j *jsonlReader) parse(b []byte) (reqlog.Request, string) {
	var req reqlog.Request
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return req, "not a JSON object"
	}
	ts, ok := lookup(obj, j.f.TS)
	if !ok {
		return req, fmt.Sprintf("no %q (ts)", j.f.TS)
	}
	at, ok := parseTime(ts)
	if !ok {
		return req, fmt.Sprintf("bad time %q", shorten([]byte(fmt.Sprint(ts))))
	}
	m, _ := lookup(obj, j.f.Method)
	ms, _ := m.(string)
	if !reqlog.ValidMethod(ms) {
		return req, fmt.Sprintf("no or bad method in %q", j.f.Method)
	}
	p, _ := lookup(obj, j.f.Path)
	ps, _ := p.(string)
	if !reqlog.ValidTarget(ps) {
		return req, fmt.Sprintf("no or bad path in %q", j.f.Path)
	}
	req.At, req.Method, req.Target = at, ms, ps
	if s, ok := lookup(obj, j.f.Status); ok {
		n, err := strconv.Atoi(strings.Trim(fmt.Sprint(s), `"`))
		if err != nil || n < 0 || n > 999 {
			return req, fmt.Sprintf("bad status %q", shorten([]byte(fmt.Sprint(s))))
		}
		req.Status = n
	}
	if h, ok := lookup(obj, j.f.Headers); ok {
		hm, ok := h.(map[string]any)
		if !ok {
			return req, "headers: want an object of strings"
		}
		for k, v := range hm {
			vs, ok := v.(string)
			if !ok || !reqlog.ValidHeader(k, vs) {
				return req, fmt.Sprintf("bad header %q", shorten([]byte(k)))
			}
			req.Header = append(req.Header, [2]string{k, vs})
		}
	}
	if bd, ok := lookup(obj, j.f.Body); ok {
		s, ok := bd.(string)
		if !ok {
			return req, "body: want a string"
		}
		req.Body = []byte(s)
	}
	return req, ""
}

// lookup follows a dotted field name.
func lookup(obj map[string]any, name string) (any, bool) {
	var cur any = obj
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

func parseTime(v any) (int64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, false
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		a := math.Abs(f)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) || f <= 0:
			return 0, false
		case a < 1e11:
			return int64(f * 1e9), true
		case a < 1e14:
			return int64(f * 1e6), true
		case a < 1e17:
			return int64(f * 1e3), true
		case a < 9e18:
			return int64(f), true
		}
		return 0, false
	}
	for _, layout := range []string{time.RFC3339Nano, "02/Jan/2006:15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return unixNano(t)
		}
	}
	return 0, false
}

// unixNano is t in Unix nanoseconds, ok only when an int64 holds it (the
// years 1678 to 2261): past that UnixNano wraps, and a recorded 9999-12-31
// would read as a time in 1823.
func unixNano(t time.Time) (int64, bool) {
	ns := t.UnixNano()
	return ns, time.Unix(0, ns).Equal(t)
}
