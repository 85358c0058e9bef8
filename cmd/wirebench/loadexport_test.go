package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/results"
)

// rwReceiver decodes remote-write requests as Prometheus does (snappy,
// prompb) and keeps what they carried. (export's own test runs against a
// real Prometheus; this one checks the CLI's wiring.)
type rwReceiver struct {
	mu        sync.Mutex
	pushes    int
	requests  float64 // the last wirebench_requests_total sample
	exemplars map[string]bool
}

func (rcv *rwReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	body, err := snappy.Decode(nil, raw)
	var req prompb.WriteRequest
	if err == nil {
		err = req.Unmarshal(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	rcv.pushes++
	for _, ts := range req.Timeseries {
		for _, l := range ts.Labels {
			if l.Name == "__name__" && l.Value == "wirebench_requests_total" && len(ts.Samples) > 0 {
				rcv.requests = ts.Samples[0].Value
			}
		}
		for _, e := range ts.Exemplars {
			rcv.exemplars[e.Labels[0].Value] = true
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// otlpRcv decodes OTLP/HTTP metrics pushes and keeps the last requests
// count and every exemplar's trace ID.
type otlpRcv struct {
	mu        sync.Mutex
	pushes    int
	requests  float64
	exemplars map[string]bool
}

func (rcv *otlpRcv) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var md metricspb.MetricsData
	if err := proto.Unmarshal(raw, &md); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	rcv.pushes++
	for _, rm := range md.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == "wirebench.requests" {
					rcv.requests = m.GetSum().DataPoints[0].GetAsDouble()
				}
				for _, p := range m.GetExponentialHistogram().GetDataPoints() {
					for _, e := range p.Exemplars {
						rcv.exemplars[hex.EncodeToString(e.TraceId)] = true
					}
				}
			}
		}
	}
}

// TestLoadPrometheusRW: load --prometheus-rw and --otlp push during the
// run and at the end; the last push counts exactly the requests --out
// counts, and the slowest requests — named in the summary and in --out
// by the trace IDs the server received — arrive as exemplars.
func TestLoadPrometheusRW(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	var seenMu sync.Mutex
	seen := map[string]bool{} // trace IDs the server received
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp := r.Header.Get("traceparent") // 00-<trace id>-<span id>-01
		if parts := strings.Split(tp, "-"); len(parts) == 4 {
			seenMu.Lock()
			seen[parts[1]] = true
			seenMu.Unlock()
		}
		if n.Add(1)%50 == 0 {
			time.Sleep(20 * time.Millisecond) // the slow ones
		}
	}))
	defer target.Close()
	rcv := &rwReceiver{exemplars: map[string]bool{}}
	prom := httptest.NewServer(rcv)
	defer prom.Close()
	orcv := &otlpRcv{exemplars: map[string]bool{}}
	otlp := httptest.NewServer(orcv)
	defer otlp.Close()

	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runLoadCLI(t, "load", "-q", "-c", "2", "-d", "2500ms", "--traceparent", "--slowest", "3",
		"--prometheus-rw", prom.URL+"/api/v1/write", "--otlp", otlp.URL+"/v1/metrics", "--export-interval", "1s", "--run-id", "t1", "--out", out, target.URL+"/")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res results.Load
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	orcv.mu.Lock()
	defer orcv.mu.Unlock()
	if orcv.pushes < 2 || orcv.requests != float64(res.Requests) {
		t.Errorf("OTLP: %d pushes, the last counts %v requests, --out %d", orcv.pushes, orcv.requests, res.Requests)
	}
	if rcv.pushes < 3 { // the first push's exemplars go in a request of their own
		t.Errorf("%d remote-write requests: want at least one push during the run, its exemplars, and the final", rcv.pushes)
	}
	if rcv.requests != float64(res.Requests) || res.Requests == 0 {
		t.Errorf("last push counts %v requests, --out %d", rcv.requests, res.Requests)
	}
	if res.Exemplars == nil || len(res.Exemplars.Slowest) != 3 {
		t.Fatalf("--out's slowest: %+v, want 3", res.Exemplars)
	}
	for _, e := range res.Exemplars.Slowest {
		switch {
		case e.Latency < 20*time.Millisecond:
			t.Errorf("slowest %s took %v: not a stalled request", e.TraceID, e.Latency)
		case !seen[e.TraceID]:
			t.Errorf("slowest %q: the server received no such trace ID", e.TraceID)
		case !rcv.exemplars[e.TraceID] || !orcv.exemplars[e.TraceID]:
			t.Errorf("slowest %s: not pushed as an exemplar (remote write %v, OTLP %v)", e.TraceID, rcv.exemplars[e.TraceID], orcv.exemplars[e.TraceID])
		case !strings.Contains(stdout, e.TraceID):
			t.Errorf("slowest %s: not in the summary:\n%s", e.TraceID, stdout)
		}
	}
	if !strings.Contains(stdout, "slowest: 3 requests") || !strings.Contains(stderr, `run="t1"`) {
		t.Errorf("summary or stderr lacks the slowest line or the export line:\n%s\n%s", stdout, stderr)
	}
}

// TestLoadExportUsage: export flags that would do nothing or cannot work
// are usage errors that say why.
func TestLoadExportUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--export-interval", "5s"}, "--export-interval applies with --prometheus-rw, --otlp or --metrics-addr"},
		{[]string{"--run-id", "x"}, "--run-id applies with --prometheus-rw, --otlp or --metrics-addr"},
		{[]string{"--otlp", "127.0.0.1:4318"}, "want http(s)://host:port/v1/metrics"},
		{[]string{"--prometheus-rw", "127.0.0.1:9090"}, "want http(s)://host:port/api/v1/write"},
		{[]string{"--prometheus-rw", "http://127.0.0.1:1/api/v1/write", "--export-interval", "10ms"}, "--export-interval 10ms: want 1s..1h0m0s"},
		{[]string{"--slowest", "1001"}, "--slowest 1001: want -1..1000"},
		{[]string{"--traceparent", "--scenario", "kv-get"}, "--traceparent applies to raw HTTP and the reference-API scenarios"},
	} {
		code, _, stderr := runLoadCLI(t, append(append([]string{"load", "-q", "-n", "1"}, tc.args...), "http://127.0.0.1:1/")...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d (want 2), stderr lacks %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// lockedBuffer is a buffer the CLI writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLoadMetricsAddr: with --metrics-addr 127.0.0.1:0 stderr names the
// endpoint, and a scrape during the run reads the run so far.
func TestLoadMetricsAddr(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()
	var stdout bytes.Buffer
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr},
			[]string{"load", "-q", "-c", "1", "-d", "3s", "--metrics-addr", "127.0.0.1:0", "--export-interval", "1s", "--run-id", "m1", target.URL + "/"})
	}()
	re := regexp.MustCompile(`metrics on (http://\S+/metrics)`)
	var scraped string
	deadline := time.Now().Add(2500 * time.Millisecond) // within the run
	for scraped == "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		m := re.FindStringSubmatch(stderr.String())
		if m == nil {
			continue
		}
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `wirebench_requests_total{run="m1",op="GET /"}`) {
			scraped = string(body)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if scraped == "" {
		t.Fatalf("no scrape during the run read wirebench_requests_total; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(scraped, "wirebench_request_duration_seconds_count{") {
		t.Errorf("the scrape lacks the latency histogram:\n%s", scraped)
	}
}
