package study

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/report"
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
	lo := load.Options{Concurrency: 16}
	def := Definition{
		Name:     "formats",
		Title:    "Wire formats under the CRUD scenario (the TOON seed, done right)",
		Question: "Is TOON cheaper to serve than JSON, and by how much, when every format does the same work?",
		Description: "GET all users, POST, GET one, PUT, DELETE per iteration against 100 seeded users; " +
			"16 closed-loop connections, no think time; every response decoded and checked.",
	}
	crud := func(format string) load.ScenarioOptions {
		return load.ScenarioOptions{Name: load.ScenarioCRUD, Format: format}
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
	echo := load.ScenarioOptions{Name: load.ScenarioEcho, Format: "json"}
	count := load.Options{Concurrency: 100, Requests: 200_000}
	dur := load.Options{Concurrency: 100}
	def := Definition{
		Name:     "json-libs",
		Title:    "encoding/json vs goccy/go-json behind POST /echo, on net/http and fasthttp (the Fiber seed, done right)",
		Question: "Does a faster JSON library, or a faster HTTP engine, make the server faster end to end?",
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
		Measure: func(c Context) ([]report.Payload, error) {
			return measurePayloads(context.Background(), []int{1, 10, 100, 1000})
		},
	}
}

// grpcVsRESTStudy is the unary part of the gRPC seed: the same operations
// over gRPC and REST at concurrency 1 and 50, from one load engine, and
// connection reuse against a new connection per request.
func grpcVsRESTStudy() Definition {
	def := Definition{
		Name:     "grpc-vs-rest",
		Title:    "gRPC vs REST (JSON over HTTP/1.1): unary operations and connection reuse",
		Question: "Is gRPC faster than REST for the same unary operations, and what does connection reuse buy?",
		Description: "The CRUD iteration (list 100 users, create, get, update, delete) over gRPC and REST, per operation in the load results; " +
			"then GET one user on a kept-alive connection vs a new connection per request.",
	}
	for _, c := range []int{1, 50} {
		lo := load.Options{Concurrency: c}
		g := fmt.Sprintf("CRUD c=%d", c)
		def.Cells = append(def.Cells,
			apiCell(g, "REST json", defaultDataset, nil, lo, load.ScenarioOptions{Name: load.ScenarioCRUD, Format: "json"}),
			apiCell(g, "REST protobuf", defaultDataset, nil, lo, load.ScenarioOptions{Name: load.ScenarioCRUD, Format: "protobuf"}),
			apiCell(g, "gRPC", defaultDataset, nil, lo, load.ScenarioOptions{Name: load.ScenarioCRUD, Transport: load.TransportGRPC, Connections: 1}),
		)
	}
	seq := load.Options{Concurrency: 1}
	def.Cells = append(def.Cells,
		apiCell("connection reuse", "REST keep-alive", defaultDataset, nil, seq, load.ScenarioOptions{Name: load.ScenarioGet, Format: "json"}),
		apiCell("connection reuse", "REST new connection each", defaultDataset, nil, seq, load.ScenarioOptions{Name: load.ScenarioGet, Format: "json", NoKeepAlive: true}),
		apiCell("connection reuse", "gRPC one connection", defaultDataset, nil, seq, load.ScenarioOptions{Name: load.ScenarioGet, Transport: load.TransportGRPC, Connections: 1}),
	)
	return def
}
