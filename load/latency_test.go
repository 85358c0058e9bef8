package load

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// TestFixedDelayP50: against a server that answers in 20 ms, p50 lies in
// [20 ms, 26 ms]. Not parallel: the timing is the point.
//
// The bounds: no response can arrive before its 20 ms sleep ends, so a p50
// below 20 ms means the clock started late — a hard bound. Above, the
// median of 200 requests moves only if more than half of them are late;
// on a shared 2-CPU machine a sleeping goroutine's wake-up is late by
// 1-2 ms at most often enough to matter, so 6 ms (30%) is slack that never
// flakes yet still catches a latency counted over two exchanges (40 ms)
// or including the server's sleep twice.
func TestFixedDelayP50(t *testing.T) {
	ts := loadtest.StartHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		loadtest.OK(w, r)
	})
	res := runRaw(t, Options{Options: results.Options{Concurrency: 4, Requests: 200}}, RawOptions{Options: conn.Options{URL: ts.URL}})
	p50 := res.Latency.Quantile(0.5)
	// Never under the server's 20 ms; how little above it is the machine's
	// business (26.2 ms under a CPU hog): a timing check.
	if p50 < 20*time.Millisecond || (testkit.Timing() && p50 > 26*time.Millisecond) {
		t.Errorf("p50 = %v, want [20ms, 26ms]", p50)
	}
	if res.Latency.Count() != 200 {
		t.Errorf("%d latencies recorded, want 200", res.Latency.Count())
	}
}

// stallServer answers at once except that, once every period, the whole
// server stalls for stall: every request arriving in that window waits
// until it ends (a GC pause, a fsync, a lock).
func stallServer(t *testing.T, period, stall time.Duration) *loadtest.HTTPServer {
	var mu sync.Mutex
	start := time.Now()
	return loadtest.StartHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		since := time.Since(start)
		mu.Unlock()
		// Stalls occupy [k·period + period/2, k·period + period/2 + stall).
		phase := (since + period/2) % period
		if phase < stall {
			time.Sleep(stall - phase)
		}
		loadtest.OK(w, r)
	})
}

// TestCoordinatedOmission: open loop at a fixed rate against a server
// stalling 500 ms every 2 s. A quarter of the intended sends fall inside a
// stall, so the corrected p99 shows it; only the one request in flight per
// connection sees it in its service time, so the service-time p99 does not.
func TestCoordinatedOmission(t *testing.T) {
	testkit.NeedTiming(t) // percentiles of a 4 s run against a stalling server
	ts := stallServer(t, 2*time.Second, 500*time.Millisecond)
	res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Rate: 1000, Duration: 4 * time.Second}}, RawOptions{Options: conn.Options{URL: ts.URL}})
	if res.Requests < 3500 {
		t.Fatalf("only %d requests", res.Requests)
	}
	lat, svc := res.Latency.Quantile(0.99), res.Service.Quantile(0.99)
	if lat < 400*time.Millisecond {
		t.Errorf("corrected p99 = %v, want the 500ms stall to show (>= 400ms)", lat)
	}
	if svc > 50*time.Millisecond {
		t.Errorf("service p99 = %v, want well below the stall (< 50ms)", svc)
	}
	if res.Service.Max() < 400*time.Millisecond {
		t.Errorf("service max = %v: the stalled request itself must be there", res.Service.Max())
	}
	if res.Lag.Count() != res.Requests || res.Lag.Quantile(0.99) < 300*time.Millisecond {
		t.Errorf("lag: %d values, p99 %v; want one per request and the stall's backlog", res.Lag.Count(), res.Lag.Quantile(0.99))
	}
	t.Logf("requests %d corrected p99 %v service p99 %v lag p99 %v", res.Requests, lat, svc, res.Lag.Quantile(0.99))
}

// TestClientLagExcludesWaitForWorker: open loop at twice what two workers
// can carry against a 10 ms server: arrivals wait for a free worker, so
// the schedule lag grows to hundreds of ms, but the client's own lag (from
// when a worker was free) stays small — a slow server is not the client
// sending late. One ClientLag value per paced send.
func TestClientLagExcludesWaitForWorker(t *testing.T) {
	ts := loadtest.StartHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		loadtest.OK(w, r)
	})
	res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Rate: 400, Duration: time.Second}}, RawOptions{Options: conn.Options{URL: ts.URL}})
	lag, own := res.Lag.Quantile(0.99), res.ClientLag.Quantile(0.99)
	if res.ClientLag.Count() != res.Lag.Count() || res.Lag.Count() == 0 {
		t.Fatalf("%d client lags for %d lags", res.ClientLag.Count(), res.Lag.Count())
	}
	if lag < 200*time.Millisecond || own > lag/5 {
		t.Errorf("lag p99 %v, the client's own %v: want the wait for a worker (>= 200ms) in the first only", lag, own)
	}
	t.Logf("lag p99 %v, client's own p99 %v over %d sends", lag, own, res.Lag.Count())
}

// TestServerKilled: a server that dies mid-run gives failures in the
// result and a bounded run, never a hang.
func TestServerKilled(t *testing.T) {
	// The kill waits for answers, not a clock: under a CPU hog the client
	// once sent nothing in the first 200 ms and every request was refused.
	var served atomic.Int64
	ts := loadtest.StartHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		loadtest.OK(w, r)
	})
	go func() {
		for i := 0; i < 3000 && served.Load() < 20; i++ {
			time.Sleep(time.Millisecond)
		}
		ts.Srv.Close() // closes the listener and every connection
	}()
	start := time.Now()
	res := runRaw(t, Options{Options: results.Options{Concurrency: 4, Duration: 4 * time.Second, Timeout: time.Second}}, RawOptions{Options: conn.Options{URL: ts.URL}})
	if el := time.Since(start); testkit.Timing() && el > 5*time.Second {
		t.Errorf("run took %v after the server died", el)
	}
	if res.Requests == res.Failed || res.Failed == 0 {
		t.Errorf("%d requests, %d failed: want successes before the kill and failures after", res.Requests, res.Failed)
	}
	if len(res.Failures) == 0 {
		t.Error("no failure reasons recorded")
	}
	t.Logf("failures: %v", res.Failures)
}
