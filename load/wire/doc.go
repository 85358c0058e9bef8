// Package wire attributes every byte a stream client sends or receives
// on its sockets to one protocol layer (results.Layers: message,
// envelope, HTTP/2 frames, HPACK, WebSocket, HTTP/1.1 heads and
// chunking), by parsing the bytes as they pass with the peers' own
// framing rules. Conn wraps one connection, Dialer every connection a
// client dials, Stack names the layers a connection carries, and Counter
// sums them per direction (safe for concurrent use). The counts are
// exact: a direction's layers always sum to its socket's bytes (FuzzLayers).
//
// The stream scenarios (load/stream) and HTTP/2 raw mode (load/h2.Pool)
// use it; it knows nothing of the engine.
package wire
