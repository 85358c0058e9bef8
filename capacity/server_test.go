package capacity

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// TestRunServer: a search against a named server without a quota
// samples the server and records the machine; no quota is recorded or
// said.
func TestRunServer(t *testing.T) {
	// 3 ms of CPU a request: a step of 100 ms at 50/s costs the process
	// 15 ms, more than /proc's 10-ms tick, so the sample cannot read 0
	// (it did once with a free handler, in CI).
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for start := time.Now(); time.Since(start) < 3*time.Millisecond; {
		}
		w.Write([]byte("ok"))
	}))
	defer ts.Close()
	sc, err := load.NewRaw(load.RawOptions{Options: conn.Options{URL: ts.URL, Timeout: 5 * time.Second}, Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	slo, err := results.ParseThreshold("p99<5s")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{SLO: []results.Threshold{slo}, MinRate: 50, StartRate: 50, MaxRate: 100, Growth: 2, StepDuration: 100 * time.Millisecond,
		Warmup: 10 * time.Millisecond, ConfirmDuration: -1, Concurrency: 8}
	var base load.Options
	base.Timeout = 5 * time.Second
	var log bytes.Buffer
	res, err := RunServer(context.Background(), o, base, sc, os.Getpid(), -1, &log)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerQuota != nil || log.Len() > 0 || res.Env.NumCPU == 0 || len(res.Steps) == 0 {
		t.Fatalf("quota %v, log %q, env %v, %d steps", res.ServerQuota, log.String(), res.Env, len(res.Steps))
	}
	if res.ServerCPUPerRequest <= 0 {
		t.Errorf("server CPU per request %v: the named server was not sampled", res.ServerCPUPerRequest)
	}
}
