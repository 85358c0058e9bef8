package h2grpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/idleread"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// conn is one client connection. Its goroutine (serve) reads every frame;
// writes from any goroutine go through wmu. Lock order: never take wmu
// while holding mu.
type conn struct {
	s      *Server
	nc     net.Conn
	src    source // br's: the connection, through idleread after a flush
	br     *bufio.Reader
	fr     *http2.Framer
	ctx    context.Context // cancelled when the connection closes
	cancel context.CancelFunc
	window int32 // our receive window, per stream and for the connection

	wmu  sync.Mutex
	bw   *bufio.Writer
	henc *hpack.Encoder
	hbuf bytes.Buffer
	werr error     // the first write error; later writes are dropped
	wdl  time.Time // the socket's write deadline (WriteTimeout)

	mu           sync.Mutex
	cond         *sync.Cond // windows grew, a stream ended, data arrived, the connection closed
	streams      map[uint32]*stream
	active       uint32 // streams open, against MaxConcurrentStreams
	running      uint32 // handlers running on goroutines of their own (a reset stream's may outlive it)
	maxID        uint32 // the highest stream ID the client opened
	sendWin      int64  // the connection's send window
	peerInitWin  int64  // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerMaxFrame uint32
	closed       bool
	goingAway    bool
	idle         *time.Timer

	recvUnacked int32 // reader only: connection-level bytes received, not yet returned by WINDOW_UPDATE

	flushKick chan struct{} // kickFlush: a flush is owed (capacity 1)
	flusher   sync.Once     // starts flushLoop at the first kick
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		s:            s,
		nc:           nc,
		bw:           bufio.NewWriterSize(nc, 16<<10),
		window:       s.opts.Window,
		streams:      map[uint32]*stream{},
		sendWin:      65535,
		peerInitWin:  65535,
		peerMaxFrame: 16384,
	}
	c.src.nc = nc
	c.src.idle.Init(nc)
	c.br = bufio.NewReaderSize(&c.src, 16<<10)
	c.cond = sync.NewCond(&c.mu)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.SetMaxReadFrameSize(16384) // we never advertise more
	c.fr.MaxHeaderListSize = s.opts.MaxHeaderListSize
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.SetReuseFrames() // a DATA frame's payload is copied out before the next read
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.flushKick = make(chan struct{}, 1)
	return c
}

// kickFlush owes a flush of what was just written: the connection's
// flusher goroutine makes it, after a yield, so that a handler sending
// message after message has them written in one go (grpc-go's loopy
// writer flushes when its queue runs dry, alike). A kick while one is
// owed already is covered by that one: its flush comes after this
// write.
func (c *conn) kickFlush() {
	c.flusher.Do(func() { go c.flushLoop() })
	select {
	case c.flushKick <- struct{}{}:
	default:
	}
}

// flushLoop makes the flushes kickFlush owes until the connection closes.
func (c *conn) flushLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.flushKick:
		}
		runtime.Gosched() // the sender writes its next messages first
		if c.write(func() error { return nil }, true) != nil {
			return
		}
	}
}

// close ends the connection at once; calls in flight see their context
// cancelled and their sends fail.
func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	c.cancel()
	c.nc.Close()
}

// goAway tells the client to open no more streams and closes the
// connection once the open ones end.
func (c *conn) goAway() {
	c.mu.Lock()
	if c.goingAway || c.closed {
		c.mu.Unlock()
		return
	}
	c.goingAway = true
	last, idle := c.maxID, c.active == 0
	c.mu.Unlock()
	c.write(func() error { return c.fr.WriteGoAway(last, http2.ErrCodeNo, nil) }, true)
	if idle {
		c.close()
	}
}

// write runs f under the write lock; flush pushes out everything
// buffered. The reader goroutine writes without flushing and flushes
// before it blocks on a read; every other goroutine flushes.
func (c *conn) write(f func() error, flush bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	if wt := c.s.opts.WriteTimeout; wt > 0 {
		// Any write may reach the socket (a full buffer flushes itself):
		// the deadline is kept at least half a timeout ahead, so a write
		// stalled by a client that does not read fails within
		// [0.5, 1] x WriteTimeout, at one timer update per half timeout.
		if now := time.Now(); c.wdl.Sub(now) < wt/2 {
			c.wdl = now.Add(wt)
			c.nc.SetWriteDeadline(c.wdl)
		}
	}
	err := f()
	if err == nil && flush && c.bw.Buffered() > 0 {
		err = c.bw.Flush()
	}
	if err != nil {
		c.werr = err
		go c.close() // not under wmu's caller's locks
	}
	return err
}

// serve reads the connection until it fails or closes.
func (c *conn) serve() {
	defer c.close()
	opts := &c.s.opts
	c.nc.SetReadDeadline(time.Now().Add(opts.ConnectionTimeout))
	var preface [len(http2.ClientPreface)]byte
	if _, err := io.ReadFull(c.br, preface[:]); err != nil || string(preface[:]) != http2.ClientPreface {
		return
	}
	if c.write(func() error {
		if err := c.fr.WriteSettings(
			http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: opts.MaxConcurrentStreams},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(c.window)},
			http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: opts.MaxHeaderListSize},
		); err != nil {
			return err
		}
		return c.fr.WriteWindowUpdate(0, uint32(c.window-65535))
	}, true) != nil {
		return
	}
	f, err := c.fr.ReadFrame()
	if err != nil {
		return
	}
	if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
		c.write(func() error { return c.fr.WriteGoAway(0, http2.ErrCodeProtocol, []byte("SETTINGS expected")) }, true)
		return
	}
	c.nc.SetReadDeadline(time.Time{})
	c.startIdle()
	for {
		if err := c.frame(f); err != nil {
			c.fail(err)
			return
		}
		if c.br.Buffered() == 0 {
			// Nothing more in hand: push out what this goroutine wrote
			// (replies, acks, window updates) before blocking on a read.
			if c.write(func() error { return nil }, true) != nil {
				return
			}
			c.src.afterFlush = true
		}
		if f, err = c.fr.ReadFrame(); err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				c.resetStream(se.StreamID, se.Code)
				f = nil
				continue
			}
			c.fail(err)
			return
		}
	}
}

// source is the reader's connection. The read after a flush of all
// there was to write is the one that, under load, would find nothing
// yet: idleread makes it, after a yield while yielding pays.
type source struct {
	nc         net.Conn
	idle       idleread.Reader
	afterFlush bool
}

func (s *source) Read(p []byte) (int, error) {
	if s.afterFlush {
		s.afterFlush = false
		return s.idle.Read(p)
	}
	return s.nc.Read(p)
}

// fail answers a connection error with GOAWAY before the connection closes.
func (c *conn) fail(err error) {
	var ce http2.ConnectionError
	code := http2.ErrCodeProtocol
	switch {
	case errors.As(err, &ce):
		code = http2.ErrCode(ce)
	case errors.Is(err, http2.ErrFrameTooLarge):
		code = http2.ErrCodeFrameSize
	case errors.Is(err, errFlowControl):
		code = http2.ErrCodeFlowControl
	case errors.Is(err, errStreamClosed):
		code = http2.ErrCodeStreamClosed
	default:
		return // the connection failed or closed: nobody to tell
	}
	c.mu.Lock()
	last := c.maxID
	c.mu.Unlock()
	c.write(func() error { return c.fr.WriteGoAway(last, code, []byte(err.Error())) }, true)
}

var (
	errFlowControl  = errors.New("h2grpc: flow-control window exceeded")
	errStreamClosed = errors.New("h2grpc: frame on a closed stream")
	errProtocol     = http2.ConnectionError(http2.ErrCodeProtocol)
)

// frame handles one frame on the reader goroutine; an error ends the
// connection.
func (c *conn) frame(f http2.Frame) error {
	switch f := f.(type) {
	case nil:
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		return c.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			c.write(func() error { return c.fr.WritePing(true, f.Data) }, false)
		}
	case *http2.WindowUpdateFrame:
		return c.windowUpdate(f)
	case *http2.MetaHeadersFrame:
		return c.headers(f)
	case *http2.DataFrame:
		return c.data(f)
	case *http2.RSTStreamFrame:
		c.mu.Lock()
		st := c.streams[f.StreamID]
		c.mu.Unlock()
		if st == nil && f.StreamID > c.maxID {
			return errProtocol // a stream never opened
		}
		if st != nil {
			c.endStream(st, true)
		}
	case *http2.PushPromiseFrame:
		return errProtocol // clients may not push
	}
	// GOAWAY from the client (it opens no more streams), PRIORITY and
	// unknown frames need nothing.
	return nil
}

func (c *conn) settings(f *http2.SettingsFrame) error {
	if err := f.ForeachSetting(func(s http2.Setting) error { return s.Valid() }); err != nil {
		return err
	}
	c.mu.Lock()
	f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.peerInitWin
			c.peerInitWin = int64(s.Val)
			for _, st := range c.streams {
				st.sendWin += delta
			}
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame = s.Val
		}
		return nil
	})
	ready := c.waiting(nil)
	c.mu.Unlock()
	c.write(func() error {
		if v, ok := f.Value(http2.SettingHeaderTableSize); ok {
			c.henc.SetMaxDynamicTableSizeLimit(v)
		}
		return c.fr.WriteSettingsAck()
	}, false)
	c.pumpAll(ready)
	return nil
}

func (c *conn) windowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	var ready []*stream
	if f.StreamID == 0 {
		if c.sendWin += int64(f.Increment); c.sendWin > math.MaxInt32 {
			c.mu.Unlock()
			return errFlowControl
		}
		ready = c.waiting(nil)
	} else if st := c.streams[f.StreamID]; st != nil {
		if st.sendWin += int64(f.Increment); st.sendWin > math.MaxInt32 {
			c.mu.Unlock()
			c.resetStream(f.StreamID, http2.ErrCodeFlowControl)
			return nil
		}
		ready = c.waiting(st)
	} else if f.StreamID > c.maxID {
		c.mu.Unlock()
		return errProtocol
	}
	c.mu.Unlock()
	c.pumpAll(ready)
	return nil
}

// waiting lists the streams (only, if not nil) with bytes or a status
// waiting for send window. Under mu.
func (c *conn) waiting(only *stream) []*stream {
	var out []*stream
	for _, st := range c.streams {
		if (only == nil || st == only) && (len(st.pending) > 0 || st.final != nil) {
			out = append(out, st)
		}
	}
	return out
}

// pumpAll sends what the windows now allow on each stream (the reader's
// part of flow control: streams never wait on it themselves).
func (c *conn) pumpAll(sts []*stream) {
	if len(sts) == 0 {
		return
	}
	c.write(func() error {
		for _, st := range sts {
			if err := st.pump(); err != nil {
				return err
			}
		}
		return nil
	}, false)
}

// headers opens a stream (or ends one, as trailers).
func (c *conn) headers(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	c.mu.Lock()
	if st := c.streams[id]; st != nil {
		// Trailers from the client: they must end its side.
		c.mu.Unlock()
		if !f.StreamEnded() {
			c.resetStream(id, http2.ErrCodeProtocol)
			return nil
		}
		c.endOfInput(st)
		return nil
	}
	if id%2 == 0 {
		c.mu.Unlock()
		return errProtocol
	}
	if id <= c.maxID {
		c.mu.Unlock()
		return errStreamClosed
	}
	c.maxID = id
	// Handlers still running count too: a client that opens and resets
	// streams in a loop (rapid reset) gets no more goroutines than streams.
	refuse := c.goingAway || c.active >= c.s.opts.MaxConcurrentStreams || c.running >= c.s.opts.MaxConcurrentStreams
	c.mu.Unlock()
	if refuse {
		c.resetStreamFrame(id, http2.ErrCodeRefusedStream)
		return nil
	}
	if f.Truncated { // the header list is over MaxHeaderListSize
		c.httpError(id, "431")
		return nil
	}
	if f.PseudoValue("method") != "POST" {
		c.httpError(id, "405")
		return nil
	}
	ct := headerValue(f, "content-type")
	if ct != "application/grpc" && !strings.HasPrefix(ct, "application/grpc+") && !strings.HasPrefix(ct, "application/grpc;") {
		c.httpError(id, "415")
		return nil
	}
	st := &stream{c: c, id: id, path: f.PseudoValue("path"), inflow: c.window, eof: f.StreamEnded()}
	if err := st.parseHeaders(f); err != nil {
		c.trailersOnly(id, status.Convert(err), !st.eof)
		return nil
	}
	m := c.s.methods[st.path]
	if m == nil {
		c.trailersOnly(id, unknownMethod(st.path), !st.eof)
		return nil
	}
	st.m = m
	// A unary call without deadline or metadata runs on the connection's
	// own context: nothing to allocate or cancel per call.
	ctx := c.ctx
	if st.md != nil {
		ctx = metadata.NewIncomingContext(ctx, st.md)
	}
	if st.timeout > 0 {
		ctx, st.cancel = context.WithTimeout(ctx, st.timeout)
	} else if m.stream != nil {
		ctx, st.cancel = context.WithCancel(ctx)
	}
	if tp := c.s.opts.Tap; tp != nil {
		tctx, err := tp(ctx, &tap.Info{FullMethodName: st.path, Header: st.md})
		if err != nil {
			st.done()
			s, ok := status.FromError(err)
			if !ok {
				s = status.New(codes.Unavailable, err.Error())
			}
			c.trailersOnly(id, s, !st.eof)
			return nil
		}
		ctx = tctx
	}
	st.ctx = ctx
	c.mu.Lock()
	st.sendWin = c.peerInitWin
	c.streams[id] = st
	c.active++
	if c.idle != nil {
		c.idle.Stop()
	}
	c.mu.Unlock()
	if m.stream != nil {
		c.goHandler(st, st.runStream)
	} else if st.eof {
		c.unary(st)
	}
	return nil
}

// data takes a DATA frame's payload into its stream.
func (c *conn) data(f *http2.DataFrame) error {
	n := int32(f.Length)
	// Connection-level flow control: every byte counts, also on streams
	// already closed, and is returned at once (each stream's own window
	// bounds what is buffered).
	c.recvUnacked += n
	if c.recvUnacked > c.window {
		return errFlowControl
	}
	if c.recvUnacked >= c.window/4 {
		inc := c.recvUnacked
		c.recvUnacked = 0
		c.write(func() error { return c.fr.WriteWindowUpdate(0, uint32(inc)) }, false)
	}
	c.mu.Lock()
	st := c.streams[f.StreamID]
	if st == nil {
		c.mu.Unlock()
		if f.StreamID > c.maxID {
			return errProtocol
		}
		return nil // a stream we ended or reset: tolerated, dropped
	}
	if st.eof {
		c.mu.Unlock()
		c.resetStream(st.id, http2.ErrCodeStreamClosed)
		return nil
	}
	if st.inflow -= n; st.inflow < 0 {
		c.mu.Unlock()
		c.resetStream(st.id, http2.ErrCodeFlowControl)
		return nil
	}
	data := f.Data()
	unary := st.m.stream == nil
	if st.recvErr == nil {
		if unary && len(st.buf)+len(data) > c.s.opts.MaxRecvMsgSize+5 {
			st.recvErr = tooLarge(len(st.buf)+len(data)-5, c.s.opts.MaxRecvMsgSize)
			st.buf = nil
		} else {
			st.buf = append(st.buf, data...)
		}
	}
	back := n - int32(len(data)) // padding is returned at once
	if unary {
		back = n // a unary request is buffered whole (bounded above)
	}
	st.eof = f.StreamEnded()
	c.cond.Broadcast()
	c.mu.Unlock()
	if !st.eof && back > 0 {
		c.returnWindow(st, back, false)
	}
	if st.eof && unary {
		c.unary(st)
	}
	return nil
}

// returnWindow gives n bytes of st's receive window back to the client,
// in batches of a quarter window.
func (c *conn) returnWindow(st *stream, n int32, flush bool) {
	c.mu.Lock()
	if d := min(st.extra, n); d > 0 { // already granted ahead (RecvMsg)
		st.extra -= d
		n -= d
	}
	st.inflow += n
	st.unacked += n
	inc := st.unacked
	if inc < c.window/4 || st.eof {
		c.mu.Unlock()
		return
	}
	st.unacked = 0
	c.mu.Unlock()
	c.write(func() error { return c.fr.WriteWindowUpdate(st.id, uint32(inc)) }, flush)
}

// endOfInput marks the client's side of st ended (trailers).
func (c *conn) endOfInput(st *stream) {
	c.mu.Lock()
	st.eof = true
	c.cond.Broadcast()
	c.mu.Unlock()
	if st.m.stream == nil {
		c.unary(st)
	}
}

// endStream forgets st; reset says the client reset it (its handler's
// context is cancelled). It closes a draining connection whose last
// stream this was, and arms the idle timer.
func (c *conn) endStream(st *stream, reset bool) {
	c.mu.Lock()
	if st.ended {
		c.mu.Unlock()
		return
	}
	st.ended, st.reset = true, reset
	if !reset && st.counted { // ended by its handler: its slot is free now
		st.counted = false
		c.running--
	}
	delete(c.streams, st.id)
	c.active--
	last := c.active == 0 && c.goingAway
	if c.active == 0 && c.idle != nil && !c.closed {
		c.idle.Reset(c.s.opts.MaxConnectionIdle)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	if reset && st.cancel != nil {
		st.cancel()
	}
	if last {
		go func() {
			c.write(func() error { return nil }, true)
			c.close()
		}()
	}
}

// goHandler runs f on a goroutine of its own, counted in running.
func (c *conn) goHandler(st *stream, f func()) {
	c.mu.Lock()
	c.running++
	st.counted = true
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			if st.counted {
				st.counted = false
				c.running--
			}
			c.mu.Unlock()
		}()
		f()
	}()
}

func (c *conn) startIdle() {
	if d := c.s.opts.MaxConnectionIdle; d > 0 {
		c.mu.Lock()
		c.idle = time.AfterFunc(d, c.goAway)
		c.mu.Unlock()
	}
}

// resetStream ends stream id with RST_STREAM code.
func (c *conn) resetStream(id uint32, code http2.ErrCode) {
	c.mu.Lock()
	st := c.streams[id]
	c.mu.Unlock()
	if st != nil {
		c.endStream(st, true)
	}
	c.resetStreamFrame(id, code)
}

func (c *conn) resetStreamFrame(id uint32, code http2.ErrCode) {
	c.write(func() error { return c.fr.WriteRSTStream(id, code) }, false)
}

// httpError answers a request that is not gRPC with an HTTP status alone.
func (c *conn) httpError(id uint32, code string) {
	c.write(func() error {
		c.hbuf.Reset()
		c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: code})
		return c.writeHeaderBlock(id, true)
	}, false)
}

// trailersOnly answers a call with a status alone (no reply message); rst
// also resets the stream, for a client still sending.
func (c *conn) trailersOnly(id uint32, s *status.Status, rst bool) {
	c.write(func() error {
		c.hbuf.Reset()
		c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		c.henc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
		c.encodeStatus(s, nil)
		if err := c.writeHeaderBlock(id, true); err != nil {
			return err
		}
		if rst {
			return c.fr.WriteRSTStream(id, http2.ErrCodeNo)
		}
		return nil
	}, false)
}

// writeHeaderBlock writes c.hbuf as HEADERS and CONTINUATION frames no
// larger than the client's frame size. Under wmu.
func (c *conn) writeHeaderBlock(id uint32, end bool) error {
	c.mu.Lock()
	max := int(c.peerMaxFrame)
	c.mu.Unlock()
	b := c.hbuf.Bytes()
	first := b[:min(len(b), max)]
	b = b[len(first):]
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: end, EndHeaders: len(b) == 0}); err != nil {
		return err
	}
	for len(b) > 0 {
		next := b[:min(len(b), max)]
		b = b[len(next):]
		if err := c.fr.WriteContinuation(id, len(b) == 0, next); err != nil {
			return err
		}
	}
	return nil
}

// encodeStatus appends grpc-status, grpc-message, the status details and
// trailer metadata to the header block being built. Under wmu.
func (c *conn) encodeStatus(s *status.Status, trailer metadata.MD) {
	c.henc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: codeString(s.Code())})
	if msg := s.Message(); msg != "" {
		c.henc.WriteField(hpack.HeaderField{Name: "grpc-message", Value: encodeGrpcMessage(msg)})
	}
	if d := statusDetails(s); d != "" {
		c.henc.WriteField(hpack.HeaderField{Name: "grpc-status-details-bin", Value: d})
	}
	c.encodeMD(trailer)
}

func (c *conn) encodeMD(md metadata.MD) {
	for k, vs := range md {
		if isReserved(k) {
			continue
		}
		for _, v := range vs {
			if strings.HasSuffix(k, "-bin") {
				v = encodeBin(v)
			}
			c.henc.WriteField(hpack.HeaderField{Name: k, Value: v})
		}
	}
}

// compressorFor is the registered compressor for a grpc-encoding value;
// nil for identity.
func compressorFor(name string) (encoding.Compressor, error) {
	if name == "" || name == "identity" {
		return nil, nil
	}
	if cp := encoding.GetCompressor(name); cp != nil {
		return cp, nil
	}
	return nil, status.Errorf(codes.Unimplemented, "grpc: Decompressor is not installed for grpc-encoding %q", name)
}
