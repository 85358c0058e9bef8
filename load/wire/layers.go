package wire

import (
	"context"
	"net"
	"sync"
	"sync/atomic"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Layer accounting: every byte a stream client sends or receives on its
// socket is attributed to exactly one protocol layer, by parsing the bytes
// as they pass (layerConn) with the same framing rules the peers use. The
// counts are exact, not estimated: the layers of one direction always sum
// to the bytes on the socket (FuzzLayers checks it for any input and any
// chunking). Bytes a parser cannot classify (a malformed or unknown frame)
// go to Other and the parser stops classifying that direction.

// layer indexes the counters of a layerCounts.
type layer int

const (
	lMessage layer = iota
	lEnvelope
	lH2Frames
	lH2Headers
	lWS
	lH1Headers
	lH1Framing
	lOther
	nLayers
)

// layerCounts is one direction's counters, safe to read while a parser
// adds to them.
type layerCounts [nLayers]atomic.Int64

func (c *layerCounts) add(l layer, n int) {
	if n > 0 {
		c[l].Add(int64(n))
	}
}

func (c *layerCounts) snapshot() results.Layers {
	return results.Layers{
		Message: c[lMessage].Load(), Envelope: c[lEnvelope].Load(), H2Frames: c[lH2Frames].Load(),
		H2Headers: c[lH2Headers].Load(), WS: c[lWS].Load(), H1Headers: c[lH1Headers].Load(),
		H1Framing: c[lH1Framing].Load(), Other: c[lOther].Load(),
	}
}

// Counter accumulates the layers of every connection of a stream
// scenario, per direction (safe for concurrent use).
type Counter struct {
	in, out layerCounts
}

// In and Out are the received and sent splits so far.
func (w *Counter) In() results.Layers  { return w.in.snapshot() }
func (w *Counter) Out() results.Layers { return w.out.snapshot() }

// Stack names the layers a connection carries, outermost first, and so
// which parsers its bytes go through.
type Stack int

const (
	// StackH2GRPC is gRPC over HTTP/2 (h2c): frames, HPACK, 5-byte
	// prefixed messages.
	StackH2GRPC Stack = iota
	// StackH1 is HTTP/1.1 with a plain body (JSON, a list).
	StackH1
	// StackH1NDJSON is HTTP/1.1 whose body is newline-delimited records.
	StackH1NDJSON
	// StackH1SSE is HTTP/1.1 whose body is Server-Sent Events.
	StackH1SSE
	// StackH1Enveloped is HTTP/1.1 whose body is 5-byte enveloped
	// messages (gRPC-Web, Connect streaming).
	StackH1Enveloped
	// StackWS is an HTTP/1.1 upgrade to WebSocket whose messages are
	// payload.
	StackWS
	// StackWSH2GRPC is the gRPC tunnel: HTTP/1.1 upgrade, WebSocket
	// frames, and inside them gRPC over HTTP/2.
	StackWSH2GRPC
	// StackH2 is HTTP/2 whose DATA payload is the body, whole Message.
	StackH2
)

// newParsers returns the (client-side) parsers of one connection's two
// directions. The client writes requests and reads responses; in the
// tunnel the client's WebSocket frames are masked, the server's are not.
func newParsers(s Stack, w *Counter) (in, out parser) {
	switch s {
	case StackH2GRPC:
		return newH2Parser(&w.in, false), newH2Parser(&w.out, true)
	case StackH2:
		in, out := newH2Parser(&w.in, false), newH2Parser(&w.out, true)
		in.plain, out.plain = true, true
		return in, out
	case StackH1:
		return newH1Parser(&w.in, true, rawBody(&w.in)), newH1Parser(&w.out, false, rawBody(&w.out))
	case StackH1NDJSON:
		return newH1Parser(&w.in, true, &lineBody{c: &w.in}), newH1Parser(&w.out, false, rawBody(&w.out))
	case StackH1SSE:
		return newH1Parser(&w.in, true, &lineBody{c: &w.in, sse: true}), newH1Parser(&w.out, false, rawBody(&w.out))
	case StackH1Enveloped:
		return newH1Parser(&w.in, true, newEnvelopeParser(&w.in)), newH1Parser(&w.out, false, newEnvelopeParser(&w.out))
	case StackWS:
		return newH1Parser(&w.in, true, nil).upgrade(newWSParser(&w.in, rawBody(&w.in))),
			newH1Parser(&w.out, false, nil).upgrade(newWSParser(&w.out, rawBody(&w.out)))
	case StackWSH2GRPC:
		return newH1Parser(&w.in, true, nil).upgrade(newWSParser(&w.in, newH2Parser(&w.in, false))),
			newH1Parser(&w.out, false, nil).upgrade(newWSParser(&w.out, newH2Parser(&w.out, true)))
	}
	panic("load: unknown stack")
}

// layerConn attributes the bytes of a client connection to layers.
//
// Each direction's parser is fed under a lock held across the socket call
// as well, so that it sees the bytes in the order they went on the wire.
// Feeding after the call without it loses that order when two goroutines
// write: net/http's writeLoop sends the WebSocket upgrade request, the
// server answers 101, and the tunnel's gRPC preface is written (and fed)
// by another goroutine before the writeLoop, descheduled between its
// Write returning and its feed, feeds the request — the parser then reads
// the preface as part of an HTTP head, and the rest of the connection
// goes to Other (a data race on the parser, too). The lock costs nothing
// more than the socket's own: a net.Conn serializes its Writes (and its
// Reads) the same way.
type layerConn struct {
	net.Conn
	in, out parser
	bytes   *measure.Bytes
	rmu     sync.Mutex // Read and in
	wmu     sync.Mutex // Write and out
}

// Conn wraps c, parsing what passes with the parsers of stack s into
// w, and counting the raw bytes into b as well (nil: not).
func Conn(c net.Conn, s Stack, w *Counter, b *measure.Bytes) net.Conn {
	in, out := newParsers(s, w)
	return &layerConn{Conn: c, in: in, out: out, bytes: b}
}

func (c *layerConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.in.feed(p[:n])
		if c.bytes != nil {
			c.bytes.In.Add(int64(n))
		}
	}
	return n, err
}

func (c *layerConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.out.feed(p[:n])
		if c.bytes != nil {
			c.bytes.Out.Add(int64(n))
		}
	}
	return n, err
}

// Dialer wraps dial so that every connection it makes is a layerConn.
func Dialer(dial measure.DialFunc, s Stack, w *Counter, b *measure.Bytes) measure.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Conn(c, s, w, b), nil
	}
}

// Body returns a parser of one response body that a transport has
// already unframed (HTTP/3's DATA payloads): it splits the body into
// message and envelope by stack s's body rules (StackH1NDJSON,
// StackH1SSE; any other stack: all message), counted into w's received
// side. Each body needs its own; it is not safe for concurrent use.
func (w *Counter) Body(s Stack) func([]byte) {
	var p parser
	switch s {
	case StackH1NDJSON:
		p = &lineBody{c: &w.in}
	case StackH1SSE:
		p = &lineBody{c: &w.in, sse: true}
	default:
		p = rawBody(&w.in)
	}
	return p.feed
}
