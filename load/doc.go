// Package load is wirebench's load engine: one run loop, one set of
// per-worker histograms and one way of counting bytes for every protocol,
// so that two protocols differ in a result only by what the server did.
//
// A run is Run(ctx, Options, Scenario). The Scenario (scenario.go, the
// whole seam between the engine and a client; its concurrency rule is in
// its doc) makes one VU per worker; a VU performs one operation per call
// (an HTTP request, a gRPC call, a stream exchange). Workers run closed
// loop (a fixed or ramping number of VUs, each sending its next request
// when the previous one is answered) or open loop (requests due at a
// constant or ramping arrival rate, latency measured from the time each
// request was due — wrk2's coordinated-omission correction — with the
// service time and the client's schedule lag recorded beside it).
//
// One driver runs a run's workers, chosen once by pickDriver (driver.go)
// from what the scenario allows and what the options allow: PerVU, a
// goroutine per VU with a blocking Do (any client library fits; run.go);
// Batches, pipelined VUs in closed loop (kv_batch.go); EventLoops, raw
// mode over lean HTTP/1.1 in closed loop on wrk-style epoll loops
// (h1loop.go, rawsys.go), which spend no more client CPU per request than
// wrk does (bench/wrk-vs-wirebench.sh). All three record into the same
// per-worker stats (stats.go), merged once after the run into a
// results.Load: the result model is plain data in package results.
//
// The package holds the engine (run, driver, options, pacer, stages,
// segment, start, barrier, sleep, live, progressbar, stats) and raw mode
// (raw.go, raw_std.go: one request repeated against any HTTP
// server), whose event loops are the engine's. Everything else is below
// it, each package with its own doc:
//
//	load/conn       where and how to connect: one Options, one rule to TLS and pools, Alt-Svc
//	load/h1         HTTP/1.1: parser, push parser, keep-alive Conn, net/http client
//	load/h2         HTTP/2 frame reader, lean gRPC session and pool, x/net HTTP/2 pool
//	load/resp       RESP2 parser and command encoder
//	load/wire       every socket byte attributed to one protocol layer
//	load/clientio   size limits, parse errors, failure reasons shared by the clients
//	load/scenario   the reference-API scenarios: CRUD…, KV, the bulk upload
//	load/stream     the stream scenarios: gRPC streams, Connect, gRPC-Web, NDJSON, SSE, WebSocket
//	load/grpcany    any gRPC method of any server: descriptors at run time, templated requests
//	load/browser    the in-browser scenario (chromedp)
//
// Clients (h1, h2, resp, wire, clientio) import nothing of the engine;
// scenarios (scenario, stream, replay, browser) import load for Scenario
// and VU, and conn for connection set-up; load imports the clients raw
// mode uses and never a scenario (conn's TestConnectionLayerImports).
// docs/architecture.md draws the packages and one request's path.
//
// A failed request is data: it is counted by reason and the run goes on.
package load

import (
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/results"
)

// Sentinel errors; each is wrapped with detail where it is returned.
var (
	// ErrOptions reports an invalid Options value; it is
	// results.ErrOptions, which the options' parsers there return too.
	ErrOptions = results.ErrOptions
	// ErrMalformed reports a response a client's parser cannot read;
	// ErrTooLarge one over the clients' size limits (clientio).
	ErrMalformed = clientio.ErrMalformed
	ErrTooLarge  = clientio.ErrTooLarge
)
