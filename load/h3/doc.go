// Package h3 is the load engine's HTTP/3 client: Pool is n QUIC
// connections (quic-go, its http3 ClientConn on each), one per --conns,
// each on its own UDP socket whose datagram payloads are counted (Bytes)
// and split by layer — QUIC, HTTP/3 frames, QPACK, body — from quic-go's
// own trace events (Layers, layers.go), shared by the VUs, VU i on
// connection i mod n. A connection's handshake is timed apart from the
// requests (Handshakes). 0-RTT is used only when asked (Enable0RTT,
// zerortt.go); otherwise every request waits for the handshake, as over
// TLS on TCP.
//
// A Pool is safe for concurrent use by the VUs that share it. It knows
// nothing of the engine: package load's raw mode, the reference scenarios
// and the stream kinds put it behind their VUs.
package h3
