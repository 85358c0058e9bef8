package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// The get scenario with --0rtt against serve --h3-0rtt: every response
// checked, the connections resume and use 0-RTT, and the server's own
// counts of 0-RTT and resumed connections equal the client's (it counts
// them when their handshake completes: the test waits up to 10 s for
// them to settle). Not under -race in CI: quic-go v0.65.0's client
// 0-RTT path races with itself (docs/http3.md).
func TestScenarioZeroRTT(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
		H3: server.H3{Addr: "127.0.0.1:0", Allow0RTT: true}, SeedUsers: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sc, err := scenario.New(scenario.Options{
		Name:    scenario.Get,
		Options: conn.Options{URL: "https://" + srv.H3Addr(), Transport: conn.H3, Connections: 2, Insecure: true, ZeroRTT: true, Timeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 60
	r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 4, Requests: n}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != n || r.Failed != 0 {
		t.Fatalf("%d requests, %d failed: %v", r.Requests, r.Failed, r.Failures)
	}
	if r.Layers == nil || r.Layers.In.Other != 0 || r.Layers.Out.Other != 0 || strings.Contains(strings.Join(r.Warnings, "\n"), "by layer") {
		t.Errorf("layers %+v, warnings %q", r.Layers, r.Warnings)
	}
	z := sc.(interface{ H3ZeroRTT() *h3.ZeroRTTStats }).H3ZeroRTT()
	if z == nil || len(z.Resumed) != 2 || z.Used != 2 {
		t.Fatalf("client %+v: want 2 resumed connections, both 0-RTT", z)
	}
	var used, resumed int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		used, resumed = testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_0rtt_connections_total"), testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_resumed_connections_total")
		if used == z.Used && resumed == int64(len(z.Resumed)) {
			break
		}
	}
	if used != z.Used || resumed != int64(len(z.Resumed)) {
		t.Errorf("server: %d 0-RTT, %d resumed connections; client %+v", used, resumed, z)
	}
	if _, err := scenario.New(scenario.Options{Name: scenario.Get, Options: conn.Options{URL: "http://127.0.0.1:1", ZeroRTT: true}}); err == nil {
		t.Error("--0rtt over HTTP/1.1 accepted")
	}
}
