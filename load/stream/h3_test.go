package stream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/server"
)

// The REST list kinds over HTTP/3 against the real server (serve
// --http3): every exchange checked as over HTTP/1.1 (checkStream: all
// items, in order, decoded), the server's own counters equal the run's
// (requests, and --conns QUIC connections), and the bytes by layer add up
// to the UDP payload exactly, the body split into message and envelope.
func TestStreamRESTOverH3(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
		H3: server.H3{Addr: "127.0.0.1:0"}, SeedUsers: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ran := 0
	for _, kind := range []string{RESTList, NDJSON, SSE} {
		t.Run(kind, func(t *testing.T) {
			ran++
			req0, conn0 := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_requests_total"), testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_connections_total")
			const n = 30
			res := runStream(t, Options{
				Kind:    kind,
				Options: conn.Options{URL: "https://" + srv.H3Addr(), Transport: conn.H3, Connections: 2, Insecure: true, Timeout: 10 * time.Second},
			}, n)
			checkStream(t, res, n, 40, kind != RESTList)
			if got := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_requests_total") - req0; got != n {
				t.Errorf("server answered %d requests over HTTP/3, the run counted %d", got, n)
			}
			if got := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_connections_total") - conn0; got != 2 {
				t.Errorf("%d QUIC connections, want 2 (--conns)", got)
			}
			s := res.Stream
			if s.In.QUIC == 0 || s.In.H3Frames == 0 || s.In.QPACK == 0 || s.Out.QPACK == 0 || res.Layers != nil {
				t.Errorf("layers in %+v out %+v (res.Layers %v)", s.In, s.Out, res.Layers)
			}
			if kind != RESTList && s.In.Envelope == 0 {
				t.Errorf("%s: no envelope bytes", kind)
			}
			for _, w := range res.Warnings { // the busy machine's CPU warning is not ours
				if strings.Contains(w, "by layer") {
					t.Errorf("warning: %s", w)
				}
			}
		})
	}
	if ran != 3 {
		t.Fatalf("%d kinds ran", ran)
	}
}

// Over h3 only the REST list kinds run, to https:// URLs, with their layers.
func TestStreamH3Refusals(t *testing.T) {
	for _, o := range []Options{
		{Kind: WebSocket, Options: conn.Options{URL: "https://127.0.0.1:1", Transport: conn.H3}},
		{Kind: NDJSON, Options: conn.Options{URL: "http://127.0.0.1:1", Transport: conn.H3}},
		{Kind: NDJSON, Options: conn.Options{URL: "https://127.0.0.1:1", Transport: "h2"}},
		{Kind: NDJSON, Options: conn.Options{URL: "https://127.0.0.1:1", Transport: conn.H3, NoLayers: true}}, // its split is the result
	} {
		if _, err := New(o); !errors.Is(err, load.ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", o, err)
		}
	}
}
