package study

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// HTTP/3 cells (docs/http3.md): the reference server also listens on QUIC
// at {port3}, with a certificate generated at each start, so the client
// checks none (insecure); the handshake is before the measured run, and
// the check is no part of a request's cost.

func init() { Register("transports", transportsStudy) }

// refH3 is the reference server's HTTP/3 address in a trial.
const refH3 = "https://127.0.0.1:{port3}"

// h3Serve is the flag that adds the HTTP/3 listener. {port3} was found
// free over TCP; a UDP socket holding it makes the server fail to start,
// visibly, like any port taken in between.
var h3Serve = []string{"--http3", "127.0.0.1:{port3}"}

// ErrNoH3Cells: --h3 on a study with no REST scenario to run over HTTP/3.
var ErrNoH3Cells = errors.New("study: no REST cell to run over HTTP/3")

// h3Label is the label of a cell's HTTP/3 twin.
func h3Label(label string) string { return label + " over h3 (TLS)" }

// WithH3 adds, after each REST scenario cell of the reference server
// (apiCell), its twin over HTTP/3: the same scenario, format, VUs and
// dataset, served by the same binary with --http3 too, the client on one
// QUIC connection per VU, as the HTTP/1.1 cell has one TCP connection per
// VU, so that the protocol is what differs; the REST list streams
// (rest-list, NDJSON, SSE) likewise. Cells a QUIC connection cannot
// mirror (a new connection per request, net/http's client, gRPC,
// WebSocket, the browser) get no twin. The twins carry TLS and the cleartext cells do not: the results
// say so; the transports study compares h1, h2 and h3 all on TLS.
func WithH3(def Definition) (Definition, error) {
	var cells []Cell
	added := 0
	for _, c := range def.Cells {
		cells = append(cells, c)
		if tw, ok := h3Twin(c); ok {
			cells = append(cells, tw)
			added++
		}
	}
	if added == 0 {
		return def, fmt.Errorf("%w: study %s", ErrNoH3Cells, def.Name)
	}
	def.Cells = cells
	def.Description += " With --h3, each REST cell has a twin over HTTP/3 (one QUIC connection per VU, on TLS; the other REST cells are cleartext)."
	def.Warnings = append(slices.Clone(def.Warnings), fmt.Sprintf(
		"%d cells over HTTP/3 (--h3) run on TLS and the HTTP/1.1 cells beside them in cleartext: the difference includes TLS; "+
			"wirebench study transports compares HTTP/1.1, HTTP/2 and HTTP/3 all on TLS", added))
	return def, nil
}

// h3Twin is c over HTTP/3, if c is a REST scenario on the reference
// server that HTTP/3 can mirror.
func h3Twin(c Cell) (Cell, bool) {
	if c.Server == nil || c.Capacity != nil || !isReference(c.Server.Command) {
		return Cell{}, false
	}
	tw := c
	switch so, st := c.Load.Scenario, c.Load.Stream; {
	case so != nil && (so.Transport == "" || so.Transport == conn.HTTP1) && !so.NoKeepAlive && so.Client != conn.ClientStd:
		h3 := *so
		h3.URL, h3.Transport, h3.Insecure = refH3, conn.H3, true
		h3.Connections = c.Load.Concurrency()
		tw.Load.Scenario = &h3
	case st != nil && h3StreamKind(st.Kind) && (st.Transport == "" || st.Transport == conn.HTTP1):
		h3 := *st // the REST list kinds (load/stream/h3.go)
		h3.URL, h3.Transport, h3.Insecure = refH3, conn.H3, true
		h3.Connections = c.Load.Concurrency()
		tw.Load.Stream = &h3
	default:
		return Cell{}, false
	}
	tw.Label, tw.Baseline = h3Label(c.Label), false
	tw.ServeArgs = append(slices.Clone(c.ServeArgs), h3Serve...)
	srv := *c.Server
	srv.Command = append(slices.Clone(c.Server.Command), h3Serve...)
	tw.Server = &srv
	return tw, true
}

// h3StreamKind reports whether a stream kind runs over HTTP/3.
func h3StreamKind(kind string) bool {
	return kind == stream.RESTList || kind == stream.NDJSON || kind == stream.SSE
}

// isReference reports whether argv runs the reference server.
func isReference(argv []string) bool {
	return len(argv) > 1 && argv[0] == "{wirebench}" && argv[1] == "serve"
}

// transportsStudy is bench/transports-tls.yaml built in: GET /users/1 in
// JSON over HTTP/1.1, HTTP/2 and HTTP/3, all on TLS against one reference
// server listening on TCP (--https) and UDP (--http3); h2 and h3 share 4
// connections among the VUs, HTTP/1.1 has one per VU.
func transportsStudy() Definition {
	lo := load.Options{Options: results.Options{Concurrency: 50}}
	raw := func(transport, base string) *load.RawOptions {
		return &load.RawOptions{
			Options:            conn.Options{URL: base + "/users/1", Transport: transport, Connections: 4, Insecure: true},
			Method:             "GET",
			Header:             []string{"Accept: application/json"},
			ExpectBodyContains: `"id":1,`,
		}
	}
	cell := func(label, transport, base string) Cell {
		srv := &Server{
			Command: []string{"{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--grpc", refGRPC,
				"--https", "127.0.0.1:{port4}", "--http3", "127.0.0.1:{port3}", "--seed-users", "100"},
			Ready: refHTTP + "/healthz",
		}
		return Cell{Group: "GET /users/1, 50 VUs, TLS", Label: label, Server: srv,
			Load: LoadSpec{Options: lo, Raw: raw(transport, base)}, Checks: []Check{goMemCheck()}}
	}
	return Definition{
		Name:     "transports",
		Title:    "REST over HTTP/1.1, HTTP/2 and HTTP/3 on TLS",
		Question: "How does HTTP/3 compare with HTTP/1.1 and HTTP/2 for this API?",
		Answer:   results.Answer{Metric: "server_cpu_per_req"},
		Description: "GET /users/1 in JSON, 50 closed-loop VUs, every response checked; one fresh `serve --https --http3` per trial; " +
			"HTTP/2 and HTTP/3 on 4 connections shared by the VUs, HTTP/1.1 on one per VU; the certificate is generated at each start and not checked. " +
			"Loopback, no loss: HTTP/3's strengths under loss do not show (docs/http3.md).",
		Cells: []Cell{
			cell("h2", conn.H2, "https://127.0.0.1:{port4}"),
			cell("h1", conn.HTTP1, "https://127.0.0.1:{port4}"),
			cell("h3", conn.H3, refH3),
		},
	}
}
