package spec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
)

// sigint is a context cause naming its signal, as the CLI's.
type sigint struct{}

func (sigint) Error() string      { return "interrupted by SIGINT" }
func (sigint) SignalName() string { return "SIGINT" }

// failClose is a scenario whose request log could not be written.
type failClose struct{ load.Scenario }

func (failClose) Close() error { return errors.New("disk full") }

func server(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRunRecords: a run's result names its scenario, its options and the
// machine; a scenario that cannot close warns.
func TestRunRecords(t *testing.T) {
	var o load.Options
	o.Requests, o.Concurrency = 5, 1
	m := made(t, Client{Options: o, Raw: &load.RawOptions{Options: conn.Options{URL: server(t), Timeout: 5 * time.Second}}})
	m.Scenario = failClose{m.Scenario}
	res, err := m.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario != "raw" || res.Config.Raw == nil || res.Env.GoVersion == "" || res.Requests != 5 || res.Stop != nil {
		t.Errorf("scenario %q config %+v env %+v requests %d stop %+v", res.Scenario, res.Config, res.Env, res.Requests, res.Stop)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "closing the scenario: disk full" {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// TestRunInterrupted: a run its context ends is a partial result, marked
// with the signal and a warning of what it covers.
func TestRunInterrupted(t *testing.T) {
	var o load.Options
	o.Duration, o.Concurrency = time.Minute, 1
	m := made(t, Client{Options: o, Raw: &load.RawOptions{Options: conn.Options{URL: server(t), Timeout: 5 * time.Second}}})
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(sigint{}) })
	res, err := m.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop == nil || !res.Stop.Interrupted || res.Stop.Signal != "SIGINT" {
		t.Fatalf("stop %+v, want interrupted by SIGINT", res.Stop)
	}
	w := res.Warnings[len(res.Warnings)-1] // after the engine's own
	if !strings.HasPrefix(w, "interrupted by SIGINT after ") || !strings.HasSuffix(w, " of the planned 1m0s: the figures cover only that window") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// TestRawRecord: raw mode with a Record writes its requests to the log it
// creates once the scenario is made, and says what the log holds.
func TestRawRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.log")
	var o load.Options
	o.Requests, o.Concurrency = 4, 1
	create := func() (io.WriteCloser, error) { return os.Create(path) }
	m := made(t, Client{Options: o, Raw: &load.RawOptions{Options: conn.Options{URL: server(t), Timeout: 5 * time.Second}},
		Record: &Record{Create: create, Path: path}})
	if _, err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, ok := m.RecordStats()
	if !ok || st.Requests != 4 || m.Config.Record != path {
		t.Fatalf("record stats %+v %v, config record %q", st, ok, m.Config.Record)
	}
	b, err := os.ReadFile(path)
	if err != nil || bytes.Count(b, []byte("\n")) != 1+4 /* its header line, then a line a request */ {
		t.Errorf("log %q: %v", b, err)
	}
	if _, ok := made(t, Client{Options: o, Raw: &load.RawOptions{Options: conn.Options{URL: server(t)}}}).RecordStats(); ok {
		t.Error("a client without a log has record stats")
	}
	bad := Client{Options: o, Raw: &load.RawOptions{Options: conn.Options{URL: "ftp://x"}},
		Record: &Record{Create: func() (io.WriteCloser, error) { t.Error("created a log for options that cannot run"); return nil, nil }}}
	if _, err := New(context.Background(), bad); err == nil {
		t.Error("raw mode to ftp:// made")
	}
}
