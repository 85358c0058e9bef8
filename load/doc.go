// Package load is wirebench's load engine: one scheduler, one timer, one
// set of histograms and one way of counting bytes for every protocol, so
// that two protocols differ in a result only by what the server did.
//
// A run is Run(ctx, Options, Scenario). The Scenario makes one VU per
// worker; a VU performs one operation per call (an HTTP request, a gRPC
// call). Workers run closed loop (a fixed or ramping number of VUs, each
// sending its next request when the previous one is answered) or open loop
// (requests due at a constant or ramping arrival rate, latency measured
// from the time each request was due — wrk2's coordinated-omission
// correction — with the service time and the client's schedule lag
// recorded beside it).
//
// Two engines run the workers. By default each VU is a goroutine with a
// blocking Do (any client library fits). With Options.EventLoop, raw mode
// over lean HTTP/1.1 in closed loop runs on wrk-style epoll loops instead
// (h1loop.go), which spend no more client CPU per request than wrk does;
// bench/wrk-vs-wirebench.sh measures that.
//
// Stream scenarios (NewStream, stream*.go) make one whole exchange an
// operation — a server stream, a bidi exchange, a list — and add the time
// to the first item, per-message latencies and every byte on their sockets
// split by protocol layer (wirelayers.go); browser scenarios (NewBrowser,
// browser.go) drive the server's /bench/ page in headless chromium and
// report the latencies the page measured.
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
