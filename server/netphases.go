package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Phased timeouts for the net/http engine's HTTP/1 connections.
//
// Given timeouts, net/http re-arms the connection's deadlines for every
// keep-alive request (header, whole request, write, idle) and reads the
// clock for three of them; through the watchdog each deadline is an
// atomic store, but the clock reads and calls stay, the last of what the
// timeouts cost per GET (issue 17). Here net/http gets no timeouts for
// HTTP/1: the connection's phase follows net/http's own state hooks and
// reads, and the watchdog applies the phase's limit, with net/http's
// semantics:
//
//	new       accept → headers read               min(ReadHeader, Read)
//	idle      reply done (StateIdle) → next byte  Idle
//	reading   next byte → headers read            min(ReadHeader, Read)
//	handling  headers read (StateActive) → idle   Write
//
// and the body's: at StateActive the read deadline is set to the
// request's first byte plus Read, as net/http's ReadTimeout does; net/http
// clears it itself when the body ends (or at once, for a request without
// one) to start its background read. A blocked read past its limit fails
// with a timeout (a body read is answered 408 by the core); a blocked
// write fails and the connection closes.
//
// h2c connections keep net/http's own per-stream timeouts: net/http hands
// them to an HTTP/2 server set up by a twin http.Server that has the
// timeouts (the only way to give HTTP/2 streams limits that HTTP/1 does
// not have), and the watchdog leaves them out of phases (phaseOff).

// httpPhasedConn is a watched connection of the net/http engine.
type httpPhasedConn struct {
	*watchedConn
}

func (c httpPhasedConn) Read(p []byte) (int, error) {
	c.reading.Add(1)
	if c.readPast.Load() {
		c.reading.Add(-1)
		return 0, os.ErrDeadlineExceeded
	}
	var n int
	var err error
	if c.phase.Load() == phaseIdle {
		n, err = c.idle.Read(p) // the next request's first read
	} else {
		n, err = c.Conn.Read(p)
	}
	c.reading.Add(-1)
	// A new connection's first request counts from the accept, as
	// net/http's does; bytes during handling are the background read's
	// (the phase changes at net/http's StateIdle).
	if n > 0 && c.phase.Load() == phaseIdle {
		c.enter(phaseReading)
	}
	return n, err
}

// SetReadDeadline keeps a deadline that has already passed in the
// connection (readPast) when no Read is in progress: Read then fails at
// once, as the socket would have made it fail, and the next deadline set
// clears it. net/http sets one on every request to stop its background
// read (a past deadline, then none) and the background goroutine has
// rarely started its read by then, so two socket deadline calls and two
// locks per request are spared. A Read in progress still gets the
// socket's deadline, which wakes it. reading and readPast are ordered
// as two flags each written before the other is read (sequentially
// consistent atomics): either Read sees readPast, or this sees reading.
func (c httpPhasedConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && t.UnixNano() <= c.w.now.Load() {
		c.readPast.Store(true)
		if c.reading.Load() == 0 {
			return nil
		}
	} else if c.readPast.Load() {
		c.readPast.Store(false)
	}
	return c.watchedConn.SetReadDeadline(t)
}

// SetDeadline is SetReadDeadline's and SetWriteDeadline's.
func (c httpPhasedConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// phaseHook is the net/http server's ConnState hook: net/http calls it
// with StateActive once a request's headers are read (before the handler)
// and StateIdle once its reply is written.
func phaseHook(read time.Duration) func(net.Conn, http.ConnState) {
	return func(nc net.Conn, st http.ConnState) {
		c, ok := nc.(httpPhasedConn)
		if !ok {
			return
		}
		switch st {
		case http.StateActive: // (h2c connections are not reported here)
			from := c.since.Load() // the request's first byte
			c.enter(phaseHandling)
			_ = c.setDeadlineNs(&c.read, from+int64(read), c.Conn.SetReadDeadline)
		case http.StateIdle:
			c.enter(phaseIdle)
		}
	}
}

// newPhasedHTTPServer is newHTTPServer for a listener from
// newHTTPWatchdog: HTTP/1 in phases, h2c with net/http's timeouts.
func newPhasedHTTPServer(h http.Handler, protos *http.Protocols, t Timeouts, shares *replyShares) (*http.Server, error) {
	hs := newHTTPServer(h, protos, t, shares)
	hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout = 0, 0, 0, 0
	hs.ConnState = phaseHook(t.Read)
	if !protos.UnencryptedHTTP2() {
		return hs, nil
	}
	twin := newHTTPServer(h, protos, t, shares)
	// Serve on a closed listener only runs the twin's HTTP/2 set-up,
	// which registers its h2c hand-off.
	if err := twin.Serve(closedListener{}); !errors.Is(err, net.ErrClosed) {
		return nil, fmt.Errorf("server: setting up h2c: %w", err)
	}
	// net/http's keys for its HTTP/2 hand-offs: with "h2" present, hs
	// keeps this map instead of configuring HTTP/2 itself.
	const h2, h2c = "h2", "unencrypted_http2"
	serveH2, serveH2C := twin.TLSNextProto[h2], twin.TLSNextProto[h2c]
	if serveH2 == nil || serveH2C == nil {
		return nil, errors.New("server: net/http has no HTTP/2 hand-off to configure")
	}
	hs.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){
		h2: func(_ *http.Server, c *tls.Conn, h http.Handler) { serveH2(twin, c, h) },
		h2c: func(_ *http.Server, c *tls.Conn, h http.Handler) {
			if u, ok := c.NetConn().(interface{ UnencryptedNetConn() net.Conn }); ok {
				if pc, ok := u.UnencryptedNetConn().(httpPhasedConn); ok {
					pc.enter(phaseOff)
				}
			}
			serveH2C(twin, c, h) // the twin's timeouts and HTTP/2 settings
		},
	}
	// Shutdown's GOAWAY to h2c connections is registered on the twin.
	hs.RegisterOnShutdown(func() { _ = twin.Shutdown(context.Background()) })
	return hs, nil
}

// newHTTPWatchdog watches ln's connections for newPhasedHTTPServer.
func newHTTPWatchdog(ln net.Listener, t Timeouts) *watchdog {
	w := newPhasedWatchdog(ln, t)
	w.netHTTP = true
	return w
}

// closedListener is a listener that is already closed.
type closedListener struct{}

func (closedListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (closedListener) Close() error              { return nil }
func (closedListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
