package stream

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// runStream runs kind for a fixed number of exchanges on 2 VUs.
func runStream(t *testing.T, o Options, exchanges int64) *results.Load {
	t.Helper()
	sc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.(*streamScenario).Close()
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 2, Requests: exchanges}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkStream checks what every stream kind must deliver: all exchanges
// succeeded with the items expected, the histograms are filled, and the
// layer split is exact: its sum is the socket's bytes, its Message layer
// the payload bytes the client decoded.
func checkStream(t *testing.T, res *results.Load, exchanges int64, itemsPer int, perMessage bool) {
	t.Helper()
	s := res.Stream
	if res.Failed != 0 || res.Requests != exchanges || s == nil {
		t.Fatalf("%d of %d failed (%v); stream %+v", res.Failed, res.Requests, res.Failures, s)
	}
	if s.Exchanges != exchanges || s.Items != exchanges*int64(itemsPer) {
		t.Errorf("%s: %d exchanges, %d items; want %d and %d", s.Kind, s.Exchanges, s.Items, exchanges, exchanges*int64(itemsPer))
	}
	if s.First.Count() != exchanges || s.Last.Count() != exchanges || s.Last.Quantile(0.5) < s.First.Quantile(0.5) {
		t.Errorf("%s: first %d/%v, last %d/%v", s.Kind, s.First.Count(), s.First.Quantile(0.5), s.Last.Count(), s.Last.Quantile(0.5))
	}
	if perMessage && s.PerMessage.Count() == 0 {
		t.Errorf("%s: no per-message latencies", s.Kind)
	}
	if s.In.Total() != res.Bytes.WireIn || s.Out.Total() != res.Bytes.WireOut {
		t.Errorf("%s: layers sum to %d in, %d out; the socket saw %d, %d (in %+v out %+v)", s.Kind,
			s.In.Total(), s.Out.Total(), res.Bytes.WireIn, res.Bytes.WireOut, s.In, s.Out)
	}
	payload := s.In.Message // a gRPC, Connect or WebSocket message
	switch s.Kind {
	case RESTList, NDJSON, SSE: // the HTTP body, its framing included
		payload += s.In.Envelope
	}
	if payload != res.Bytes.BodyIn || s.In.Other+s.Out.Other != 0 {
		t.Errorf("%s: message layer %d, decoded payload %d (in %+v out %+v)", s.Kind, s.In.Message, res.Bytes.BodyIn, s.In, s.Out)
	}
}

func TestStreamGRPCKinds(t *testing.T) {
	rest, grpcAddr := loadtest.StartServer(t, 300)
	for _, c := range []struct {
		kind       string
		items      int
		perMessage bool
	}{
		{GRPCServer, 300, true},
		{GRPCBidi, 20, true},
		{GRPCGet, 1, false},
		{GRPCGetNewConn, 1, false},
		{RESTList, 300, false},
		{NDJSON, 300, true},
		{SSE, 300, true},
		{WebSocket, 20, true},
		{ConnectGet, 1, false},
		{ConnectSrv, 300, true},
		{GRPCWebGet, 1, false},
		{GRPCWebSrv, 300, true},
		{TunnelGet, 1, false},
		{TunnelSrv, 300, true},
	} {
		t.Run(c.kind, func(t *testing.T) {
			res := runStream(t, Options{Kind: c.kind, Options: conn.Options{URL: rest}, GRPC: grpcAddr, Messages: 20}, 6)
			checkStream(t, res, 6, c.items, c.perMessage)
			if c.kind == GRPCServer && res.Stream.In.Envelope != 6*300*5 {
				t.Errorf("gRPC prefixes: %d bytes, want 5 per user", res.Stream.In.Envelope)
			}
		})
	}
}

func TestStreamGRPCClientStream(t *testing.T) {
	rest, grpcAddr := loadtest.StartServer(t, 10)
	res := runStream(t, Options{Kind: GRPCClient, Options: conn.Options{URL: rest}, GRPC: grpcAddr, Messages: 50}, 4)
	s := res.Stream
	if res.Failed != 0 || s.Items != 200 || s.Out.Message != res.Bytes.BodyOut || s.Out.Envelope < 200*5 {
		t.Fatalf("failed %d (%v), items %d, out %+v, body out %d", res.Failed, res.Failures, s.Items, s.Out, res.Bytes.BodyOut)
	}
}

func TestStreamOptionsRefused(t *testing.T) {
	for _, o := range []Options{
		{Kind: "nope", Options: conn.Options{URL: "http://127.0.0.1:1"}},
		{Kind: GRPCServer, Options: conn.Options{URL: "http://127.0.0.1:1"}},
		{Kind: NDJSON},
		{Kind: NDJSON, Options: conn.Options{URL: "::"}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
}

func TestWriteStreamSummary(t *testing.T) {
	rest, grpcAddr := loadtest.StartServer(t, 50)
	res := runStream(t, Options{Kind: GRPCServer, Options: conn.Options{URL: rest}, GRPC: grpcAddr}, 2)
	var b strings.Builder
	if err := results.WriteStreamSummary(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 exchanges, 100 items", "first item:", "per message:", "HTTP/2 frames", "envelope", "total"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := results.WriteStreamSummary(&b, &results.Load{}); err != nil || b.Len() != 0 {
		t.Errorf("a run without streams printed %q", b.String())
	}
}

// TestMergeStreamSegments: a stream run split in segments, each written
// to its result file as separate processes would, merges into one whose
// stream section holds every exchange, item and byte; results whose
// sections differ are refused rather than summed partly.
func TestMergeStreamSegments(t *testing.T) {
	rest, grpcAddr := loadtest.StartServer(t, 300)
	var parts []*results.Load
	for i := 1; i <= 3; i++ {
		sc, err := New(Options{Kind: NDJSON, Options: conn.Options{URL: rest}, GRPC: grpcAddr})
		if err != nil {
			t.Fatal(err)
		}
		res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: 9, Segment: results.Segment{I: i, N: 3}}}, sc)
		sc.(*streamScenario).Close()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, throughFile(t, res))
	}
	m, err := results.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, m, 9, 300, true)
	if n := parts[0].Stream.PerMessage.Count() + parts[1].Stream.PerMessage.Count() + parts[2].Stream.PerMessage.Count(); m.Stream.PerMessage.Count() != n {
		t.Errorf("merged %d per-message latencies of %d", m.Stream.PerMessage.Count(), n)
	}

	other := *parts[1]
	other.Stream = nil
	if _, err := results.Merge(parts[0], &other); err == nil || !strings.Contains(err.Error(), "stream section") {
		t.Errorf("a segment without its stream section merged: %v", err)
	}
	kind := *parts[1].Stream
	kind.Kind = SSE
	other.Stream = &kind
	if _, err := results.Merge(parts[0], &other); err == nil || !strings.Contains(err.Error(), "stream kind") {
		t.Errorf("two stream kinds merged: %v", err)
	}
}

// TestStreamLineLimit: an NDJSON record over maxStreamLine fails the
// exchange rather than growing the client's buffer.
func TestStreamLineLimit(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprintf(w, "{\"id\":1,\"email\":\"%s\"}\n", strings.Repeat("x", maxStreamLine))
	}))
	t.Cleanup(ts.Close)
	sc, err := New(Options{Kind: NDJSON, Options: conn.Options{URL: strings.TrimSuffix(ts.URL, "/")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 1}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 {
		t.Fatalf("a %d-byte record: %d failed (%v)", maxStreamLine, res.Failed, res.Failures)
	}
	t.Log(res.Failures)
}

// throughFile writes r as a result file and reads it back, as merge
// reads the files of separate processes.
func throughFile(t *testing.T, r *results.Load) *results.Load {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadLoad(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
