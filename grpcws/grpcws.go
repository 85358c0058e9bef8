// Package grpcws tunnels gRPC over a WebSocket, as GoGRPCBridge does for
// browsers: the WebSocket carries the raw bytes of one HTTP/2 connection
// (the gRPC client's preface, frames and all), one WebSocket binary
// message per write. The server side hands each accepted WebSocket, as a
// net.Conn, to an ordinary *grpc.Server through a Listener, so the
// tunnelled services are the very same as on the gRPC port; the client
// side is a dialer for grpc.WithContextDialer.
//
//	ln := grpcws.NewListener(addr)
//	go grpcServer.Serve(ln)
//	mux.Handle("/grpc-ws", grpcws.Handler(ln))
//
//	conn, err := grpc.NewClient("passthrough:///tunnel",
//		grpc.WithContextDialer(grpcws.Dialer("ws://127.0.0.1:8080/grpc-ws")),
//		grpc.WithTransportCredentials(insecure.NewCredentials()))
package grpcws

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// MaxMessage is the largest WebSocket message the server side reads: one
// write of the peer's HTTP/2 connection. grpc-go writes at most its write
// buffer (32 KiB by default) at once, so 1 MiB leaves room for other
// clients; a larger message closes the tunnel with status 1009 (message
// too big). gRPC's own message limit applies inside the tunnel as on the
// gRPC port.
const MaxMessage = 1 << 20

// ErrClosed is returned by Accept after Close, and by the handler's
// upgrade once the listener is closed.
var ErrClosed = errors.New("grpcws: listener closed")

// Listener is a net.Listener whose connections are WebSockets accepted by
// its Handler. It is safe for concurrent use.
type Listener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewListener returns a listener reporting addr as its address (the REST
// port the WebSockets arrive on; nil for none).
func NewListener(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next tunnelled connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	}
}

// Close stops Accept; tunnels already handed out stay open until their
// server closes them.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address given to NewListener.
func (l *Listener) Addr() net.Addr {
	if l.addr == nil {
		return tunnelAddr{}
	}
	return l.addr
}

type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "websocket" }
func (tunnelAddr) String() string  { return "grpc-ws" }

// bufferSize is the upgrader's and dialer's read and write buffer: a
// whole write of grpc-go (its 32 KiB write buffer) goes out as one frame.
const bufferSize = 32 << 10

var upgrader = websocket.Upgrader{ReadBufferSize: bufferSize, WriteBufferSize: bufferSize}

// Handler upgrades each request to a WebSocket and hands it to ln's
// Accept as a net.Conn carrying binary messages. The handler returns when
// the tunnel closes (the connection's goroutine is the tunnel's).
func Handler(ln *Listener) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ln.done:
			http.Error(w, "grpc-ws: server closing", http.StatusServiceUnavailable)
			return
		default:
		}
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has written the error response
		}
		// Upgrade hijacked the connection: the server's per-request
		// deadlines are gone with it. A tunnel is a connection, bounded
		// by the gRPC server's own limits (idle connections, keepalive,
		// stream deadlines).
		ws.SetReadLimit(MaxMessage) // over it: close 1009, Read fails
		tc := &closeNotifier{Conn: newConn(ws), closed: make(chan struct{})}
		select {
		case ln.conns <- tc:
		case <-ln.done:
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server closing"), time.Now().Add(time.Second))
			ws.Close()
			return
		}
		<-tc.closed
	})
}

// closeNotifier tells the handler that the gRPC server closed the tunnel.
type closeNotifier struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *closeNotifier) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.closed) })
	return err
}

// Dial opens a tunnel to url (ws://host:port/grpc-ws) and returns it as a
// net.Conn for a gRPC client. ctx bounds the handshake only; the
// connection lives until closed.
func Dial(ctx context.Context, url string) (net.Conn, error) {
	ws, resp, err := dialer.DialContext(ctx, url, nil)
	if err != nil {
		if resp != nil {
			err = fmt.Errorf("%w (HTTP %s)", err, resp.Status)
		}
		return nil, fmt.Errorf("grpcws: dial %s: %w", url, err)
	}
	return newConn(ws), nil // the server's replies are bounded by gRPC itself
}

var dialer = websocket.Dialer{ReadBufferSize: bufferSize, WriteBufferSize: bufferSize, HandshakeTimeout: 30 * time.Second}

// Dialer returns a dialer for grpc.WithContextDialer that tunnels every
// connection to url, whatever address gRPC asks for.
func Dialer(url string) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, _ string) (net.Conn, error) { return Dial(ctx, url) }
}
