package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// asFormatRecording: the reference API's JSON bodies (a user, a todo, an
// echo) and a GET, 2 ms apart.
func asFormatRecording(t *testing.T, path string, extra ...reqlog.Request) {
	t.Helper()
	ct := [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json"}}
	reqs := append([]reqlog.Request{
		{Method: "POST", Target: "/users", Header: ct, Body: []byte(`{"name":"Ada","email":"ada@example.com"}`), Status: 201},
		{Method: "POST", Target: "/todos", Header: ct, Body: []byte(`{"text":"write tests","done":true}`), Status: 201},
		{Method: "POST", Target: "/echo", Header: ct, Body: []byte(`{"first_message":"a","second_message":"b"}`), Status: 200},
		{Method: "GET", Target: "/users/3", Header: ct[1:], Status: 200},
	}, extra...)
	writeReqlog(t, path, reqs)
}

// header is q's header name (any case), "" if absent.
func header(q reqlog.Request, name string) string {
	for _, h := range q.Header {
		if strings.EqualFold(h[0], name) {
			return h[1]
		}
	}
	return ""
}

// TestReplayAsFormat: --as-format F sends the recorded JSON bodies in F,
// with Content-Type and Accept F's media type; serve accepts every one,
// and what it received decodes in F to what the recording held in JSON.
func TestReplayAsFormat(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.log")
	asFormatRecording(t, rec)
	want := map[string]any{
		"/users": &api.User{Name: "Ada", Email: "ada@example.com"},
		"/todos": &api.Todo{Text: "write tests", Done: true},
		"/echo":  &api.EchoRequest{FirstMessage: "a", SecondMessage: "b"},
	}
	for _, format := range replay.AsFormats {
		t.Run(format, func(t *testing.T) {
			got := filepath.Join(t.TempDir(), "got.log")
			url, stop := serveInProcess(t, "--record", got, "--seed-users", "5")
			code, stdout, errs := runCLI(t, "replay", rec, "--target", url, "--as-format", format, "-q")
			if code != 0 || !strings.Contains(stdout, "4 requests scheduled") {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
			}
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d", code)
			}
			e := codec.MustLookup(format)
			log := readReqlog(t, got)
			if len(log) != 4 {
				t.Fatalf("serve received %d requests, want 4", len(log))
			}
			for _, q := range log {
				if q.Status/100 != 2 || header(q, "Accept") != e.MediaTypes[0] {
					t.Errorf("%s %s: status %d, Accept %q", q.Method, q.Target, q.Status, header(q, "Accept"))
				}
				w, ok := want[q.Target]
				if !ok {
					continue
				}
				v := reflect.New(reflect.TypeOf(w).Elem()).Interface()
				if err := e.Codec.Unmarshal(q.Body, v); err != nil || !reflect.DeepEqual(v, w) || header(q, "Content-Type") != e.MediaTypes[0] {
					t.Errorf("%s %s: Content-Type %q, body %q decodes to %+v (%v), want %+v", q.Method, q.Target, header(q, "Content-Type"), q.Body, v, err, w)
				}
			}
		})
	}
}

// TestReplayAsFormatBadBody: a recorded body that is not the API's JSON
// for its route is not sent; it fails with one reason, the rest go.
func TestReplayAsFormatBadBody(t *testing.T) {
	dir := t.TempDir()
	rec, out := filepath.Join(dir, "rec.log"), filepath.Join(dir, "out.json")
	asFormatRecording(t, rec, reqlog.Request{Method: "POST", Target: "/echo", Body: []byte("not json"), Status: 200},
		reqlog.Request{Method: "POST", Target: "/metrics", Body: []byte("{}"), Status: 200})
	url, _ := serveInProcess(t, "--seed-users", "5")
	code, stdout, errs := runCLI(t, "replay", rec, "--target", url, "--as-format", "cbor", "-q", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	res := readLoad(t, out)
	if res.Requests != 6 || res.Failed != 2 || res.Failures[replay.ErrAsFormat.Error()] != 2 {
		t.Fatalf("%d requests, %d failed: %v", res.Requests, res.Failed, res.Failures)
	}
	code, _, errs = runCLI(t, "replay", rec, "--target", url, "--as-format", "xml")
	if code != 2 || !strings.Contains(errs, `as-format "xml": want one of json, toon, cbor, msgpack, protobuf`) {
		t.Fatalf("--as-format xml: exit %d, %s", code, errs)
	}
}
