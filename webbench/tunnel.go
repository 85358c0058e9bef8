package webbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Tunnel limits (README: limits).
const (
	// TunnelPath is the gRPC-Web-over-WebSocket endpoint.
	TunnelPath = "/bench/grpc-web-ws"
	// MaxCallMessage bounds one call's WebSocket message (id, path and
	// the gRPC-Web request body); a larger one closes the tunnel with
	// 1009 (message too big).
	MaxCallMessage = 1 << 20
	// MaxCalls bounds the calls in flight on one tunnel; the reader waits
	// for one to end before it reads the next call (backpressure, not
	// refusal).
	MaxCalls = 64
	// DefaultMaxDuration bounds a tunnel's life: at the limit it closes
	// with 1001 (going away).
	DefaultMaxDuration = 10 * time.Minute
	// procedurePrefix is the only paths a call may name: the tunnel
	// reaches the RPC services, nothing else on the port.
	procedurePrefix = "/wirebench.v1."
)

// ErrCall marks a malformed call message.
var ErrCall = errors.New("webbench: bad tunnel call")

// call is one parsed call message.
type call struct {
	id   uint32
	path string
	body []byte
}

// parseCall reads [u32 id][u8 path length][path][body]; body aliases msg.
func parseCall(msg []byte) (call, error) {
	if len(msg) < 5 {
		return call{}, fmt.Errorf("%w: %d bytes, want at least 5", ErrCall, len(msg))
	}
	c := call{id: binary.BigEndian.Uint32(msg)}
	n := int(msg[4])
	if len(msg) < 5+n {
		return call{}, fmt.Errorf("%w: path of %d bytes in a %d-byte message", ErrCall, n, len(msg))
	}
	c.path, c.body = string(msg[5:5+n]), msg[5+n:]
	if !strings.HasPrefix(c.path, procedurePrefix) || strings.ContainsAny(c.path, "?#% ") {
		return call{}, fmt.Errorf("%w: path %q is not a %s procedure", ErrCall, c.path, procedurePrefix)
	}
	return c, nil
}

// appendCall encodes a call message (the page's side, in Go for tests and
// Go clients).
func appendCall(dst []byte, id uint32, path string, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = append(dst, byte(len(path)))
	dst = append(dst, path...)
	return append(dst, body...)
}

func (h *Handler) serveTunnel(w http.ResponseWriter, r *http.Request) {
	// The server's per-request read and write timeouts would cut the
	// WebSocket; MaxDuration bounds it instead.
	deadline := time.Now().Add(h.opts.MaxDuration)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
	ws, err := websocket.Accept(w, r, nil) // same origin only (the default)
	if err != nil {
		return // Accept has answered
	}
	ws.SetReadLimit(MaxCallMessage)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	sem := make(chan struct{}, MaxCalls)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		typ, msg, err := ws.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				ws.Close(websocket.StatusGoingAway, "tunnel's time is up")
			}
			return // Read closed the WebSocket with the right status
		}
		if typ != websocket.MessageBinary {
			ws.Close(websocket.StatusUnsupportedData, "binary messages only")
			return
		}
		c, err := parseCall(msg)
		if err != nil {
			ws.Close(websocket.StatusPolicyViolation, err.Error())
			return
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			h.dispatch(ctx, ws, r, c)
		}()
	}
}

// dispatch runs one call through the gRPC-Web handler and sends its reply.
func (h *Handler) dispatch(ctx context.Context, ws *websocket.Conn, outer *http.Request, c call) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.path, bytes.NewReader(c.body))
	if err != nil { // parseCall let through only plain paths
		return
	}
	req.Header.Set("Content-Type", "application/grpc-web+proto")
	req.Header.Set("X-Grpc-Web", "1")
	req.Host, req.RemoteAddr = outer.Host, outer.RemoteAddr
	rw := &callWriter{ctx: ctx, ws: ws, id: c.id, hdr: http.Header{}}
	h.next.ServeHTTP(rw, req)
	rw.finish()
}

// Coalescing of a call's flushes (connect-go flushes after every message
// of a server stream): a flush sends at once when FlushBytes are waiting,
// otherwise within FlushDelay, so a stream of small messages goes in
// WebSocket messages of up to FlushBytes, and a lone message (a unary
// reply, the end of a call) is never held back.
const (
	FlushBytes = 16 << 10
	FlushDelay = 200 * time.Microsecond
)

// callWriter is the http.ResponseWriter of one tunnelled call: the body
// goes back as WebSocket messages, flushes coalesced as above.
type callWriter struct {
	ctx    context.Context
	ws     *websocket.Conn
	id     uint32
	hdr    http.Header
	status int

	mu     sync.Mutex // buf and timer: Write and Flush run in the handler, the timer's send in its own goroutine
	buf    []byte
	timer  *time.Timer
	failed bool
}

func (w *callWriter) Header() http.Header { return w.hdr }

func (w *callWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *callWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf == nil {
		w.buf = binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(p)), w.id)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Flush sends what was written, now if FlushBytes wait, else within
// FlushDelay.
func (w *callWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)-4 >= FlushBytes {
		w.sendLocked()
		return
	}
	if w.timer == nil && len(w.buf) > 4 {
		w.timer = time.AfterFunc(FlushDelay, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.sendLocked()
		})
	}
}

// sendLocked sends the buffer as one message; w.mu is held.
func (w *callWriter) sendLocked() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if len(w.buf) <= 4 || w.failed {
		return
	}
	if err := w.ws.Write(w.ctx, websocket.MessageBinary, w.buf); err != nil {
		w.failed = true
	}
	w.buf = w.buf[:4]
}

// finish sends the rest; a call the handler refused at the HTTP level
// (no gRPC-Web reply: a wrong path, say) gets a trailer frame saying so,
// so the page's call ends.
func (w *callWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status != http.StatusOK || !strings.HasPrefix(w.hdr.Get("Content-Type"), "application/grpc-web") {
		w.buf = binary.BigEndian.AppendUint32(nil, w.id)
		w.buf = appendTrailer(w.buf, fmt.Sprintf("grpc-status: 12\r\ngrpc-message: HTTP status %d\r\n", w.status))
	}
	w.sendLocked()
}

// appendTrailer appends a gRPC-Web trailer frame.
func appendTrailer(dst []byte, trailers string) []byte {
	dst = append(dst, 0x80)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(trailers)))
	return append(dst, trailers...)
}
