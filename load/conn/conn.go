// Package conn is where and how a client connects: one Options type (the
// target, the transport, the connections, TLS checks and client
// certificates, the timeout) and one rule, New, that turns it into the
// TLS configuration, dialers and pools of HTTP/1.1, h2c, h2, h3 and gRPC,
// following Alt-Svc for --transport auto. Raw mode, the reference
// scenarios, streams and replay all connect through it, so that a scheme
// and a transport mean the same thing to every client.
//
// The package imports the protocol clients (load/h1's neighbours h2 and
// h3) and never the engine (load) nor a scenario: a client imports conn
// for connection set-up and load only for the Scenario seam.
//
// A link between client and server (latency, bandwidth, loss) would be
// one more field of Options, applied by New to every dialer it makes.
package conn

import (
	"time"

	"github.com/wirebench/wirebench/results"
)

// Transports, as --transport names them.
const (
	HTTP1 = "http1" // HTTP/1.1, over TLS for https://
	H2C   = "h2c"   // HTTP/2 without TLS (http://)
	H2    = "h2"    // HTTP/2 over TLS (https://), negotiated by ALPN
	H3    = "h3"    // HTTP/3 over QUIC (https://), package load/h3
	GRPC  = "grpc"  // gRPC over h2c to host:port (the reference scenarios)
	// Auto (https:// URLs) makes one request over TLS on TCP first (h2 or
	// HTTP/1.1, as ALPN picks) and follows its Alt-Svc to HTTP/3 when it
	// advertises h3, as a browser does; without one, the run stays on
	// what ALPN picked. The choice and its reason are in Conns.Auto.
	Auto = "auto"
)

// HTTP/1.1 client implementations (Options.Client).
const (
	ClientLean = "lean" // load/h1's Conn: the default, as cheap per request as wrk
	ClientStd  = "std"  // net/http's Transport (grpc-go over gRPC), kept for comparison
)

// ErrOptions reports options that cannot connect; it is load's (and
// results') ErrOptions, so a caller tells usage errors apart the same way
// whichever package refused them.
var ErrOptions = results.ErrOptions

// Options are where and how a client connects. Each client's options
// embed them (load.RawOptions, scenario.Options, stream.Options,
// replay.Options); the zero value plus URL is lean HTTP/1.1 keep-alive
// connections, over TLS with the system's CAs for https://.
type Options struct {
	// URL is the target: http(s)://host[:port][/path], or host:port for
	// gRPC.
	URL string `json:"url"`
	// Transport is HTTP1, H2C, H2, H3, GRPC or Auto; "" is HTTP1, or for
	// https:// what the server prefers by ALPN (h2 or http/1.1).
	Transport string `json:"transport"`
	// Connections shared by the VUs over h2c, h2, h3 and gRPC (0: 1);
	// each VU has its own over HTTP/1.1.
	Connections int `json:"connections,omitempty"`
	// NoKeepAlive closes and redials the connection after every request
	// (HTTP/1.1 only).
	NoKeepAlive bool `json:"no_keepalive,omitempty"`
	// Client is ClientLean ("" too) or ClientStd.
	Client string `json:"client,omitempty"`
	// Timeout is per request; it bounds dials and handshakes too.
	Timeout time.Duration `json:"timeout"`
	// HTTPS: Insecure skips the server certificate's checks; CAFile adds
	// the CA certificates of a PEM file; CertFile and KeyFile are a client
	// certificate (PEM), for servers that require one.
	Insecure bool   `json:"insecure,omitempty"`
	CAFile   string `json:"ca_file,omitempty"`
	CertFile string `json:"cert_file,omitempty"`
	KeyFile  string `json:"key_file,omitempty"`
	// ZeroRTT (h3 only, --0rtt) resumes a session ticket got by one full
	// handshake before the run and sends each connection's first GET or
	// HEAD as 0-RTT early data (load/h3's zerortt.go).
	ZeroRTT bool `json:"zero_rtt,omitempty"`
	// NoLayers (h3 only, --no-layers) leaves the split of the bytes by
	// layer inside QUIC out of the result: quic-go then builds no trace
	// events (one per packet and frame), the client's one cost beyond a
	// bare quic-go loop's (docs/http3.md).
	NoLayers bool `json:"no_layers,omitempty"`
	// CheckLayers (h3 only, --layers-checked) counts the split from
	// quic-go's packet events too, so that the run warns when its layers
	// do not add up exactly; quic-go then builds an event per packet and
	// per ACK (load/h3's layers.go).
	CheckLayers bool `json:"check_layers,omitempty"`
}
