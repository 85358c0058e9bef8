package server

import (
	"cmp"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/fastapi"
	"github.com/wirebench/wirebench/httpapi"
)

// Timeouts are the REST server's time and buffer limits per connection and
// per stream. Each bounds how long a misbehaving peer can hold memory: a
// client that trickles its body, never reads a large reply, or opens h2c
// streams with a zero flow-control window. A zero field takes its default.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers (and a gRPC
	// connection's handshake).
	ReadHeader time.Duration
	// Read bounds reading a whole request, headers and body; a body
	// still arriving then is answered 408. For h2c it applies per stream.
	Read time.Duration
	// Write bounds the time from the end of a request's headers to the
	// end of its response. A client that does not read its reply (or an
	// h2c stream whose window stays shut) loses the connection (stream)
	// then, and the reply's memory is freed.
	Write time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request (for gRPC: how long a connection with no RPC stays open).
	Idle time.Duration
	// H2MaxStreams bounds the concurrent streams of one h2c (and gRPC)
	// connection; more are refused.
	H2MaxStreams int
	// H2StreamBuffer is the flow-control window, in bytes, for a request
	// body on one h2c stream: what a client can make the server buffer
	// before the handler reads. 64 KiB to under 4 MiB.
	H2StreamBuffer int
}

// DefaultTimeouts are generous for any legitimate client on a LAN (a whole
// 8 MiB body at 2 Mbit/s arrives within 30 s) and short enough that a
// hostile one cannot pile up connections for long.
var DefaultTimeouts = Timeouts{
	ReadHeader:     10 * time.Second,
	Read:           30 * time.Second,
	Write:          30 * time.Second,
	Idle:           2 * time.Minute,
	H2MaxStreams:   100,
	H2StreamBuffer: 1 << 20,
}

// maxHeaderBytes bounds a request's header block on both engines.
const maxHeaderBytes = 64 << 10

func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts
	if t.ReadHeader <= 0 {
		t.ReadHeader = d.ReadHeader
	}
	if t.Read <= 0 {
		t.Read = d.Read
	}
	if t.Write <= 0 {
		t.Write = d.Write
	}
	if t.Idle <= 0 {
		t.Idle = d.Idle
	}
	if t.H2MaxStreams <= 0 {
		t.H2MaxStreams = d.H2MaxStreams
	}
	if t.H2StreamBuffer <= 0 {
		t.H2StreamBuffer = d.H2StreamBuffer
	}
	return t
}

func newHTTPServer(h http.Handler, protos *http.Protocols, t Timeouts, shares *replyShares) *http.Server {
	return &http.Server{
		Handler:           h,
		Protocols:         protos,
		ReadHeaderTimeout: min(t.ReadHeader, t.Read),
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		// Headers count against the body limit's spirit: 64 KiB is far
		// more than any client of this API sends (net/http's default is
		// 1 MiB).
		MaxHeaderBytes: maxHeaderBytes,
		// Each connection's share of the reply budget and its source's,
		// shared with HTTP/3's: an h2 connection's never-read streams, or
		// a host's many never-read connections over any transport, hold
		// one or a few large replies, not the budget.
		ConnContext: shares.connContext,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: t.H2MaxStreams,
			// The connection window is what all streams share; keep it
			// at the stream window so one connection buffers at most
			// that much request data.
			MaxReceiveBufferPerStream:     t.H2StreamBuffer,
			MaxReceiveBufferPerConnection: max(t.H2StreamBuffer, 64<<10),
			// A peer that stops reading the socket altogether (not just
			// a stream) loses the connection after the write timeout.
			WriteByteTimeout: t.Write,
		},
	}
}

// newFastServer maps the same timeouts and limits onto fasthttp.Server.
func newFastServer(h *httpapi.Server, opts Options) *fasthttp.Server {
	t := opts.Timeouts.withDefaults()
	return fastapi.NewServer(h, fastapi.Options{
		MaxBody:    cmp.Or(opts.HTTP.MaxBody, httpapi.DefaultMaxBody),
		ReadHeader: t.ReadHeader, Read: t.Read, Write: t.Write, Idle: t.Idle,
		MaxHeaderBytes: maxHeaderBytes,
	})
}
