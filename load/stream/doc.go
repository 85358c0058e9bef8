// Package stream is the load engine's stream scenarios: one operation is
// one whole exchange — a server stream, a client stream or bidirectional
// exchange, a REST list, NDJSON, SSE, a WebSocket echo, a unary call over
// Connect, gRPC-Web or the gRPC-over-WebSocket tunnel — so that the run's
// latency is the time to the last item, with the time to the first item,
// per-message latencies and every byte on the sockets split by layer
// (package wire) in the result's stream section (results.Stream).
//
// New makes a load.Scenario (driver PerVU); its connections are shared by
// the VUs where the kind shares them (gRPC), and its Finish closes them and
// adds their bytes and the stream section. Every item is decoded and
// checked.
package stream
