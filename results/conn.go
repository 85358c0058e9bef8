package results

import "time"

// Conn is how a run's connections were set up: what the client dialled,
// over which transport and why, and what the set-up cost apart from the
// requests' latency. The scenario fills it when the run finishes
// (Scenario.Finish); nil when the scenario does not say.
type Conn struct {
	URL string `json:"url,omitempty"`
	// Transport is the one in effect: http1, h2, h2c, h3, grpc.
	Transport string `json:"transport,omitempty"`
	// Auto says which transport --transport auto took and why ("h2: the
	// server chose it in ALPN").
	Auto string `json:"auto,omitempty"`
	// Handshakes are the QUIC handshakes made before an HTTP/3 run
	// started, not in the latencies (none with 0-RTT: see ZeroRTT).
	Handshakes []time.Duration `json:"handshakes_ns,omitempty"`
	// ZeroRTT is what HTTP/3 0-RTT did (--0rtt); nil otherwise.
	ZeroRTT *ZeroRTT `json:"zero_rtt,omitempty"`
}

// ZeroRTT is an HTTP/3 run's 0-RTT: each connection dialled at its first
// request, its handshake inside that request's latency.
type ZeroRTT struct {
	Full    []time.Duration `json:"full_ns"`    // full handshakes (the ticket's, and any without resumption)
	Resumed []time.Duration `json:"resumed_ns"` // resumed handshakes, dial to complete
	// Used is the connections whose early data the server accepted;
	// EarlyRequests the requests sent before the handshake completed;
	// Refused the connections whose early data the server rejected (their
	// early requests sent again), and NoEarly the resumed connections
	// that could not send early data (the ticket allowed none).
	Used          int64 `json:"used"`
	EarlyRequests int64 `json:"early_requests"`
	Refused       int64 `json:"refused"`
	NoEarly       int64 `json:"no_early"`
	// NoTicket says why no session ticket came (then every connection
	// made a full handshake).
	NoTicket string `json:"no_ticket,omitempty"`
}
