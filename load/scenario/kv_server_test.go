package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// TestKVAgainstReferenceServer drives wirebench serve's own KV store (in
// process, memory and AOF) over RESP and both HTTP protocols, and checks
// across them: values written over HTTP JSON are read over RESP and raw
// HTTP, and values written over RESP are read back over HTTP.
func TestKVAgainstReferenceServer(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0",
			KV: kv.Options{Dir: dir, Fsync: kv.FsyncEverySec}})
		if err != nil {
			t.Fatal(err)
		}
		resp, http := "redis://"+srv.RESPAddr(), "http://"+srv.HTTPAddr()
		const keys, n = 300, 900
		for _, step := range []struct {
			sc, proto, url string
			noPreload      bool
			pipeline       int
		}{
			{scenario.ScenarioKVGet, scenario.ProtocolHTTPJSON, http, false, 1}, // preloads over JSON
			{scenario.ScenarioKVGet, scenario.ProtocolRESP, resp, true, 16},     // reads JSON's values over RESP
			{scenario.ScenarioKVGet, scenario.ProtocolHTTPRaw, http, true, 1},   // and as raw bodies
			{scenario.ScenarioKVSet, scenario.ProtocolRESP, resp, false, 8},
			{scenario.ScenarioKVMixed, scenario.ProtocolRESP, resp, true, 4},
			{scenario.ScenarioKVMixed, scenario.ProtocolHTTPRaw, http, true, 1},
			{scenario.ScenarioKVMixed, scenario.ProtocolHTTPJSON, http, true, 1},
		} {
			sc, err := scenario.NewKV(scenario.KVOptions{Name: step.sc, Protocol: step.proto, URL: step.url, Keys: keys, NoPreload: step.noPreload, Pipeline: step.pipeline})
			if err != nil {
				t.Fatal(err)
			}
			res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 4, Requests: n}}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != n || res.Failed != 0 {
				t.Errorf("dir %q: %s over %s: %d requests, %d failed %v", dir, step.sc, step.proto, res.Requests, res.Failed, res.Failures)
			}
		}
		srv.Close()
	}
}

// TestKVMixAgainstReferenceServer: the cache-like mix over both HTTP
// protocols and RESP against wirebench serve's store — PUTs with TTLs,
// DELETEs and PATCH ?ttl_ms= EXPIREs (404 when the key is gone is no failure), GETs of absent keys
// counted as misses, values of many sizes checked to the byte.
func TestKVMixAgainstReferenceServer(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sizes, err := keydist.ParseRange("1-2000")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		proto, url string
		ratio      scenario.Ratio
	}{
		{scenario.ProtocolHTTPRaw, "http://" + srv.HTTPAddr(), scenario.Ratio{Set: 2, Get: 6, Del: 2}},
		{scenario.ProtocolHTTPRaw, "http://" + srv.HTTPAddr(), scenario.Ratio{Set: 2, Get: 5, Del: 1, Expire: 2}},
		{scenario.ProtocolHTTPJSON, "http://" + srv.HTTPAddr(), scenario.Ratio{Set: 2, Get: 5, Del: 1, Expire: 2}},
		{scenario.ProtocolRESP, "redis://" + srv.RESPAddr(), scenario.Ratio{Set: 2, Get: 6, Del: 1, Expire: 1}},
	} {
		const n = 1500
		sc, err := scenario.NewKV(scenario.KVOptions{Name: scenario.ScenarioKVMixed, Protocol: tc.proto, URL: tc.url, Keys: 300,
			KeyDist: keydist.Spec{Pattern: keydist.Zipf, Exp: 0.99}, Sizes: sizes, Ratio: tc.ratio,
			ExpiryMin: 20 * time.Millisecond, ExpiryMax: time.Second, MissRatio: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		k := res.KV
		if res.Requests != n || res.Failed != 0 || k == nil || k.Misses == 0 || k.Hits == 0 || k.Hits+k.Misses != k.Gets || len(res.Ops) != 2*len(strings.Split(tc.ratio.String(), ":")) {
			t.Errorf("%s: %d requests, %d failed %v; kv %+v; ops %d", tc.proto, res.Requests, res.Failed, res.Failures, k, len(res.Ops))
		}
	}
}
