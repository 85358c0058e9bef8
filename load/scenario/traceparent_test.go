package scenario_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/store"
)

// TestScenarioTraceparent: with Traceparent every REST request of a
// scenario carries a well-formed traceparent with a trace ID of its own
// (seen by a proxy in front of the reference server), and the run's
// slowest requests are named by IDs the server received — over HTTP/1.1
// and h2c.
func TestScenarioTraceparent(t *testing.T) {
	srv := startAPI(t, 20)
	backend, err := url.Parse("http://" + srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	for _, transport := range []string{conn.HTTP1, conn.H2C} {
		t.Run(transport, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			bad := 0
			proxy := httputil.NewSingleHostReverseProxy(backend)
			front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, _, _, err := traceparent.Parse(r.Header.Get(traceparent.Header))
				mu.Lock()
				if err != nil {
					bad++
				} else {
					seen[id.String()]++
				}
				mu.Unlock()
				proxy.ServeHTTP(w, r)
			}))
			var p http.Protocols
			p.SetHTTP1(true)
			p.SetUnencryptedHTTP2(true)
			front.Config.Protocols = &p
			front.Start()
			defer front.Close()

			sc, err := scenario.New(scenario.Options{Name: scenario.Get, Options: conn.Options{URL: front.URL, Transport: transport, Timeout: 5 * time.Second}, Traceparent: true})
			if err != nil {
				t.Fatal(err)
			}
			const n = 60
			res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}, Slowest: 5}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != n || res.Failed != 0 {
				t.Fatalf("%d requests, %d failed: %v", res.Requests, res.Failed, res.Failures)
			}
			mu.Lock()
			defer mu.Unlock()
			if bad > 0 {
				t.Errorf("%d requests without a well-formed traceparent", bad)
			}
			checkTraceIDs(t, seen, res)
		})
	}
}

// TestScenarioTraceparentGRPC: over gRPC the traceparent travels as call
// metadata, one trace ID per call, on the lean client and on grpc-go's;
// a grpc-go server's interceptor sees every one, and the run's slowest
// calls are named by IDs it received.
func TestScenarioTraceparentGRPC(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	bad := 0
	st := store.NewMemory(store.Options{})
	if err := st.Seed(20, 3); err != nil {
		t.Fatal(err)
	}
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		v := md.Get(traceparent.Header)
		mu.Lock()
		if len(v) != 1 {
			bad++
		} else if id, _, _, err := traceparent.Parse(v[0]); err != nil {
			bad++
		} else {
			seen[id.String()]++
		}
		mu.Unlock()
		return h(ctx, req)
	}
	gs := grpcapi.NewServer(st, grpc.UnaryInterceptor(record))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	for _, client := range []string{conn.ClientLean, conn.ClientStd} {
		t.Run(client, func(t *testing.T) {
			mu.Lock()
			clear(seen)
			bad = 0
			mu.Unlock()
			sc, err := scenario.New(scenario.Options{Name: scenario.Get, Options: conn.Options{URL: ln.Addr().String(), Transport: scenario.TransportGRPC, Client: client, Timeout: 5 * time.Second}, Traceparent: true})
			if err != nil {
				t.Fatal(err)
			}
			const n = 60
			res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}, Slowest: 5}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != n || res.Failed != 0 {
				t.Fatalf("%d requests, %d failed: %v", res.Requests, res.Failed, res.Failures)
			}
			mu.Lock()
			defer mu.Unlock()
			// The snapshot's List before the run sends none; every call
			// of the run sends its own.
			if got := len(seen); got != n {
				t.Errorf("%d distinct trace IDs received, want %d (one per call)", got, n)
			}
			checkTraceIDs(t, seen, res)
		})
	}
}

// checkTraceIDs: no trace ID was sent twice, and the run's 5 slowest
// requests are named by IDs the server received.
func checkTraceIDs(t *testing.T, seen map[string]int, res *results.Load) {
	t.Helper()
	for id, k := range seen {
		if k > 1 {
			t.Errorf("trace ID %s sent %d times", id, k)
		}
	}
	if res.Exemplars == nil || len(res.Exemplars.Slowest) != 5 {
		t.Fatalf("slowest: %+v, want 5", res.Exemplars)
	}
	for _, e := range res.Exemplars.Slowest {
		if seen[e.TraceID] != 1 {
			t.Errorf("slowest %q (%v): the server received no such trace ID", e.TraceID, e.Latency)
		}
	}
}
