package study

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

func init() {
	Register("formats", formatsStudy)
	Register("json-libs", jsonLibsStudy)
	Register("payload-size", payloadSizeStudy)
	Register("grpc-vs-rest", grpcVsRESTStudy)
}

// formatsStudy is the TOON seed done right: the CRUD iteration in every
// format, closed loop without think time, on a dataset that stays the same
// size, every response decoded and checked.
func formatsStudy() Definition {
	lo := load.Options{Options: results.Options{Concurrency: 16}}
	def := Definition{
		Name:     "formats",
		Title:    "Wire formats under the CRUD scenario (the TOON seed, done right)",
		Question: "Is TOON cheaper to serve than JSON, and by how much, when every format does the same work?",
		Answer:   results.Answer{Metric: "server_cpu_per_req", Cell: "toon"}, // cheaper: server CPU per request
		Description: "GET all users, POST, GET one, PUT, DELETE per iteration against 100 seeded users; " +
			"16 closed-loop connections, no think time; every response decoded and checked.",
	}
	crud := func(format string) scenario.Options {
		return scenario.Options{Name: scenario.CRUD, Format: format}
	}
	def.Cells = append(def.Cells,
		apiCell("crud", "json (encoding/json)", defaultDataset, nil, lo, crud("json")),
		apiCell("crud", "json (goccy/go-json)", defaultDataset, []string{"--json-lib", "fast"}, lo, crud("json")),
	)
	for _, f := range codec.Formats() {
		if f == "json" {
			continue
		}
		def.Cells = append(def.Cells, apiCell("crud", f, defaultDataset, nil, lo, crud(f)))
	}
	for _, f := range []string{"json", "toon"} {
		gz := crud(f)
		gz.Compression = "gzip"
		def.Cells = append(def.Cells, apiCell("crud", f+" + gzip", defaultDataset, nil, lo, gz))
	}
	return def
}

// jsonLibsStudy is the Fiber seed done right: POST /echo with the right
// Content-Type, so the decoder really runs, and the reply checked; std vs
// fast JSON on the server, on both REST engines (the seed ran Fiber, i.e.
// fasthttp), fixed count and fixed duration as in the seed.
func jsonLibsStudy() Definition {
	echo := scenario.Options{Name: scenario.Echo, Format: "json"}
	count := load.Options{Options: results.Options{Concurrency: 100, Requests: 200_000}}
	dur := load.Options{Options: results.Options{Concurrency: 100}}
	def := Definition{
		Name:     "json-libs",
		Title:    "encoding/json vs goccy/go-json behind POST /echo, on net/http and fasthttp (the Fiber seed, done right)",
		Question: "Does a faster JSON library, or a faster HTTP engine, make the server faster end to end?",
		Answer:   results.Answer{Metric: "rps"},
		Description: "100 connections; scenario 1 sends a fixed number of requests, scenario 2 runs for a fixed time. " +
			"Content-Type is application/json and every reply's message is checked. Each JSON library on each REST engine.",
	}
	for _, g := range []struct {
		name string
		lo   load.Options
	}{{"fixed count", count}, {"fixed duration", dur}} {
		for _, engine := range []string{"nethttp", "fasthttp"} {
			def.Cells = append(def.Cells,
				apiCell(g.name, "encoding/json on "+engine, defaultDataset, []string{"--engine", engine}, g.lo, echo),
				apiCell(g.name, "goccy/go-json on "+engine, defaultDataset, []string{"--engine", engine, "--json-lib", "fast"}, g.lo, echo),
			)
		}
	}
	return def
}

// payloadSizeStudy measures bytes per format: deterministic, so no trials.
func payloadSizeStudy() Definition {
	return Definition{
		Name:        "payload-size",
		Title:       "Bytes per format, transport and compression",
		Question:    "How many bytes does each format put on the wire for the same data?",
		Description: "GET /users and GET /todos with 1, 10, 100 and 1000 items: the body in each format, and the response bytes on the socket per transport on a warm connection.",
		Measure: func(c Context) ([]results.Payload, error) {
			return measurePayloads(context.Background(), []int{1, 10, 100, 1000})
		},
	}
}

// grpcVsRESTStudy is the gRPC seed's whole table done fairly: the same
// operations over gRPC and REST from one load engine, every response
// decoded and checked, client and server CPU and allocations apart (the
// server's from its own runtime metrics), in groups of like against like.
func grpcVsRESTStudy() Definition {
	def := Definition{
		Name:     "grpc-vs-rest",
		Title:    "gRPC vs REST: unary operations, payload sizes, streams, bidirectional, connections, the WebSocket tunnel and the browser",
		Question: "Is gRPC faster than REST for the same operations, and what do streams, tunnels and browsers change?",
		Answer:   results.Answer{Metric: "rps"}, // in-browser groups answer in latency
		Description: "CRUD (list 100 users, create, get, update, delete; per operation in the load results) at c=1 and c=50, " +
			"gRPC on grpc-go's server (what users deploy) with our lean client and with grpc-go's, " +
			"and, as an extra cell labelled as ours, on a minimal transport of ours (h2grpc: the floor, never the headline); " +
			"lists of 10, 100 and 1000 users; a server stream of 1000 users against a REST list of 1000, NDJSON, SSE, Connect and gRPC-Web streams; " +
			"100 bidirectional messages over gRPC and over a WebSocket; one request per new connection against a kept connection, REST and gRPC; " +
			"unary gRPC natively, through the gRPC-over-WebSocket tunnel, and over Connect and gRPC-Web on the REST port; " +
			"and the same calls made by a page in headless chromium, timed there with performance.now(). " +
			"Stream cells count one whole exchange as a request: their latency is the time to the last item.",
		Notes: grpcVsRESTNotes,
	}
	for _, c := range []int{1, 50} {
		lo := load.Options{Options: results.Options{Concurrency: c}}
		g := fmt.Sprintf("CRUD c=%d", c)
		def.Cells = append(def.Cells,
			apiCell(g, "REST json", defaultDataset, nil, lo, scenario.Options{Name: scenario.CRUD, Format: "json"}),
			apiCell(g, "REST protobuf", defaultDataset, nil, lo, scenario.Options{Name: scenario.CRUD, Format: "protobuf"}),
			apiCell(g, "gRPC", defaultDataset, nil, lo, scenario.Options{Name: scenario.CRUD, Options: conn.Options{Transport: scenario.TransportGRPC, Connections: 1}}),
			// What an application's client library adds: every other cell
			// uses our lean clients, which measure the server.
			apiCell(g, "gRPC, grpc-go's client", defaultDataset, nil, lo, scenario.Options{Name: scenario.CRUD, Options: conn.Options{Transport: scenario.TransportGRPC, Connections: 1, Client: conn.ClientStd}}),
			// Not what users deploy: how low the server's side could go.
			apiCell(g, leanLabel, defaultDataset, leanGRPC, lo, scenario.Options{Name: scenario.CRUD, Options: conn.Options{Transport: scenario.TransportGRPC, Connections: 1}}),
		)
	}
	one := load.Options{Options: results.Options{Concurrency: 1}}
	for _, n := range []int{10, 100, 1000} {
		ds, g := dataset{users: n, todos: 10}, fmt.Sprintf("list of %d", n)
		def.Cells = append(def.Cells,
			apiCell(g, "REST json", ds, nil, one, scenario.Options{Name: scenario.List, Format: "json"}),
			apiCell(g, "gRPC", ds, nil, one, scenario.Options{Name: scenario.List, Options: conn.Options{Transport: scenario.TransportGRPC, Connections: 1}}),
		)
	}
	big := dataset{users: 1000, todos: 10}
	def.Cells = append(def.Cells,
		streamCell("stream of 1000", "REST list (one JSON array)", big, one, stream.RESTList, 0),
		streamCell("stream of 1000", "REST NDJSON stream", big, one, stream.NDJSON, 0),
		streamCell("stream of 1000", "REST SSE", big, one, stream.SSE, 0),
		streamCell("stream of 1000", "gRPC server stream", big, one, stream.GRPCServer, 0),
		streamCell("stream of 1000", "Connect server stream", big, one, stream.ConnectSrv, 0),
		streamCell("stream of 1000", "gRPC-Web server stream", big, one, stream.GRPCWebSrv, 0),
		streamCell("stream of 1000", "gRPC server stream, WebSocket tunnel", big, one, stream.TunnelSrv, 0),
		streamCell("bidi 100", "gRPC bidi stream", defaultDataset, one, stream.GRPCBidi, 100),
		streamCell("bidi 100", "WebSocket (JSON)", defaultDataset, one, stream.WebSocket, 100),
		apiCell("connection reuse", "REST keep-alive", defaultDataset, nil, one, scenario.Options{Name: scenario.Get, Format: "json"}),
		apiCell("connection reuse", "REST new connection each", defaultDataset, nil, one, scenario.Options{Name: scenario.Get, Format: "json", Options: conn.Options{NoKeepAlive: true}}),
		streamCell("connection reuse", "gRPC one connection", defaultDataset, one, stream.GRPCGet, 0),
		streamCell("connection reuse", "gRPC new connection each", defaultDataset, one, stream.GRPCGetNewConn, 0),
		streamCell("unary transports", "gRPC native", defaultDataset, one, stream.GRPCGet, 0),
		streamCell("unary transports", "gRPC, WebSocket tunnel", defaultDataset, one, stream.TunnelGet, 0),
		streamCell("unary transports", "Connect (HTTP/1.1)", defaultDataset, one, stream.ConnectGet, 0),
		streamCell("unary transports", "gRPC-Web (HTTP/1.1)", defaultDataset, one, stream.GRPCWebGet, 0),
		apiCell("unary transports", "REST json get", defaultDataset, nil, one, scenario.Options{Name: scenario.Get, Format: "json"}),
	)
	if _, err := browser.FindChromium(""); err != nil {
		def.Warnings = append(def.Warnings, fmt.Sprintf("in-browser cells left out: %v", err))
		return def
	}
	for _, k := range []struct{ kind, label string }{
		{"fetch-json", "fetch + JSON"}, {"connect", "Connect (connect-web)"}, {"grpc-web", "gRPC-Web (connect-web)"},
		{"ws-tunnel", "gRPC-Web over WebSocket tunnel"},
	} {
		def.Cells = append(def.Cells, browserCell("in browser: get user", k.label, defaultDataset, k.kind, 50))
	}
	def.Cells = append(def.Cells,
		browserCell("in browser: stream of 1000", "Connect server stream", big, "connect-stream", 5),
		browserCell("in browser: stream of 1000", "tunnel server stream", big, "ws-tunnel-stream", 5),
	)
	return def
}
