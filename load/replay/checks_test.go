package replay

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// replayRun replays recording(t) to url as fast as it goes, on tr.
func replayRun(t *testing.T, url, tr string) map[string]int64 {
	t.Helper()
	res := runReplay(t, Options{File: recording(t), Options: conn.Options{URL: url, Transport: tr, Timeout: 5 * time.Second}, Speed: 1e6})
	if res.Requests != 60 {
		t.Fatalf("%d requests, want 60", res.Requests)
	}
	if res.Failed != 60 {
		t.Fatalf("%d of 60 failed (%v): every request must", res.Failed, res.Failures)
	}
	return res.Failures
}

// TestReplayChecks: each of a replay's checks fails a request with its
// own reason, on both transports — a server that is not there, and one
// that answers every request in the wrong status class (the recording
// has 200s, 201s and 404s; the server answers 500). The named mutants
// in scripts/mutants/replay-checks.txt must each fail this test.
func TestReplayChecks(t *testing.T) {
	wrong := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	})}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	wrong.Protocols = &protos
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go wrong.Serve(ln)
	t.Cleanup(func() { wrong.Close() })
	refused := "http://" + testkit.RefusedAddr(t)
	for _, tr := range []string{conn.HTTP1, conn.H2C} {
		t.Run(tr, func(t *testing.T) {
			if f := replayRun(t, refused, tr); f["connection refused"] != 60 {
				t.Errorf("refused: failures %v, want 60 × connection refused", f)
			}
			f := replayRun(t, "http://"+ln.Addr().String(), tr)
			if f["status 5xx, recorded 2xx"] != 45 || f["status 5xx, recorded 4xx"] != 15 {
				t.Errorf("wrong class: failures %v, want 45 × status 5xx, recorded 2xx and 15 × … 4xx", f)
			}
		})
	}
}

// TestReplayAsFormatCheck: with AsFormat, a recorded body that is not the
// reference API's JSON for its route is not sent and fails with one
// reason, ErrAsFormat's (the recording's 15 POSTs of "body"); the rest are
// sent. A named mutant of each half of that check must fail this test.
func TestReplayAsFormatCheck(t *testing.T) {
	var got atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	res := runReplay(t, Options{File: recording(t), Options: conn.Options{URL: "http://" + ln.Addr().String(), Transport: conn.HTTP1, Timeout: 5 * time.Second}, Speed: 1e6, AsFormat: "cbor"})
	if res.Requests != 60 || res.Failures[ErrAsFormat.Error()] != 15 || got.Load() != 45 {
		t.Fatalf("%d requests, failures %v, %d reached the server: want 60, 15 × %q, 45", res.Requests, res.Failures, got.Load(), ErrAsFormat.Error())
	}
}

// runReplay replays o's recording open loop on its schedule (4 workers, a
// minute at most) and returns the run's result.
func runReplay(t *testing.T, o Options) *results.Load {
	t.Helper()
	sc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	lo := load.Options{Pacer: sc.Pacer()}
	lo.Open, lo.Concurrency, lo.Duration = true, 4, time.Minute
	res, err := load.Run(context.Background(), lo, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
