package export

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// spreadServer answers the k-th request after (k mod 200) × 50 µs, so
// latencies spread over 0–10 ms and the p99 is well inside the range,
// and fails every 37th with a 503, so failures are counted too.
func spreadServer(t *testing.T) *httptest.Server {
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		time.Sleep(time.Duration(k%200) * 50 * time.Microsecond)
		if k%37 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// runSegments runs a two-segment test in this process, each segment
// exporting live (every second) and at its end to its own sinks, and
// returns the segments' results.
func runSegments(t *testing.T, url, runID string, sinks func() []Sink) []*results.Load {
	t.Helper()
	out := make([]*results.Load, 2)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			seg := results.Segment{I: i + 1, N: 2}
			exp, err := New(Options{RunID: runID, Segment: seg.String()}, sinks()...)
			if err != nil {
				t.Error(err)
				return
			}
			sc, err := load.NewRaw(load.RawOptions{Options: conn.Options{URL: url, Timeout: 5 * time.Second}, Traceparent: true})
			if err != nil {
				t.Error(err)
				return
			}
			o := load.Options{Options: results.Options{Concurrency: 4, Duration: 2 * time.Second, Segment: seg},
				Snapshot: exp.Offer, SnapshotEvery: time.Second}
			res, err := load.Run(context.Background(), o, sc)
			if err != nil {
				t.Error(err)
				return
			}
			if err := exp.Close(context.Background(), res); err != nil {
				t.Error(err)
			}
			if st := exp.Stats(); st.Sent < 2 {
				t.Errorf("segment %s: %d snapshots sent, want the live ones and the final", seg, st.Sent)
			}
			out[i] = res
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// TestPrometheusP99IsTheRunsP99: a real Prometheus receives both
// segments' remote writes; histogram_quantile over the sum of their
// native histograms is the merged run's p99 within the export's bucket
// precision, the request counters add up to the run's, and the slowest
// requests' trace IDs are among the stored exemplars.
func TestPrometheusP99IsTheRunsP99(t *testing.T) {
	prom := startPrometheus(t, "")
	ts := spreadServer(t)
	runID := NewRunID()
	segs := runSegments(t, ts.URL, runID, func() []Sink {
		rw, err := NewRemoteWrite(prom.writeURL())
		if err != nil {
			t.Fatal(err)
		}
		return []Sink{rw}
	})
	merged, err := results.Merge(segs...)
	if err != nil {
		t.Fatal(err)
	}
	at := merged.End.Add(time.Second)
	sel := `{run="` + runID + `"}`
	n := float64(merged.Latency.Count())
	for _, q := range []float64{0.5, 0.9, 0.99} {
		got := prom.query(t, "histogram_quantile("+ftoa(q)+", sum(wirebench_request_duration_seconds"+sel+"))", at)
		// The run takes the request of rank round(q·n) (HdrHistogram's
		// convention), Prometheus the first of rank ≥ q·n, so in a sparse
		// tail it may take the next request: the bound is the run's value
		// at q and at the next rank, widened by one bucket either way
		// (Prometheus interpolates inside the bucket that holds the rank).
		lo, hi := merged.Latency.Quantile(q).Seconds(), merged.Latency.Quantile(min(q+1/n, 1)).Seconds()
		rel := math.Abs(got-lo) / lo
		t.Logf("p%g: prometheus %.6fs, run %.6fs (next request %.6fs), off by %.3f%% (one bucket: %.3f%%)", q*100, got, lo, hi, rel*100, MaxQuantileError*100)
		if got < lo/(1+2*MaxQuantileError) || got > hi*(1+2*MaxQuantileError) {
			t.Errorf("p%g: prometheus says %v, the run %v (next request %v)", q*100, got, lo, hi)
		}
	}
	// Prometheus 2.x has no _count series for a native histogram: histogram_count.
	if got := prom.query(t, "histogram_count(sum(wirebench_request_duration_seconds"+sel+"))", at); got != float64(merged.Requests) {
		t.Errorf("histogram count: prometheus %v, run %d", got, merged.Requests)
	}
	if len(merged.Failures) == 0 {
		t.Fatal("the server failed no request: the failure counters go untested")
	}
	for reason, n := range merged.Failures {
		q := `sum(wirebench_request_failures_total{run="` + runID + `",reason="` + reason + `"})`
		if got := prom.query(t, q, at); got != float64(n) {
			t.Errorf("failures %q: prometheus %v, run %d", reason, got, n)
		}
	}
	for status, n := range merged.Status {
		q := `sum(wirebench_responses_total{run="` + runID + `",status="` + status + `"})`
		if got := prom.query(t, q, at); got != float64(n) {
			t.Errorf("responses %q: prometheus %v, run %d", status, got, n)
		}
	}
	cpu := prom.query(t, "sum(wirebench_client_cpu_seconds_total"+sel+")", at)
	if want := (merged.CPU.User + merged.CPU.System).Seconds(); math.Abs(cpu-want) > 1e-6 {
		t.Errorf("client CPU: prometheus %v, run %v", cpu, want)
	}
	ids := prom.exemplars(t, "wirebench_request_duration_seconds"+sel, merged.Start, at)
	if len(merged.Exemplars.Slowest) == 0 {
		t.Fatal("the run kept no slowest requests")
	}
	for _, e := range merged.Exemplars.Slowest {
		if e.TraceID == "" || !slices.Contains(ids, e.TraceID) {
			t.Errorf("slow request %q (%v, ended %v after the start) not among prometheus's %d exemplars", e.TraceID, e.Latency, e.Start.Add(e.Latency).Sub(merged.Start), len(ids))
		}
	}
}

func ftoa(f float64) string { return strconvFormat(f) }

// TestPrometheusScrapesTheRun: a real Prometheus scrapes the Scrape
// sink every second during a run; once it has scraped the final
// snapshot, PromQL gives exactly the run's requests, histogram count and
// failures, and its quantiles within the bound of the push test.
func TestPrometheusScrapesTheRun(t *testing.T) {
	sc := &Scrape{}
	ln := testkit.Listen(t)
	srv := &http.Server{Handler: sc, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	prom := startPrometheus(t, ln.Addr().String())
	ts := spreadServer(t)
	runID := NewRunID()
	exp, err := New(Options{RunID: runID}, sc)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := load.NewRaw(load.RawOptions{Options: conn.Options{URL: ts.URL, Timeout: 5 * time.Second}, Traceparent: true})
	if err != nil {
		t.Fatal(err)
	}
	o := load.Options{Options: results.Options{Concurrency: 4, Duration: 2 * time.Second}, Snapshot: exp.Offer, SnapshotEvery: time.Second}
	res, err := load.Run(context.Background(), o, sl)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Close(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	sel := `{run="` + runID + `"}`
	// Wait for a scrape of the final snapshot (every second; generous on a busy machine).
	deadline := time.Now().Add(20 * time.Second)
	for prom.query(t, "count(wirebench_requests_total"+sel+") or vector(0)", time.Now()) == 0 ||
		prom.query(t, "sum(wirebench_requests_total"+sel+")", time.Now()) != float64(res.Requests) {
		if time.Now().After(deadline) {
			t.Fatalf("prometheus has not scraped the final %d requests in 20 s", res.Requests)
		}
		time.Sleep(200 * time.Millisecond)
	}
	at := time.Now()
	if got := prom.query(t, "histogram_count(sum(wirebench_request_duration_seconds"+sel+"))", at); got != float64(res.Requests) {
		t.Errorf("histogram count: prometheus %v, run %d", got, res.Requests)
	}
	for reason, n := range res.Failures {
		q := `sum(wirebench_request_failures_total{run="` + runID + `",reason="` + reason + `"})`
		if got := prom.query(t, q, at); got != float64(n) {
			t.Errorf("failures %q: prometheus %v, run %d", reason, got, n)
		}
	}
	n := float64(res.Latency.Count())
	for _, q := range []float64{0.5, 0.99} {
		got := prom.query(t, "histogram_quantile("+ftoa(q)+", sum(wirebench_request_duration_seconds"+sel+"))", at)
		lo, hi := res.Latency.Quantile(q).Seconds(), res.Latency.Quantile(min(q+1/n, 1)).Seconds()
		t.Logf("p%g: prometheus %.6fs, run %.6fs (next request %.6fs)", q*100, got, lo, hi)
		if got < lo/(1+2*MaxQuantileError) || got > hi*(1+2*MaxQuantileError) {
			t.Errorf("p%g: prometheus says %v, the run %v (next request %v)", q*100, got, lo, hi)
		}
	}
}
