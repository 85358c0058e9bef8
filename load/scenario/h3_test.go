package scenario_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// TestAPIScenariosOverH3 runs every scenario in every format over HTTP/3
// against the real server (serve --http3): exactly -n requests, none
// failed, the server's HTTP/3 count = the run's plus what is not part of
// it (the dataset snapshot, the VUs' cleanup), one timed handshake per
// connection, and the dataset the same size afterwards.
func TestAPIScenariosOverH3(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
		H3: server.H3{Addr: "127.0.0.1:0"}, SeedUsers: 20, SeedTodos: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ran := 0
	for _, f := range codec.Formats() {
		for _, name := range []string{scenario.CRUD, scenario.Echo, scenario.Get, scenario.List, scenario.Create} {
			t.Run(fmt.Sprintf("%s/%s", f, name), func(t *testing.T) {
				ran++
				before := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_requests_total")
				sc, err := scenario.New(scenario.Options{
					Name:    name,
					Options: conn.Options{URL: "https://" + srv.H3Addr(), Transport: conn.H3, Connections: 2, Insecure: true, Timeout: 5 * time.Second},
					Format:  f,
				})
				if err != nil {
					t.Fatal(err)
				}
				const n = 60
				r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, sc)
				if err != nil {
					t.Fatal(err)
				}
				if r.Requests != n || r.Failed != 0 {
					t.Fatalf("%d requests, %d failed: %v", r.Requests, r.Failed, r.Failures)
				}
				// Beside the run: the snapshot (not for echo), and for crud
				// and create each VU's closing delete of a user its
				// unfinished iteration created (up to one per VU).
				extra, cleanup := int64(1), int64(0)
				switch name {
				case scenario.Echo:
					extra = 0
				case scenario.CRUD, scenario.Create:
					cleanup = 3
				}
				if got := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_requests_total") - before; got < n+extra || got > n+extra+cleanup {
					t.Errorf("server answered %d over HTTP/3, want %d (+%d snapshot, +0..%d cleanup)", got, n, extra, cleanup)
				}
				if hs := sc.(interface{ H3Handshakes() []time.Duration }).H3Handshakes(); len(hs) != 2 {
					t.Errorf("handshakes %v, want 2", hs)
				}
				if r.Bytes.BodyIn == 0 || r.Bytes.WireIn <= r.Bytes.BodyIn {
					t.Errorf("bytes %+v: wire must exceed body", r.Bytes)
				}
				if u, _ := srv.Store.Len(); u != 20 {
					t.Errorf("dataset has %d users after the run, want 20", u)
				}
			})
		}
	}
	if ran != len(codec.Formats())*5 {
		t.Fatalf("ran %d cases", ran)
	}
}

// Over h3 the URL is https://, and anything else is refused.
func TestH3ScenarioURL(t *testing.T) {
	for _, o := range []scenario.Options{
		{Name: scenario.Get, Options: conn.Options{URL: "http://127.0.0.1:1", Transport: conn.H3}},
		{Name: scenario.Get, Options: conn.Options{URL: "https://127.0.0.1:1", Transport: conn.H2C}},
	} {
		if _, err := scenario.New(o); err == nil {
			t.Errorf("%s over %s: accepted", o.URL, o.Transport)
		}
	}
}
