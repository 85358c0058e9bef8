package h2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
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

// grpcLeanConn is the lean gRPC client's connection: unary calls over one
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
// arrive; frames are read in place (h2Reader). A caller that can take the
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

// h2Session is one HTTP/2 connection of a grpcLeanConn.
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

// leanCall is one call in flight. A VU reuses its own across calls: done
// carries exactly one value per completed call.
type Call struct {
	id          uint32
	done        chan struct{}
	gotHeaders  bool
	body        []byte
	recvUnacked int64
	err         error // the call's outcome: nil, a status error, or errRefused
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
			err = s.write(call.id, method, req, deadline, hasDeadline)
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
func (s *h2Session) write(id uint32, method string, req []byte, deadline time.Time, hasDeadline bool) error {
	s.hbuf.Reset()
	if s.hdrStable && method == s.hdrMethod {
		s.hbuf.Write(s.hdrBlock)
	} else {
		for _, f := range [...][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method},
			{":authority", s.authority}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			s.henc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		b := s.hbuf.Bytes()
		s.hdrStable = s.tableFull && method == s.hdrMethod && bytes.Equal(b, s.hdrBlock)
		s.hdrMethod, s.hdrBlock = method, append(s.hdrBlock[:0], b...)
	}
	if hasDeadline {
		s.hbuf.Write(appendTimeoutField(s.hbuf.AvailableBuffer(), time.Until(deadline)))
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

// readWhile waits until call (when not nil) is complete and wait (when not
// nil) reports false, reading the connection whenever no other caller is.
// A call abandoned because ctx ended is reset on the wire.
func (s *h2Session) readWhile(ctx context.Context, call *Call, wait func() bool) error {
	var done <-chan struct{}
	if call != nil {
		done = call.done
	}
	for {
		if wait != nil && !wait() {
			return nil
		}
		select {
		case <-done:
			return nil
		case s.token <- struct{}{}:
			finished, err := s.read(ctx, call, wait)
			<-s.token
			if finished {
				return nil
			}
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return s.abandon(ctx, call)
		}
	}
}

// read is the token holder's loop: frames are read and handled until call
// completes, wait reports false, the connection fails, or ctx ends.
func (s *h2Session) read(ctx context.Context, call *Call, wait func() bool) (bool, error) {
	s.watch(ctx)
	defer func() {
		s.wakeMu.Lock()
		s.readerCtx = nil
		s.wakeMu.Unlock()
	}()
	for {
		if call != nil {
			select {
			case <-call.done:
				return true, nil
			default:
			}
		}
		if wait != nil && !wait() {
			return false, nil
		}
		f, err := s.rd.next()
		if err == nil {
			err = s.handle(&f)
		}
		var se http2.StreamError
		switch {
		case err == nil:
		case errors.As(err, &se):
			// One stream's frames were bad; the connection reads on.
			s.reset(se.StreamID, se.Code)
			s.complete(se.StreamID, status.Errorf(codes.Internal, "stream error: %v", se))
		case isTimeout(err):
			// h2Reader takes only whole frames: the connection stays
			// usable, a frame's first bytes kept for the next reader.
			return false, s.abandon(ctx, call)
		default:
			s.fail(err)
			if call == nil {
				return false, status.Error(codes.Unavailable, "connection failed: "+err.Error())
			}
			<-call.done // completed by fail, if not before
			return true, nil
		}
	}
}

// watch makes ctx the reader's context: the socket gets ctx's deadline,
// and ctx's end sets a past one, which wakes the blocked read. ctx's end
// is checked here too, for a context watched earlier that ended between
// readers (its AfterFunc found no reader of its own then).
func (s *h2Session) watch(ctx context.Context) {
	d, _ := ctx.Deadline()
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	s.readerCtx = ctx
	if s.watched != ctx {
		if s.unwatch != nil {
			s.unwatch()
		}
		s.watched = ctx
		s.unwatch = context.AfterFunc(ctx, func() {
			s.wakeMu.Lock()
			defer s.wakeMu.Unlock()
			if s.readerCtx == ctx {
				s.setReadDeadline(clientio.Wake)
			}
		})
	}
	if ctx.Err() != nil {
		d = clientio.Wake
	}
	s.setReadDeadline(d)
}

// setReadDeadline arms the socket's read deadline unless it holds d
// already; the caller holds wakeMu.
func (s *h2Session) setReadDeadline(d time.Time) {
	if !d.Equal(s.readDL) {
		s.conn.SetReadDeadline(d)
		s.readDL = d
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// abandon gives up on call because ctx ended: a call still in flight is
// forgotten and reset on the wire; one that completed meanwhile consumes
// its completion. Either way the caller reports ctx's error.
func (s *h2Session) abandon(ctx context.Context, call *Call) error {
	cerr := ctx.Err()
	if cerr == nil { // the read deadline, ctx's, fired before ctx's own timer
		cerr = context.DeadlineExceeded
	}
	err := status.FromContextError(cerr).Err()
	if call == nil {
		return err
	}
	if s.forget(call) {
		s.reset(call.id, http2.ErrCodeCancel)
	} else {
		<-call.done
	}
	return err
}

// forget removes call from the connection; false if it already completed.
func (s *h2Session) forget(call *Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[call.id] != call {
		return false
	}
	delete(s.calls, call.id)
	return true
}

func (s *h2Session) reset(id uint32, code http2.ErrCode) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.fr.WriteRSTStream(id, code) == nil {
		s.flushLocked()
	}
}

// complete ends stream id's call with err (nil: success).
func (s *h2Session) complete(id uint32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls[id]; c != nil {
		delete(s.calls, id)
		c.err = err
		c.done <- struct{}{}
	}
}

// fail ends the connection and every call on it.
func (s *h2Session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	s.conn.Close()
	s.wakeMu.Lock()
	if s.unwatch != nil {
		s.unwatch() // the session no longer holds a place in ctx's children
	}
	s.wakeMu.Unlock()
	st := status.Error(codes.Unavailable, "connection failed: "+err.Error())
	for id, c := range s.calls {
		delete(s.calls, id)
		c.err = st
		c.done <- struct{}{}
	}
}

// handle acts on one frame read by the token holder (h2Reader checked
// its shape).
func (s *h2Session) handle(f *h2Frame) error {
	switch f.typ {
	case http2.FrameData:
		return s.data(f)
	case http2.FrameHeaders:
		s.headers(&s.rd.head)
	case http2.FrameRSTStream:
		code := http2.ErrCode(binary.BigEndian.Uint32(f.data))
		err := error(errRefused)
		switch code {
		case http2.ErrCodeRefusedStream:
		case http2.ErrCodeCancel:
			err = errResetCancel
		default:
			err = status.Errorf(rstCode(code), "stream reset by the server: %v", code)
		}
		s.complete(f.stream, err)
	case http2.FrameSettings:
		if !f.flags.Has(http2.FlagSettingsAck) {
			if err := s.settings(f); err != nil {
				return err
			}
			return s.flush()
		}
	case http2.FramePing:
		if !f.flags.Has(http2.FlagPingAck) {
			s.wmu.Lock()
			defer s.wmu.Unlock()
			if err := s.fr.WritePing(true, [8]byte(f.data)); err != nil {
				return err
			}
			return s.flushLocked()
		}
	case http2.FrameWindowUpdate:
		if f.stream == 0 {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.sendWin += int64(windowIncrement(f)); s.sendWin > 1<<31-1 {
				return connErr(http2.ErrCodeFlowControl, "connection window over 2^31-1")
			}
		}
	case http2.FrameGoAway:
		// Calls the server never saw are refused (sent again elsewhere);
		// the others finish here; new ones go to a new connection.
		last := binary.BigEndian.Uint32(f.data) & (1<<31 - 1)
		s.mu.Lock()
		s.goaway = true
		var refused []uint32
		for id := range s.calls {
			if id > last {
				refused = append(refused, id)
			}
		}
		s.mu.Unlock()
		for _, id := range refused {
			s.complete(id, errRefused)
		}
	}
	return nil
}

func (s *h2Session) flush() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.flushLocked()
}

// settings applies the server's SETTINGS and writes the ack to s.out.
func (s *h2Session) settings(f *h2Frame) error {
	table, tableSet := uint32(0), false
	s.mu.Lock()
	err := eachSetting(f.data, func(st http2.Setting) error {
		switch st.ID {
		case http2.SettingInitialWindowSize:
			s.peerWin = int64(st.Val)
		case http2.SettingMaxFrameSize:
			s.maxFrame = st.Val
		case http2.SettingHeaderTableSize:
			table, tableSet = st.Val, true
		}
		return nil
	})
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if tableSet {
		// The server's decoder keeps a table of this size: ours must not
		// index beyond it (the next header block announces the size).
		s.henc.SetMaxDynamicTableSizeLimit(table)
		s.tableFull = table >= 4096
		s.hdrStable, s.hdrMethod = false, ""
	}
	return s.fr.WriteSettingsAck()
}

// data takes a DATA frame's payload for its call and returns the window.
func (s *h2Session) data(f *h2Frame) error {
	n := int64(f.length) // padding included: it counts against the window
	ended := f.flags.Has(http2.FlagDataEndStream)
	s.mu.Lock()
	c := s.calls[f.stream]
	var connInc, streamInc uint32
	if s.recvUnacked += n; s.recvUnacked >= grpcLeanWindow/2 {
		connInc, s.recvUnacked = uint32(s.recvUnacked), 0
	}
	var fail error
	if c != nil {
		switch {
		case !c.gotHeaders:
			fail = status.Error(codes.Internal, "reply DATA before HEADERS")
		case len(c.body)+len(f.data) > clientio.MaxBody:
			fail = status.Errorf(codes.ResourceExhausted, "reply over %d bytes", clientio.MaxBody)
		case ended:
			fail = status.Error(codes.Internal, "server closed the stream without sending trailers")
		default:
			c.body = append(c.body, f.data...)
			if c.recvUnacked += n; c.recvUnacked >= grpcLeanWindow/2 {
				streamInc, c.recvUnacked = uint32(c.recvUnacked), 0
			}
		}
	}
	s.mu.Unlock()
	if fail != nil {
		if !ended {
			s.reset(f.stream, http2.ErrCodeCancel)
		}
		s.complete(f.stream, fail)
	}
	if connInc == 0 && streamInc == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if connInc > 0 {
		if err := s.fr.WriteWindowUpdate(0, connInc); err != nil {
			return err
		}
	}
	if streamInc > 0 {
		if err := s.fr.WriteWindowUpdate(f.stream, streamInc); err != nil {
			return err
		}
	}
	return s.flushLocked()
}

// headers handles a call's reply headers, trailers, or trailers-only reply.
func (s *h2Session) headers(f *h2Head) {
	s.mu.Lock()
	c := s.calls[f.stream]
	first := c != nil && !c.gotHeaders
	if first {
		c.gotHeaders = true
	}
	s.mu.Unlock()
	if c == nil {
		return
	}
	var err error
	switch {
	case f.truncated:
		err = status.Errorf(codes.Internal, "reply headers over %d bytes", clientio.MaxHead)
	case first && f.status != "200":
		code, _ := strconv.Atoi(f.status)
		err = status.Errorf(httpStatusCode(code), "unexpected HTTP status %s", f.status)
	case first && !isGRPCContentType(f.contentType):
		err = status.Errorf(codes.Unknown, "reply content-type %q is not application/grpc", f.contentType)
	case !f.endStream && !first:
		err = status.Error(codes.Internal, "trailers without END_STREAM")
	case !f.endStream:
		return // the reply's headers; its messages and trailers follow
	default:
		err = trailerStatus(f)
	}
	if !f.endStream {
		s.reset(f.stream, http2.ErrCodeCancel)
	}
	s.complete(f.stream, err)
}

func isGRPCContentType(ct string) bool {
	const base = "application/grpc"
	if len(ct) < len(base) || ct[:len(base)] != base {
		return false
	}
	return len(ct) == len(base) || ct[len(base)] == '+' || ct[len(base)] == ';'
}

// trailerStatus is the call's outcome from its trailers.
func trailerStatus(f *h2Head) error {
	v := f.grpcStatus
	if v == "" {
		return status.Error(codes.Internal, "reply trailers without grpc-status")
	}
	code, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return status.Errorf(codes.Internal, "malformed grpc-status %q", v)
	}
	if code == 0 {
		return nil
	}
	return status.Error(codes.Code(code), decodeGRPCMessage(f.grpcMessage))
}

// decodeGRPCMessage undoes grpc-message's percent-encoding; a malformed
// escape is kept as it is, as grpc-go does.
func decodeGRPCMessage(m string) string {
	if !bytes.ContainsRune([]byte(m), '%') {
		return m
	}
	out := make([]byte, 0, len(m))
	for i := 0; i < len(m); i++ {
		if m[i] == '%' && i+2 < len(m) {
			if v, err := strconv.ParseUint(m[i+1:i+3], 16, 8); err == nil {
				out = append(out, byte(v))
				i += 2
				continue
			}
		}
		out = append(out, m[i])
	}
	return string(out)
}

// httpStatusCode maps a non-200 HTTP status to a gRPC code, as grpc-go's
// client does.
func httpStatusCode(st int) codes.Code {
	switch st {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}

// rstCode maps an RST_STREAM error code to a gRPC code, as grpc-go's
// client does.
func rstCode(c http2.ErrCode) codes.Code {
	switch c {
	case http2.ErrCodeCancel:
		return codes.Canceled
	case http2.ErrCodeEnhanceYourCalm:
		return codes.ResourceExhausted
	case http2.ErrCodeInadequateSecurity:
		return codes.PermissionDenied
	}
	return codes.Internal
}

// appendGRPCMessage appends msg as one length-prefixed, uncompressed gRPC
// message.
func AppendGRPCMessage(b []byte, msg proto.Message) ([]byte, error) {
	b = append(b, 0, 0, 0, 0, 0)
	b, err := proto.MarshalOptions{}.MarshalAppend(b, msg)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding request: %v", err)
	}
	binary.BigEndian.PutUint32(b[1:5], uint32(len(b)-5))
	return b, nil
}

// decodeGRPCReply decodes a unary reply: exactly one uncompressed message.
func decodeGRPCReply(b []byte, out proto.Message) error {
	if len(b) < 5 {
		return status.Errorf(codes.Internal, "reply of %d bytes is not a gRPC message", len(b))
	}
	if b[0] != 0 {
		return status.Errorf(codes.Internal, "reply message flag %d: compressed, but no compression was asked for", b[0])
	}
	if n := binary.BigEndian.Uint32(b[1:5]); int64(n) != int64(len(b)-5) {
		return status.Errorf(codes.Internal, "reply holds %d bytes after a message of %d: a unary reply is one message", len(b)-5, n)
	}
	if err := proto.Unmarshal(b[5:], out); err != nil {
		return status.Errorf(codes.Internal, "decoding reply: %v", err)
	}
	return nil
}

// grpcWindow is the client's flow-control window per stream and per
// connection.
const GRPCWindow = 1 << 20
