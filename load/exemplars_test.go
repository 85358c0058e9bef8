package load

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/results"
)

// tracedStallServer answers every request at once but every stallEvery-th,
// which it holds for stall; it logs, as a server's access log would, the
// traceparent each request carried and its peer's port.
type tracedStallServer struct {
	stallEvery int64
	stall      time.Duration
	n          atomic.Int64
	mu         sync.Mutex
	seen       map[string]int // trace ID → peer port, every request
	stalled    []string       // trace IDs of the stalled requests
	bad        []string       // traceparent values that did not parse
}

func (s *tracedStallServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, _, flags, err := traceparent.Parse(r.Header.Get(traceparent.Header))
	_, port, _ := net.SplitHostPort(r.RemoteAddr)
	p, _ := strconv.Atoi(port)
	k := s.n.Add(1)
	s.mu.Lock()
	switch {
	case err != nil || flags&1 == 0:
		s.bad = append(s.bad, r.Header.Get(traceparent.Header))
	default:
		if _, dup := s.seen[id.String()]; dup {
			s.bad = append(s.bad, "repeated "+id.String())
		}
		s.seen[id.String()] = p
	}
	stall := k%s.stallEvery == 0
	if stall {
		s.stalled = append(s.stalled, id.String())
	}
	s.mu.Unlock()
	if stall {
		time.Sleep(s.stall)
	}
	w.Write([]byte("ok"))
}

// TestSlowestAreTheStalledRequests: the run names as its slowest exactly
// the requests the server held, by the trace IDs the server received, on
// the connections the server saw them on — for every HTTP client.
func TestSlowestAreTheStalledRequests(t *testing.T) {
	for _, tc := range []struct{ client, transport string }{
		{conn.ClientLean, conn.HTTP1}, {conn.ClientStd, conn.HTTP1}, {conn.ClientLean, conn.H2C},
	} {
		t.Run(tc.client+" "+tc.transport, func(t *testing.T) {
			// The stall is long beside anything a busy machine adds to an
			// unstalled request: at 150 ms, two of them were slower than a
			// stalled one at load average 31, and the slowest-8 check failed.
			srv := &tracedStallServer{stallEvery: 25, stall: 750 * time.Millisecond, seen: map[string]int{}}
			ts := httptest.NewUnstartedServer(srv)
			var p http.Protocols
			p.SetHTTP1(true)
			p.SetUnencryptedHTTP2(true)
			ts.Config.Protocols = &p
			ts.Start()
			defer ts.Close()
			const n, want = 200, 8 // 200 requests, every 25th stalled
			res := runRaw(t, Options{Options: results.Options{Concurrency: 4, Requests: n}, Slowest: want},
				RawOptions{Options: conn.Options{URL: ts.URL + "/", Client: tc.client, Transport: tc.transport}, Traceparent: true})
			if res.Requests != n || res.Failed != 0 {
				t.Fatalf("%d requests, %d failed: %v", res.Requests, res.Failed, res.Failures)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.bad) > 0 || len(srv.seen) != n {
				t.Fatalf("server saw %d distinct trace IDs of %d requests; bad: %q", len(srv.seen), n, srv.bad)
			}
			if res.Exemplars == nil || len(res.Exemplars.Slowest) != want {
				t.Fatalf("exemplars %+v, want %d slowest", res.Exemplars, want)
			}
			var got []string
			for i, e := range res.Exemplars.Slowest {
				got = append(got, e.TraceID)
				if e.Latency < srv.stall || e.Status != "200" || e.Start.IsZero() || e.Op != "GET /" {
					t.Errorf("slowest %d: %+v", i, e)
				}
				if i > 0 && e.Latency > res.Exemplars.Slowest[i-1].Latency {
					t.Errorf("slowest %d is slower than %d", i, i-1)
				}
				if tc.client == conn.ClientLean && tc.transport == conn.HTTP1 && e.Conn != srv.seen[e.TraceID] {
					t.Errorf("slowest %d: conn %d, the server saw port %d", i, e.Conn, srv.seen[e.TraceID])
				}
			}
			slices.Sort(got)
			stalled := slices.Sorted(slices.Values(srv.stalled))
			if !slices.Equal(got, stalled) {
				t.Fatalf("slowest trace IDs\n%q\nthe server stalled\n%q", got, stalled)
			}
			// The buckets hold requests of both speeds, each one the server saw.
			var fast, slow int
			for _, e := range res.Exemplars.Buckets {
				if _, ok := srv.seen[e.TraceID]; !ok {
					t.Errorf("bucket exemplar %s: the server never saw it", e.TraceID)
				}
				if e.Latency >= srv.stall {
					slow++
				} else {
					fast++
				}
			}
			if fast == 0 || slow == 0 {
				t.Errorf("bucket exemplars: %d fast, %d slow: %+v", fast, slow, res.Exemplars.Buckets)
			}
		})
	}
}

// TestNoTraceparentByDefault: without Traceparent no header is sent, and
// the exemplars have no trace IDs; Slowest < 0 keeps none.
func TestNoTraceparentByDefault(t *testing.T) {
	var with atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(traceparent.Header) != "" {
			with.Add(1)
		}
	}))
	defer ts.Close()
	res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 50}}, RawOptions{Options: conn.Options{URL: ts.URL}})
	if with.Load() != 0 || res.Exemplars == nil || len(res.Exemplars.Slowest) != DefaultSlowest || res.Exemplars.Slowest[0].TraceID != "" {
		t.Fatalf("%d requests with traceparent; exemplars %+v", with.Load(), res.Exemplars)
	}
	res = runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 50}, Slowest: -1}, RawOptions{Options: conn.Options{URL: ts.URL}})
	if res.Exemplars != nil {
		t.Fatalf("Slowest -1 kept %+v", res.Exemplars)
	}
	if _, err := NewRaw(RawOptions{Options: conn.Options{URL: ts.URL}, Traceparent: true, Header: []string{"TraceParent: x"}}); err == nil {
		t.Fatal("a traceparent header with Traceparent: no error")
	}
}

// TestKeeperAllocatesNothing: keeping a request, slow or not, allocates
// nothing (it runs on every request).
func TestKeeperAllocatesNothing(t *testing.T) {
	k := newKeeper(10)
	o := &Outcome{Status: 200}
	now := time.Now()
	var i int64
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		k.keep(o, now, time.Duration(i*7919%100000)*time.Microsecond)
	})
	if allocs != 0 {
		t.Fatalf("keep allocates %v", allocs)
	}
	e := k.exemplars([]string{"op"})
	if len(e.Slowest) != 10 {
		t.Fatalf("%d slowest", len(e.Slowest))
	}
}

// TestExemplarKeepsTheFailure: a slow request that failed is named with
// its status and why it failed, among the slowest and in its bucket.
func TestExemplarKeepsTheFailure(t *testing.T) {
	k := newKeeper(2)
	k.keep(&Outcome{Status: 200}, time.Unix(1, 0), time.Millisecond)
	k.keep(&Outcome{Status: 503, Fail: "status 503"}, time.Unix(2, 0), time.Second)
	e := results.MergeExemplars(2, k.exemplars([]string{"GET /"})) // sorted, as Run merges them
	if len(e.Slowest) != 2 || e.Slowest[0].Fail != "status 503" || e.Slowest[0].Status != "503" || e.Slowest[1].Fail != "" {
		t.Errorf("slowest %+v: want the failed one first, with its status and reason", e.Slowest)
	}
	failed := 0
	for _, b := range e.Buckets {
		if b.Fail == "status 503" {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("buckets %+v: want the failed request, with its reason, once", e.Buckets)
	}
}
