package replay

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

func drain(t *testing.T, src Source) []reqlog.Request {
	t.Helper()
	var out []reqlog.Request
	for {
		r, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func source(t *testing.T, text, name, format string, f FieldMap) Source {
	t.Helper()
	src, err := NewSource(strings.NewReader(text), name, format, f)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

const harDoc = `{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "pages": [{"id": "p"}],
 "entries": [
  {"startedDateTime": "2026-11-24T10:00:00.000Z", "request": {"method": "GET", "url": "https://shop.example/users/42?x=1",
    "headers": [{"name": ":authority", "value": "shop.example"}, {"name": "Accept", "value": "application/json"}]},
   "response": {"status": 200}},
  {"startedDateTime": "2026-11-24T10:00:00.250+00:00", "request": {"method": "POST", "url": "http://shop.example/echo",
    "headers": [], "postData": {"mimeType": "application/json", "text": "{\"a\":1}"}}, "response": {"status": 201}},
  {"startedDateTime": "yesterday", "request": {"method": "GET", "url": "http://a/"}, "response": {"status": 200}},
  {"startedDateTime": "2026-11-24T10:00:01Z", "request": {"method": 7}},
  {"startedDateTime": "2026-11-24T10:00:01.5Z", "request": {"method": "GET", "url": "http://a/b"}, "response": {"status": 0}}
 ]}}`

func TestHAR(t *testing.T) {
	src := source(t, harDoc, "x.har", "", FieldMap{})
	got := drain(t, src)
	if len(got) != 3 {
		t.Fatalf("got %d requests: %+v", len(got), got)
	}
	if got[0].Method != "GET" || got[0].Target != "https://shop.example/users/42?x=1" || len(got[0].Header) != 1 || got[0].Status != 200 {
		t.Fatalf("entry 0: %+v", got[0])
	}
	if d := time.Duration(got[1].At - got[0].At); d != 250*time.Millisecond || string(got[1].Body) != `{"a":1}` {
		t.Fatalf("entry 1: %v after, body %q", d, got[1].Body)
	}
	if bad := src.Malformed(); bad.N != 2 || !strings.Contains(bad.Examples[0], "startedDateTime") {
		t.Fatalf("malformed %+v", bad)
	}
}

func TestHARBroken(t *testing.T) {
	src := source(t, harDoc[:strings.Index(harDoc, `"yesterday"`)], "x.har", "", FieldMap{})
	got := drain(t, src)
	if len(got) != 2 || src.Malformed().N != 1 || !strings.Contains(src.Malformed().Examples[0], "the rest is not read") {
		t.Fatalf("got %d, malformed %+v", len(got), src.Malformed())
	}
	if _, err := NewSource(strings.NewReader(`{"log": {"pages": []}}`), "x.har", "", FieldMap{}); err != nil {
		t.Fatal(err)
	}
	_, err := source(t, `{"log": {"pages": []}}`, "x.har", "", FieldMap{}).Next()
	if !errors.Is(err, ErrReplay) {
		t.Fatalf("a HAR without entries: %v", err)
	}
}

func TestAccessLog(t *testing.T) {
	log := strings.Join([]string{
		// nginx with $request_time and $msec after the agent
		`10.0.0.1 - - [24/Nov/2026:10:00:00 +0000] "GET /users/42 HTTP/1.1" 200 612 "-" "curl/8" 0.004 1795514400.104`,
		`10.0.0.1 - - [24/Nov/2026:10:00:00 +0000] "POST /echo HTTP/1.1" 201 20 "-" "curl/8" 0.010 1795514400.310`,
		`garbage`,
		`10.0.0.1 - - [24/Nov/2026:10:00:00 +0000] "\x16\x03\x01" 400 0 "-" "-"`,
		`10.0.0.1 - - [99/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
	}, "\n")
	src := source(t, log, "access.log", "", FieldMap{})
	got := drain(t, src)
	if len(got) != 2 || src.Malformed().N != 3 {
		t.Fatalf("got %+v, malformed %+v", got, src.Malformed())
	}
	// start = $msec − $request_time
	if got[0].At != 1795514400100*int64(time.Millisecond) || got[1].At != 1795514400300*int64(time.Millisecond) {
		t.Fatalf("times %d %d", got[0].At, got[1].At)
	}
	if got[1].Method != "POST" || got[1].Target != "/echo" || got[1].Status != 201 {
		t.Fatalf("%+v", got[1])
	}
}

// TestAccessLogSecondsSpread: four lines of one second, one of the next:
// spread evenly within their second, at (k+½)/n.
func TestAccessLogSecondsSpread(t *testing.T) {
	line := func(sec, path string) string {
		return `1.2.3.4 - - [24/Nov/2026:10:00:0` + sec + ` +0000] "GET ` + path + ` HTTP/1.0" 200 1 "-" "-"`
	}
	log := strings.Join([]string{line("0", "/a"), line("0", "/b"), line("0", "/c"), line("0", "/d"), line("1", "/e")}, "\n") + "\n"
	got := drain(t, source(t, log, "", "", FieldMap{}))
	base := got[0].At - int64(125*time.Millisecond)
	want := []time.Duration{125 * time.Millisecond, 375 * time.Millisecond, 625 * time.Millisecond, 875 * time.Millisecond, 1500 * time.Millisecond}
	for i, w := range want {
		if d := time.Duration(got[i].At - base); d != w {
			t.Errorf("request %d at %v, want %v", i, d, w)
		}
	}
}

func TestJSONLines(t *testing.T) {
	log := strings.Join([]string{
		`{"time": 1795514400.5, "verb": "GET", "uri": "/users/1", "code": 200, "req": {"h": {"Accept": "a/b"}}}`,
		`{"time": "2026-11-24T10:00:00.75Z", "verb": "PUT", "uri": "/users/1", "code": "204", "payload": "x"}`,
		`{"time": 1795514401000, "verb": "GET", "uri": "/ms"}`,
		`{"time": 1795514401000000, "verb": "GET", "uri": "/us"}`,
		`{"time": "24/Nov/2026:10:00:02 +0000", "verb": "GET", "uri": "/clf"}`,
		`{"verb": "GET", "uri": "/no-time"}`,
		`{"time": 1, "verb": "G T", "uri": "/x"}`,
		`[1,2]`,
	}, "\n")
	f, err := ParseFieldMap("ts=time,method=verb,path=uri,status=code,headers=req.h,body=payload")
	if err != nil {
		t.Fatal(err)
	}
	src := source(t, log, "", "", f)
	got := drain(t, src)
	if len(got) != 5 || src.Malformed().N != 3 {
		t.Fatalf("got %d %+v, malformed %+v", len(got), got, src.Malformed())
	}
	sec := int64(1795514400) * 1e9
	for i, w := range []int64{sec + 5e8, sec + 75e7, sec + 1e9, sec + 1e9} {
		if got[i].At != w {
			t.Errorf("request %d at %d, want %d", i, got[i].At, w)
		}
	}
	if got[0].Header[0] != [2]string{"Accept", "a/b"} || got[1].Status != 204 || string(got[1].Body) != "x" {
		t.Fatalf("%+v", got[:2])
	}
	if _, err := ParseFieldMap("ts=time,nope=x"); !errors.Is(err, ErrReplay) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct{ text, name, want string }{
		{`{"wirebench":"requests/v1"}` + "\n", "x", FormatReqlog},
		{"{\n  \"log\": {", "x.json", FormatHAR},
		{`{"log":{"entries":[]}}`, "x.json", FormatHAR},
		{`{"time":1,"method":"GET"}` + "\n", "x", FormatJSONL},
		{`1.2.3.4 - - [`, "x", FormatAccess},
		{`anything`, "x.HAR", FormatHAR},
	} {
		br := newPeek(c.text)
		if got := sniff(br, c.name); got != c.want {
			t.Errorf("sniff(%q, %q) = %q, want %q", c.text, c.name, got, c.want)
		}
	}
}

func fuzzSource(f *testing.F, format string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := NewSource(bytes.NewReader(data), "", format, FieldMap{})
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; ; n++ {
			r, err := src.Next()
			if err != nil {
				break
			}
			if !reqlog.ValidMethod(r.Method) || !reqlog.ValidTarget(r.Target) {
				t.Fatalf("accepted %+v", r)
			}
			for _, h := range r.Header {
				if !reqlog.ValidHeader(h[0], h[1]) {
					t.Fatalf("accepted header %q", h)
				}
			}
			if n > len(data) {
				t.Fatal("more requests than bytes")
			}
		}
		if m := src.Malformed(); m.N < int64(len(m.Examples)) || len(m.Examples) > reqlog.MaxExamples {
			t.Fatalf("malformed %+v", m)
		}
	})
}

func FuzzHAR(f *testing.F) { fuzzSource(f, FormatHAR, harDoc, `{"log":{"entries":[{}]}}`, `[`) }

func FuzzAccessLog(f *testing.F) {
	fuzzSource(f, FormatAccess,
		`10.0.0.1 - - [24/Nov/2026:10:00:00 +0000] "GET /users/42 HTTP/1.1" 200 612 "-" "curl/8" 0.004 1795514400.104`,
		`1.2.3.4 - - [24/Nov/2026:10:00:00 +0000] "GET / HTTP/1.0" 200 1`+"\n"+`x`)
}

func FuzzJSONLines(f *testing.F) {
	fuzzSource(f, FormatJSONL, `{"time": 1795514400.5, "method": "GET", "path": "/users/1", "status": 200, "headers": {"A": "b"}, "body": "x"}`)
}

func newPeek(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// TestControlBytesRefused: a request whose target or header value holds
// a control byte (ESC, NUL, DEL) is refused in every format, counted,
// and the example shown escapes it: nothing of it reaches the wire, the
// terminal or a report.
func TestControlBytesRefused(t *testing.T) {
	for _, c := range []struct{ format, text string }{
		{FormatAccess, "1.2.3.4 - - [24/Nov/2026:10:00:00 +0000] \"GET /a\x1b[2J HTTP/1.1\" 200 1 \"-\" \"-\"\n" +
			"1.2.3.4 - - [24/Nov/2026:10:00:00 +0000] \"GET /ok HTTP/1.1\" 200 1 \"-\" \"-\"\n"},
		{FormatJSONL, `{"time": 1795514400, "method": "GET", "path": "/a\u001b[31m"}` + "\n" +
			`{"time": 1795514400, "method": "GET", "path": "/b", "headers": {"X": "v\u0007"}}` + "\n" +
			`{"time": 1795514400, "method": "GET", "path": "/ok"}` + "\n"},
		{FormatReqlog, `{"wirebench":"requests/v1"}` + "\n" + `{"t":1,"m":"GET","u":"/a\u007f"}` + "\n" +
			`{"t":1,"m":"GET","u":"/b","h":[["X","\u001b]0;pwned\u0007"]]}` + "\n" + `{"t":2,"m":"GET","u":"/ok"}` + "\n"},
		{FormatHAR, `{"log": {"entries": [` + harEntryURL(`http://a/\u0000x`) + `,` + harEntryURL("http://a/ok") + `]}}`},
	} {
		t.Run(c.format, func(t *testing.T) {
			src, err := NewSource(strings.NewReader(c.text), "", c.format, FieldMap{})
			if err != nil {
				t.Fatal(err)
			}
			got := drain(t, src)
			if len(got) != 1 || !strings.HasSuffix(got[0].Target, "/ok") {
				t.Errorf("accepted %+v", got)
			}
			bad := src.Malformed()
			if bad.N == 0 {
				t.Error("nothing counted")
			}
			for _, e := range bad.Examples {
				if strings.ContainsAny(e, "\x00\x07\x1b\x7f") {
					t.Errorf("example holds a control byte: %q", e)
				}
			}
		})
	}
}

// TestEndpointNamesPrintable: an endpoint's name holds printable ASCII
// only and at most MaxName bytes (and a mark).
func TestEndpointNamesPrintable(t *testing.T) {
	r := newRoutes()
	r.op("GET", "/caf\xc3\xa9/\xc2\x9b2J/"+strings.Repeat("a", 1000))
	got := r.name(0)
	if !strings.HasPrefix(got, "GET /caf%C3%A9/%C2%9B2J/aaa") || len(got) > len("GET ")+MaxName+len("…") || !strings.HasSuffix(got, "…") {
		t.Fatalf("name %q (%d bytes)", got, len(got))
	}
}

// TestTimesPastNanosecondsRefused: a date a request time cannot hold (Go's
// UnixNano covers 1678 to 2261; past that it wraps) is a bad time, in
// every format that writes dates: a HAR's startedDateTime, an access
// log's [time], a JSON line's string ts. Taken, 0001-01-01 and 9999-12-31
// read as two times 210 years apart in another order, and the summary
// named a wrapped gap ("the longest 1846684h").
func TestTimesPastNanosecondsRefused(t *testing.T) {
	entry := func(at, path string) string {
		return `{"startedDateTime": "` + at + `", "request": {"method": "GET", "url": "http://a/` + path + `"}, "response": {"status": 200}}`
	}
	har := `{"log": {"entries": [` + entry("0001-01-01T00:00:00Z", "old") + `, ` + entry("9999-12-31T23:59:59Z", "late") + `, ` +
		entry("2262-06-01T00:00:00Z", "2262") + `, ` + entry("2026-11-24T10:00:00Z", "ok") + `]}}`
	access := `1.2.3.4 - - [01/Jan/0001:00:00:00 +0000] "GET /old HTTP/1.1" 200 2 "-" "-"
1.2.3.4 - - [24/Nov/2026:10:00:00 +0000] "GET /ok HTTP/1.1" 200 2 "-" "-"
`
	jsonl := `{"ts": "9999-12-31T23:59:59Z", "method": "GET", "path": "/late", "status": 200}
{"ts": "2026-11-24T10:00:00Z", "method": "GET", "path": "/ok", "status": 200}
`
	for _, c := range []struct {
		name, text, file, format string
		f                        FieldMap
		bad                      int64
	}{
		{"har", har, "x.har", "", FieldMap{}, 3},
		{"access", access, "x.log", FormatAccess, FieldMap{}, 1},
		{"jsonl", jsonl, "x.jsonl", FormatJSONL, FieldMap{TS: "ts", Method: "method", Path: "path", Status: "status"}, 1},
	} {
		src := source(t, c.text, c.file, c.format, c.f)
		got := drain(t, src)
		if len(got) != 1 || !strings.HasSuffix(got[0].Target, "/ok") {
			t.Errorf("%s: read %+v, want only /ok", c.name, got)
		}
		if m := src.Malformed(); m.N != c.bad {
			t.Errorf("%s: %d skipped (%v), want %d", c.name, m.N, m.Examples, c.bad)
		}
	}
}
