// Package h3 is the load engine's HTTP/3 client: Pool is n QUIC
// connections (quic-go, its http3 ClientConn on each), one per --conns,
// each on its own UDP socket whose datagram payloads are counted (Bytes),
// shared by the VUs, VU i on connection i mod n. A connection's handshake
// is timed apart from the requests (Handshakes), and 0-RTT is never used:
// every request waits for the handshake, as over TLS on TCP.
//
// A Pool is safe for concurrent use by the VUs that share it. It knows
// nothing of the engine: package load's raw mode puts it behind its VUs.
package h3
