package study

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// TestGRPCVsRESTDefinition pins the seed's table: every row the issue
// asks for is a cell, with the clients it needs.
func TestGRPCVsRESTDefinition(t *testing.T) {
	def, err := Lookup("grpc-vs-rest")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(def); err != nil {
		t.Fatal(err)
	}
	groups := map[string][]string{}
	kinds := map[string]bool{}
	for _, c := range def.Cells {
		groups[c.Group] = append(groups[c.Group], c.Label)
		if s := c.Load.Stream; s != nil {
			kinds[s.Kind] = true
		}
		if b := c.Load.Browser; b != nil {
			kinds["browser "+b.Kind] = true
		}
	}
	wantGroups := []string{"CRUD c=1", "CRUD c=50", "list of 10", "list of 100", "list of 1000", "stream of 1000", "bidi 100",
		"connection reuse", "unary transports"}
	wantKinds := []string{stream.RESTList, stream.NDJSON, stream.SSE, stream.GRPCServer, stream.GRPCBidi,
		stream.WebSocket, stream.GRPCGetNewConn, stream.TunnelGet, stream.TunnelSrv, stream.ConnectGet,
		stream.GRPCWebGet}
	if _, err := browser.FindChromium(""); err == nil {
		wantGroups = append(wantGroups, "in browser: get user", "in browser: stream of 1000")
		wantKinds = append(wantKinds, "browser fetch-json", "browser connect", "browser grpc-web", "browser ws-tunnel")
	} else if len(def.Warnings) == 0 {
		t.Errorf("no chromium, and no warning that the browser cells are left out")
	}
	for _, g := range wantGroups {
		if len(groups[g]) < 2 {
			t.Errorf("group %q: %v", g, groups[g])
		}
	}
	for _, k := range wantKinds {
		if !kinds[k] {
			t.Errorf("no cell runs %s", k)
		}
	}
	if !strings.Contains(strings.Join(groups["connection reuse"], ","), "gRPC new connection each") {
		t.Errorf("connection reuse: %v", groups["connection reuse"])
	}
}

// TestStreamCellEndToEnd runs a stream cell in a real study: the server
// process streams 300 users, the results carry the stream figures and the
// server's allocation counters at the start and end of the measured run.
func TestStreamCellEndToEnd(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	ds := dataset{users: 300, todos: 5}
	one := load.Options{Options: results.Options{Concurrency: 1}}
	def := Definition{Name: "tiny-streams", Title: "tiny", Cells: []Cell{
		streamCell("stream", "gRPC", ds, one, stream.GRPCServer, 0),
		streamCell("stream", "REST list", ds, one, stream.RESTList, 0),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, def, Options{Trials: 1, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 3, Binary: bin, Ports: testPorts()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Load == nil || tr.Load.Stream == nil {
			t.Fatalf("%s: %s", tr.Cell, tr.Error)
		}
		s := tr.Load.Stream
		if s.Items != 300*s.Exchanges || s.Exchanges == 0 || s.In.Message == 0 {
			t.Errorf("%s: %d exchanges, %d items, in %+v", tr.Cell, s.Exchanges, s.Items, s.In)
		}
		m := tr.Server.GoMem
		if m["go_memstats_mallocs_total"] <= m["go_memstats_mallocs_total_at_start"] || m["go_memstats_mallocs_total_at_start"] == 0 {
			t.Errorf("%s: server mallocs %v → %v", tr.Cell, m["go_memstats_mallocs_total_at_start"], m["go_memstats_mallocs_total"])
		}
		if tr.Load.CPU.Allocs <= 0 {
			t.Errorf("%s: client allocations not counted", tr.Cell)
		}
	}
}
