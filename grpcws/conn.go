package grpcws

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// ErrNotBinary is returned by a tunnel's Read when the peer sends a text
// message: a tunnel carries bytes only (the connection is closed, 1003).
var ErrNotBinary = errors.New("grpcws: text message in a binary tunnel")

// wsConn is a WebSocket as a net.Conn: each Write is one binary message,
// Read reads the messages' bytes in order, across message boundaries.
// gorilla/websocket allows one reader and one writer at a time; the
// mutexes make Read and Write each safe for concurrent use, as net.Conn
// promises.
type wsConn struct {
	ws  *websocket.Conn
	rmu sync.Mutex
	r   io.Reader // the message being read, nil between messages
	wmu sync.Mutex
	// wdl is the write deadline (unix nanoseconds, 0: none). gorilla keeps
	// its own in a plain field read by the writer, and grpc-go sets
	// deadlines while its writer goroutine writes: so it is stored here and
	// handed to gorilla under wmu, and set on the socket at once to
	// interrupt a write already blocked.
	wdl atomic.Int64
}

func newConn(ws *websocket.Conn) *wsConn { return &wsConn{ws: ws} }

func (c *wsConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		if c.r == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
					return 0, io.EOF
				}
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseUnsupportedData, "binary messages only"), time.Now().Add(time.Second))
				return 0, ErrNotBinary
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if errors.Is(err, io.EOF) {
			c.r = nil
			if n == 0 {
				continue // an empty message, or the end of one: the next
			}
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("grpcws: read: %w", err)
		}
		return n, nil
	}
}

func (c *wsConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var dl time.Time
	if ns := c.wdl.Load(); ns != 0 {
		dl = time.Unix(0, ns)
	}
	if err := c.ws.SetWriteDeadline(dl); err != nil {
		return 0, err
	}
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close sends a normal close frame (best effort, 1 s) and closes the
// socket.
func (c *wsConn) Close() error {
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return c.ws.Close()
}

func (c *wsConn) LocalAddr() net.Addr  { return c.ws.LocalAddr() }
func (c *wsConn) RemoteAddr() net.Addr { return c.ws.RemoteAddr() }

func (c *wsConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// SetReadDeadline: gorilla sets the socket's at once (safe: net.Conn).
func (c *wsConn) SetReadDeadline(t time.Time) error { return c.ws.SetReadDeadline(t) }

func (c *wsConn) SetWriteDeadline(t time.Time) error {
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	c.wdl.Store(ns)
	return c.ws.NetConn().SetWriteDeadline(t)
}
