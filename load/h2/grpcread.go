package h2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/load/clientio"
)

// The read side of the lean gRPC session (grpc.go): a caller waiting for
// its reply reads the connection for everyone, frames are handled as they
// come, and replies are decoded into gRPC statuses and messages.

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
			// Reader takes only whole frames: the connection stays
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

// handle acts on one frame read by the token holder (Reader checked
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

// AppendGRPCMessage appends msg as one length-prefixed, uncompressed gRPC
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

// GRPCWindow is the client's flow-control window per stream and per
// connection.
const GRPCWindow = 1 << 20
