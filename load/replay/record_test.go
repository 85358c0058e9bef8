package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// readLog reads a request log whole (tests only: logs here are small).
func readLog(t *testing.T, path string) []reqlog.Request {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := reqlog.ReadAll(f)
	if err != nil {
		t.Fatalf("the log we wrote: %v", err)
	}
	return out
}

// replayCount replays path to a fresh test server as fast as it goes and
// returns what the server saw.
func replayCount(t *testing.T, path string) (*seen, int64) {
	t.Helper()
	s := newSeen()
	res := runReplay(t, Options{File: path, Options: conn.Options{URL: testServer(t, s)}, Speed: 1e6})
	return s, res.Requests
}

// TestRecordRaw: every request raw mode sends is one line of the log,
// and the log replays to as many requests at the server.
func TestRecordRaw(t *testing.T) {
	s := newSeen()
	url := testServer(t, s)
	raw, err := load.NewRaw(load.RawOptions{Options: conn.Options{URL: url + "/echo/x?y=1", Timeout: 5 * time.Second}, Method: "POST", Body: []byte("hello")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "raw.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := Record(raw, f, reqlog.Request{Method: "POST", Target: url + "/echo/x?y=1", Body: []byte("hello"),
		Header: [][2]string{{"Content-Type", "text/plain"}}}, reqlog.Options{})
	var o load.Options
	o.Concurrency, o.Requests, o.Timeout = 3, 25, 5*time.Second
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Requests != 25 || res.Failed != 0 {
		t.Fatalf("run: %d requests, %d failed %v", res.Requests, res.Failed, res.Failures)
	}
	log := readLog(t, path)
	if len(log) != 25 {
		t.Fatalf("log has %d requests, want 25", len(log))
	}
	for i, q := range log {
		if q.Method != "POST" || !strings.HasSuffix(q.Target, "/echo/x?y=1") || string(q.Body) != "hello" || q.Status != 200 || q.At == 0 {
			t.Fatalf("line %d: %+v", i, q)
		}
	}
	got, n := replayCount(t, path)
	if n != 25 || len(got.targets) != 25 || got.bodies["/echo/x?y=1"] != "hello" {
		t.Fatalf("replayed %d, server saw %d, bodies %v", n, len(got.targets), got.bodies)
	}
}

// TestReplayRecordsWhatItSent: a replay's --record holds what was sent
// (dropped headers gone, the status received), and replays to the same
// endpoints and counts.
func TestReplayRecordsWhatItSent(t *testing.T) {
	s := newSeen()
	url := testServer(t, s)
	path := filepath.Join(t.TempDir(), "again.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := New(Options{File: recording(t), Options: conn.Options{URL: url}, Speed: 1e6, DropHeaders: []string{"Cookie"}, Record: f})
	if err != nil {
		t.Fatal(err)
	}
	o := load.Options{Pacer: sc.Pacer()}
	o.Open, o.Concurrency, o.Duration = true, 4, time.Minute
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	log := readLog(t, path)
	if res.Requests != 60 || len(log) != 60 {
		t.Fatalf("sent %d, logged %d, want 60", res.Requests, len(log))
	}
	byStatus := map[int]int{}
	for _, q := range log {
		byStatus[q.Status]++
		for _, h := range q.Header {
			if strings.EqualFold(h[0], "cookie") || strings.EqualFold(h[0], "connection") {
				t.Fatalf("logged a dropped header: %+v", q)
			}
		}
	}
	if byStatus[404] != 15 || byStatus[200]+byStatus[201] != 45 {
		t.Fatalf("statuses logged: %v", byStatus)
	}
	again, n := replayCount(t, path)
	if n != 60 || len(again.targets) != 60 {
		t.Fatalf("the record replayed to %d requests, server saw %d, want 60", n, len(again.targets))
	}
}

// failingFile fails every write: a full disk.
type failingFile struct{ closed bool }

func (f *failingFile) Write([]byte) (int, error) { return 0, errors.New("disk full") }
func (f *failingFile) Close() error              { f.closed = true; return nil }

// TestRecordWriteErrorSurfacesAtClose: a log that cannot be written does
// not fail the run's requests; Close says so.
func TestRecordWriteErrorSurfacesAtClose(t *testing.T) {
	s := newSeen()
	ff := &failingFile{}
	sc, err := New(Options{File: recording(t), Options: conn.Options{URL: testServer(t, s)}, Speed: 1e6, Record: ff})
	if err != nil {
		t.Fatal(err)
	}
	o := load.Options{Pacer: sc.Pacer()}
	o.Open, o.Concurrency, o.Duration = true, 2, time.Minute
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 60 || res.Failed != 0 {
		t.Fatalf("%d requests, %d failed: the log's errors must not fail requests", res.Requests, res.Failed)
	}
	if err := sc.Close(); err == nil || !strings.Contains(err.Error(), "disk full") || !ff.closed {
		t.Fatalf("Close = %v (closed %v), want the write error", err, ff.closed)
	}
}
