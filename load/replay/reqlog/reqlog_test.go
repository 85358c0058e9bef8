package reqlog

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// writeLog writes in through a Writer with o and reads the log back: the
// file's text, its requests and the writer's counts.
func writeLog(t *testing.T, o Options, in []Request) (string, []Request, WriterStats) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, o)
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	raw := buf.String()
	return raw, readAll(t, NewReader(&buf)), w.Stats()
}

func readAll(t *testing.T, r *Reader) []Request {
	t.Helper()
	var out []Request
	for {
		q, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
}

func TestRoundTrip(t *testing.T) {
	in := []Request{
		{At: 1, Method: "GET", Target: "/users/7", Status: 200},
		{At: 2, Method: "POST", Target: "/echo", Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"a":1}`), Status: 201},
		{At: 3, Method: "PUT", Target: "http://h/x?y=1", Body: bytes.Repeat([]byte("x"), MaxBody+5)},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{Bodies: true})
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&buf)
	got := readAll(t, r)
	in[2].Body, in[2].Truncated, in[2].BodyLen = in[2].Body[:MaxBody], true, MaxBody+5
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got[:2], in[:2])
	}
	if r.Bad.N != 0 {
		t.Fatalf("malformed: %+v", r.Bad)
	}
}

func TestMalformedLinesCountedNotFatal(t *testing.T) {
	long := `{"t":5,"m":"GET","u":"/` + strings.Repeat("a", 300) + `"}`
	log := strings.Join([]string{
		`{"wirebench":"requests/v1"}`,
		`{"t":1,"m":"GET","u":"/a"}`,
		`not json`,
		`{"t":0,"m":"GET","u":"/b"}`,
		`{"t":2,"m":"G T","u":"/c"}`,
		`{"t":3,"m":"GET","u":""}`,
		`{"t":4,"m":"GET","u":"/d","h":[["X-A","b\r\nEvil: 1"]]}`,
		long,
		``,
		`{"t":6,"m":"GET","u":"/e","s":204}`,
	}, "\n")
	r := NewReader(strings.NewReader(log))
	r.lines.Max = 200
	got := readAll(t, r)
	if len(got) != 2 || got[0].Target != "/a" || got[1].Target != "/e" || got[1].Status != 204 {
		t.Fatalf("got %+v", got)
	}
	if r.Bad.N != 6 || len(r.Bad.Examples) != MaxExamples {
		t.Fatalf("malformed %d, examples %q", r.Bad.N, r.Bad.Examples)
	}
	if !strings.HasPrefix(r.Bad.Examples[0], "line 3: not a JSON") {
		t.Fatalf("first example %q", r.Bad.Examples[0])
	}
}

func TestWrongVersion(t *testing.T) {
	_, err := NewReader(strings.NewReader(`{"wirebench":"requests/v9"}` + "\n")).Next()
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("err %v, want ErrFormat", err)
	}
}

func TestLinesLongLastLineWithoutNewline(t *testing.T) {
	var bad Malformed
	l := NewLines(strings.NewReader("ok\n"+strings.Repeat("x", 100)), &bad)
	l.Max = 10
	if b, err := l.Next(); err != nil || string(b) != "ok" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := l.Next(); !errors.Is(err, io.EOF) || bad.N != 1 {
		t.Fatalf("err %v, bad %d", err, bad.N)
	}
}

func TestMiddlewareRecords(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{Bodies: true})
	h := Middleware(w, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != "hello" {
			t.Errorf("handler read %q", b)
		}
		rw.WriteHeader(http.StatusCreated)
	}))
	req := httptest.NewRequest("POST", "/users?x=1", strings.NewReader("hello"))
	req.Header.Set("Content-Type", "text/plain")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, NewReader(&buf))
	if len(got) != 1 || got[0].Method != "POST" || got[0].Target != "/users?x=1" || string(got[0].Body) != "hello" ||
		got[0].Status != 201 || len(got[0].Header) != 1 || got[0].At == 0 {
		t.Fatalf("recorded %+v", got)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"wirebench\":\"requests/v1\"}\n{\"t\":1,\"m\":\"GET\",\"u\":\"/a\",\"h\":[[\"A\",\"b\"]],\"b\":\"aGk=\",\"s\":200}\n"))
	f.Add([]byte("{\"t\":1}\n\n\r\nxx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		r.lines.Max = 64
		for i := 0; ; i++ {
			q, err := r.Next()
			if err != nil {
				return
			}
			if q.At == 0 || !ValidMethod(q.Method) || !ValidTarget(q.Target) {
				t.Fatalf("accepted a bad request %+v", q)
			}
			for _, h := range q.Header {
				if !ValidHeader(h[0], h[1]) {
					t.Fatalf("accepted a bad header %q", h)
				}
			}
			if i > len(data) {
				t.Fatal("more requests than bytes")
			}
		}
	})
}
