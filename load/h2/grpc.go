package h2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/measure"
)

// GRPCConn is the lean gRPC client's connection: unary calls over one
// HTTP/2 connection (h2c with prior knowledge, as grpc-go's insecure
// client), written with nothing but x/net/http2's framer and no goroutine
// of its own.
//
// Why: grpc-go's client hands every call to a writer goroutine and every
// reply back from a reader goroutine, and spends its own CPU per call on
// interceptors, metadata and stream bookkeeping. At one call at a time
// that is all latency: bench/grpc-p50.sh measured grpc-go's client adding
// ~11 µs (ghz ~26 µs) to a 63 µs p50 that a bare framer sees (issue 17),
// while the REST transports are measured with the lean HTTP/1.1 client.
// Here the caller writes its call's HEADERS and DATA in one write, and a
// caller waiting for its reply reads the connection itself (whoever holds
// the read token), completing the other callers' calls as their frames
// arrive; frames are read in place (Reader). A caller that can take the
// read token at once queues its request for its own read to write
// (rawio.Conn.Queue), so one call at a time costs one write(2) and one
// read(2), as an HTTP/1.1 request does (fdReader). --client std keeps
// grpc-go for comparison.
//
// Limits, each an error naming it: a request message must fit the
// server's flow-control window for a stream (65,535 bytes unless the
// server announces more); a reply of over maxBody bytes fails the call.
// A server's PING is answered when a caller next reads, so a connection
// left idle between calls does not answer keepalive pings until then.
type GRPCConn struct {
	addr string
	dial measure.DialFunc

	mu   sync.Mutex
	sess *h2Session // nil until the first call, or after the last one failed
}

func NewGRPCConn(addr string, dial measure.DialFunc) *GRPCConn {
	return &GRPCConn{addr: addr, dial: dial}
}

// grpcLeanWindow is what the lean client announces as its receive window,
// per stream and per connection: the same as the grpc-go client's here.
const grpcLeanWindow = GRPCWindow

// maxStreamsUnannounced caps the concurrent calls on a connection whose
// server announces no SETTINGS_MAX_CONCURRENT_STREAMS (no limit).
const maxStreamsUnannounced = 1 << 12

// errRefused is a call that the server never processed (GOAWAY with a
// lower last stream, REFUSED_STREAM, or a connection already going away):
// it is sent once more, on a new connection, as grpc-go does.
var errRefused = errors.New("stream refused by the server")

// h2Session is one HTTP/2 connection of a GRPCConn.
type h2Session struct {
	conn      net.Conn
	authority string

	// token is the right to read: a caller holds it while its value sits
	// in the channel. The reader state below is its holder's alone.
	token chan struct{}
	rd    *Reader
	raw   *rawio.Conn // conn, when it can queue a write for its next read

	// wakeMu guards the reader's watch on its context: ctx's end wakes
	// the reader whose context it is, and no other. One AfterFunc is kept
	// per session and replaced only when a reader comes with another
	// context (a VU reading with the run's context call after call
	// registers once); readDL avoids re-arming an unchanged deadline.
	wakeMu    sync.Mutex
	readerCtx context.Context // the token holder's, nil between readers
	watched   context.Context // the context unwatch stops watching
	unwatch   func() bool
	readDL    time.Time // the read deadline the socket holds

	wmu  sync.Mutex
	out  outBuf        // frames to write: fr writes here
	fr   *http2.Framer // writes only
	henc *hpack.Encoder
	hbuf bytes.Buffer
	// The last call's header block (without grpc-timeout), by method.
	// Once two calls in a row encode the same bytes, every field was an
	// index into the encoder's table (a field that was inserted would be
	// an index the second time), so encoding them again changes nothing
	// and the bytes are reused: hpack's search and Huffman coding per
	// call were ~0.6 µs of a call's client CPU. Only with the server's
	// full 4,096-byte table: nothing is then evicted by these few fields.
	hdrMethod string
	hdrMeta   [][2]string // the metadata hdrBlock holds: a replay's differs per call
	hdrBlock  []byte
	hdrStable bool
	tableFull bool // the server's decoder has the default table size

	slots chan struct{} // a value per call in flight: the server's stream limit

	mu          sync.Mutex // guards what follows
	calls       map[uint32]*Call
	nextID      uint32
	sendWin     int64 // connection-level send window
	peerWin     int64 // the server's initial window per stream
	maxFrame    uint32
	recvUnacked int64 // connection-level bytes received since our last WINDOW_UPDATE
	goaway      bool
	err         error // the connection failed: every call on it fails
}

// Call is one call in flight. A VU reuses its own across calls: done
// carries exactly one value per completed call.
type Call struct {
	id          uint32
	done        chan struct{}
	gotHeaders  bool
	body        []byte
	recvUnacked int64
	err         error // the call's outcome: nil, a status error, or errRefused
	// trace is the traceparent value to send with the call (empty: none);
	// set by GRPCClient.SetTraceparent.
	trace []byte
	// meta is metadata sent with every call (lower-case keys), encoded
	// with the fixed fields, so a run's constant metadata joins their
	// cached header block; set by GRPCClient.SetMetadata.
	meta [][2]string
}

// NewCall returns a Call ready for Invoke; a VU reuses one for all its
// calls.
func NewCall() Call { return Call{done: make(chan struct{}, 1)} }

// Reply is the last reply's message, its 5-byte prefix included, valid
// until the next Invoke.
func (c *Call) Reply() []byte { return c.body }

// outBuf is where the session's framer writes: frames are sent in one
// write when flushed (or queued for the next read).
type outBuf []byte

func (b *outBuf) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// Invoke makes one unary call: in is sent, the reply decoded into out. A
// call refused before the server processed it is sent once more on a new
// connection. The error is a gRPC status error, as grpc-go's Invoke
// returns: Unavailable for a connection that fails, DeadlineExceeded or
// Canceled when ctx ends first.
func (c *GRPCConn) Invoke(ctx context.Context, call *Call, method string, req []byte, out proto.Message) error {
	for attempt := 0; ; attempt++ {
		s, err := c.session(ctx)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return status.FromContextError(ctxErr).Err()
			}
			return status.Error(codes.Unavailable, err.Error())
		}
		err = s.call(ctx, call, method, req)
		if err == errRefused && attempt == 0 {
			continue
		}
		if err == errRefused {
			return status.Error(codes.Unavailable, "stream refused by the server twice")
		}
		if err != nil {
			return err
		}
		return decodeGRPCReply(call.body, out)
	}
}

// session returns the live connection, dialling one if there is none.
func (c *GRPCConn) session(ctx context.Context) (*h2Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sess; s != nil {
		s.mu.Lock()
		live := s.err == nil && !s.goaway
		s.mu.Unlock()
		if live {
			return s, nil
		}
		c.sess = nil
	}
	s, err := dialH2Session(ctx, c.dial, c.addr)
	if err != nil {
		return nil, err
	}
	c.sess = s
	return s, nil
}

func (c *GRPCConn) Close() {
	c.mu.Lock()
	s := c.sess
	c.sess = nil
	c.mu.Unlock()
	if s != nil {
		s.fail(errors.New("client closed"))
	}
}

// dialH2Session connects, sends the client preface and our settings, and
// reads until the server's SETTINGS: its stream limit sizes the slots.
func dialH2Session(ctx context.Context, dial measure.DialFunc, addr string) (*h2Session, error) {
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &h2Session{
		conn: conn, authority: addr, token: make(chan struct{}, 1),
		rd: NewReader(conn), calls: make(map[uint32]*Call),
		nextID: 1, sendWin: 65535, peerWin: 65535, maxFrame: 16384, tableFull: true,
	}
	s.raw, _ = conn.(*rawio.Conn)
	s.fr = http2.NewFramer(&s.out, nil)
	s.henc = hpack.NewEncoder(&s.hbuf)
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(clientio.Wake) })
	err = s.handshake()
	if !stop() || err != nil {
		conn.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("HTTP/2 handshake with %s: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	return s, nil
}

func (s *h2Session) handshake() error {
	s.out = append(s.out, http2.ClientPreface...)
	if err := s.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: grpcLeanWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: clientio.MaxHead},
	); err != nil {
		return err
	}
	if err := s.fr.WriteWindowUpdate(0, grpcLeanWindow-65535); err != nil {
		return err
	}
	if err := s.flushLocked(); err != nil {
		return err
	}
	// The server's first frame must be its SETTINGS (RFC 9113 §3.4).
	f, err := s.rd.next()
	if err != nil {
		var ce *h2ConnError
		if errors.As(err, &ce) {
			return fmt.Errorf("server's first frame: %w: not an HTTP/2 (gRPC) server?", err)
		}
		return err
	}
	if f.typ != http2.FrameSettings || f.flags.Has(http2.FlagSettingsAck) {
		return fmt.Errorf("server's first frame is %v, not SETTINGS: not an HTTP/2 (gRPC) server", f.typ)
	}
	streams := uint32(maxStreamsUnannounced)
	eachSetting(f.data, func(st http2.Setting) error {
		if st.ID == http2.SettingMaxConcurrentStreams {
			streams = min(max(st.Val, 1), maxStreamsUnannounced)
		}
		return nil
	})
	s.slots = make(chan struct{}, streams)
	if err := s.settings(&f); err != nil {
		return err
	}
	return s.flush()
}

// flushLocked writes the frames the framer has written out; the caller
// holds wmu (or is alone: the handshake).
func (s *h2Session) flushLocked() error {
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.conn.Write(s.out)
	s.out = s.out[:0]
	return err
}

// call sends one call and waits for its end: nil with call.body holding
// the reply's messages, a status error, or errRefused.
func (s *h2Session) call(ctx context.Context, call *Call, method string, req []byte) error {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	defer func() { <-s.slots }()
	if len(req) > int(s.peerWindow()) {
		return status.Errorf(codes.ResourceExhausted, "request of %d bytes exceeds the server's flow-control window per stream (%d bytes); the lean client does not wait for window updates within a call: use --client std", len(req), s.peerWindow())
	}
	// The connection's window may be spent by other calls' requests until
	// the server's WINDOW_UPDATE, which only a reader sees. The stream ID
	// is taken under wmu: IDs must reach the server in increasing order.
	deadline, hasDeadline := ctx.Deadline()
	reading := false // holding the token, with the request queued for our read
	for {
		s.wmu.Lock()
		ok, alone, err := s.open(call, len(req))
		if ok {
			err = s.write(call.id, method, req, deadline, hasDeadline, call.trace, call.meta)
			if err == nil {
				reading, err = s.send(alone)
			}
			s.wmu.Unlock()
			if err != nil {
				if reading {
					<-s.token
				}
				s.fail(err) // completes call
				<-call.done
				return status.Error(codes.Unavailable, err.Error())
			}
			break
		}
		s.wmu.Unlock()
		if err != nil {
			return err
		}
		if err := s.readWhile(ctx, nil, func() bool { return s.connWindow() < int64(len(req)) }); err != nil {
			return err
		}
	}
	if reading {
		finished, err := s.read(ctx, call, nil)
		<-s.token
		if !finished && err != nil {
			return err
		}
		reading = finished
	}
	if !reading {
		if err := s.readWhile(ctx, call, nil); err != nil {
			return err
		}
	}
	if call.err == errResetCancel {
		// As grpc-go's client: a server cancels a call whose deadline
		// passed, and its reset may arrive before our own timer fires.
		if d, ok := ctx.Deadline(); ok && !d.After(time.Now()) {
			return status.Error(codes.DeadlineExceeded, "deadline exceeded (the server reset the stream: CANCEL)")
		}
	}
	return call.err
}

// errResetCancel is a call the server reset with CANCEL.
var errResetCancel = status.Error(codes.Canceled, "stream reset by the server: CANCEL")

func (s *h2Session) peerWindow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peerWin
}

func (s *h2Session) connWindow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendWin
}

// open registers call under a new stream ID and reserves n bytes of the
// connection's send window; false when the window is short. alone: no
// other call is in flight. The caller holds wmu.
func (s *h2Session) open(call *Call, n int) (ok, alone bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return false, false, status.Error(codes.Unavailable, s.err.Error())
	case s.goaway || s.nextID > 1<<31-1:
		s.goaway = true // stream IDs used up: the next call dials anew
		return false, false, errRefused
	case s.sendWin < int64(n):
		return false, false, nil
	}
	s.sendWin -= int64(n)
	call.id, call.gotHeaders, call.body, call.recvUnacked, call.err = s.nextID, false, call.body[:0], 0, nil
	s.nextID += 2
	s.calls[call.id] = call
	return true, len(s.calls) == 1, nil
}

// send sends the frames written so far; the caller holds wmu. When the
// read token is free, the caller takes it (true) and the frames are queued
// for its own next read to write (rawio.Conn.Queue): a caller that reads
// next writes with that read. Alone on the connection, that read also
// waits before it tries: nothing else is due before this call's reply.
// Otherwise (another caller is reading, or the connection cannot queue)
// they are written now.
func (s *h2Session) send(alone bool) (bool, error) {
	if s.raw != nil {
		select {
		case s.token <- struct{}{}:
			s.raw.Queue(s.out, alone)
			s.out = s.out[:0]
			return true, nil
		default:
		}
	}
	return false, s.flushLocked()
}

// write writes the call's HEADERS and DATA frames to s.out; the caller
// holds wmu.
func (s *h2Session) write(id uint32, method string, req []byte, deadline time.Time, hasDeadline bool, trace []byte, meta [][2]string) error {
	s.hbuf.Reset()
	if s.hdrStable && method == s.hdrMethod && slices.Equal(meta, s.hdrMeta) {
		s.hbuf.Write(s.hdrBlock)
	} else {
		for _, f := range [...][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method},
			{":authority", s.authority}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			s.henc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		for _, f := range meta {
			s.henc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		b := s.hbuf.Bytes()
		s.hdrStable = s.tableFull && method == s.hdrMethod && bytes.Equal(b, s.hdrBlock)
		s.hdrMethod, s.hdrBlock, s.hdrMeta = method, append(s.hdrBlock[:0], b...), append(s.hdrMeta[:0], meta...)
	}
	if hasDeadline {
		s.hbuf.Write(appendTimeoutField(s.hbuf.AvailableBuffer(), time.Until(deadline)))
	}
	if len(trace) > 0 {
		s.hbuf.Write(appendLiteralField(s.hbuf.AvailableBuffer(), "traceparent", trace))
	}
	s.mu.Lock()
	maxFrame := int(s.maxFrame)
	s.mu.Unlock()
	if s.hbuf.Len() > maxFrame {
		return fmt.Errorf("request headers of %d bytes exceed the server's frame size %d", s.hbuf.Len(), maxFrame)
	}
	if err := s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.hbuf.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	for {
		n := min(len(req), maxFrame)
		if err := s.fr.WriteData(id, n == len(req), req[:n]); err != nil {
			return err
		}
		if req = req[n:]; len(req) == 0 {
			return nil
		}
	}
}

// appendLiteralField appends name: value as an HPACK literal never
// indexed, both strings plain (a fresh value every call: indexing it would
// only evict the stable fields). Names and values here are under 127 bytes.
func appendLiteralField(b []byte, name string, value []byte) []byte {
	b = append(b, 0x10, byte(len(name)))
	b = append(b, name...)
	b = append(b, byte(len(value)))
	return append(b, value...)
}

// appendTimeoutField appends grpc-timeout: d as an HPACK literal never
// indexed (a different value every call) with a literal name, Huffman
// coded where shorter: the bytes hpack's Encoder writes for a sensitive field
// (TestTimeoutField), without its table search and string building,
// ~0.6 µs per call of the client's CPU.
func appendTimeoutField(b []byte, d time.Duration) []byte {
	var tmp [16]byte
	v := string(appendGRPCTimeout(tmp[:0], d)) // at most 9 bytes: a length in one byte
	b = append(b, 0x10)
	b = append(b, grpcTimeoutName...)
	if n := hpack.HuffmanEncodeLength(v); n < uint64(len(v)) { // as the Encoder: Huffman when shorter
		b = append(b, 0x80|byte(n))
		return hpack.AppendHuffmanString(b, v)
	}
	b = append(b, byte(len(v)))
	return append(b, v...)
}

// grpcTimeoutName is "grpc-timeout" as an HPACK string literal, Huffman
// coded.
var grpcTimeoutName = hpack.AppendHuffmanString([]byte{0x80 | byte(hpack.HuffmanEncodeLength("grpc-timeout"))}, "grpc-timeout")

// grpcTimeout renders d as a grpc-timeout value: at most 8 digits and a
// unit, rounded up (the gRPC over HTTP/2 spec).
func grpcTimeout(d time.Duration) string { return string(appendGRPCTimeout(nil, d)) }

func appendGRPCTimeout(b []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(b, "1n"...)
	}
	for _, u := range [...]struct {
		unit byte
		d    time.Duration
	}{{'n', time.Nanosecond}, {'u', time.Microsecond}, {'m', time.Millisecond}, {'S', time.Second}, {'M', time.Minute}} {
		if v := ceilDiv(d, u.d); v < 1e8 {
			return append(strconv.AppendInt(b, int64(v), 10), u.unit)
		}
	}
	return append(strconv.AppendInt(b, int64(ceilDiv(d, time.Hour)), 10), 'H') // below 1e8 for any Duration
}

func ceilDiv(a, b time.Duration) time.Duration {
	if a%b != 0 {
		return a/b + 1
	}
	return a / b
}
