package h2grpc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// stream is one call. The fields under "c.mu" are shared between the
// reader and the call's handler; the rest belong to whoever runs the call.
type stream struct {
	c       *conn
	id      uint32
	path    string
	m       *method
	ctx     context.Context
	cancel  context.CancelFunc // nil for a unary call on the connection's context
	timeout time.Duration
	md      metadata.MD         // incoming metadata; nil when there is none
	comp    encoding.Compressor // the request's grpc-encoding, also used for replies

	// under c.mu
	buf     []byte // received message bytes not yet taken
	eof     bool   // the client's side ended
	ended   bool   // forgotten by the connection (done or reset)
	reset   bool   // the client reset the stream or the connection closed under it
	recvErr error  // the request can no longer be read (too large)
	inflow  int32  // receive window left
	unacked int32  // receive window taken back, not yet sent as WINDOW_UPDATE
	extra   int32  // window granted beyond the stream's for a message larger than it
	sendWin int64
	pending []byte         // reply bytes waiting for send window
	final   *status.Status // the call's status, sent after pending

	counted bool // under c.mu: counted in c.running

	// the handler's
	headerSent bool
	header     metadata.MD
	trailer    metadata.MD
}

// parseHeaders reads the call's grpc-timeout, grpc-encoding and metadata.
func (st *stream) parseHeaders(f *http2.MetaHeadersFrame) error {
	for _, h := range f.RegularFields() {
		switch h.Name {
		case "grpc-timeout":
			d, err := parseTimeout(h.Value)
			if err != nil {
				return status.Errorf(codes.Internal, "malformed grpc-timeout: %v", err)
			}
			st.timeout = d
		case "grpc-encoding":
			cp, err := compressorFor(h.Value)
			if err != nil {
				return err
			}
			st.comp = cp
		default:
			if isReserved(h.Name) {
				continue
			}
			v := h.Value
			if len(h.Name) > 4 && h.Name[len(h.Name)-4:] == "-bin" {
				b, err := decodeBin(v)
				if err != nil {
					return status.Errorf(codes.Internal, "malformed binary metadata %q: %v", h.Name, err)
				}
				v = string(b)
			}
			if st.md == nil {
				st.md = metadata.MD{}
			}
			st.md[h.Name] = append(st.md[h.Name], v)
		}
	}
	return nil
}

// unary answers a unary call whose request has arrived whole. On the
// connection's goroutine when nothing else is in hand (the point of this
// package: one goroutine, one write); otherwise, or when the reply does
// not fit the send windows, on a goroutine of its own.
func (c *conn) unary(st *stream) {
	if c.br.Buffered() == 0 {
		c.answerUnary(st, false)
		return
	}
	c.goHandler(st, func() { c.answerUnary(st, true) })
}

func (c *conn) answerUnary(st *stream, own bool) {
	defer st.done()
	msg, err := st.takeUnary()
	var reply []byte
	if err == nil {
		var out any
		out, err = st.m.unary(st.m.impl, st.ctx, func(v any) error {
			return c.s.opts.Codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(msg)}, v)
		}, nil)
		if err == nil {
			reply, err = st.encode(out)
		}
	}
	c.write(func() error {
		if err != nil {
			return st.finish(callStatus(err))
		}
		if err := st.writeHeader(); err != nil {
			return err
		}
		c.mu.Lock()
		st.pending = reply
		c.mu.Unlock()
		// A reply beyond the send windows waits in pending; the reader
		// sends the rest, then the trailers, as WINDOW_UPDATEs arrive.
		return st.finish(statusOK)
	}, own)
}

// done releases the call's context.
func (st *stream) done() {
	if st.cancel != nil {
		st.cancel()
	}
}

// takeUnary returns a unary call's one request message, decompressed.
func (st *stream) takeUnary() ([]byte, error) {
	c := st.c
	c.mu.Lock()
	b, err := st.buf, st.recvErr
	st.buf = nil
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, status.Error(codes.Internal, "h2grpc: the request ended without a message")
	}
	if len(b) < 5 || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-5 {
		return nil, status.Errorf(codes.Internal, "h2grpc: a unary request must be one message (%d bytes received)", len(b))
	}
	return st.decompress(b[0], b[5:])
}

// decompress undoes the message's compression flag, within the size limit.
func (st *stream) decompress(flag byte, p []byte) ([]byte, error) {
	max := st.c.s.opts.MaxRecvMsgSize
	switch flag {
	case 0:
		return p, nil
	case 1:
		if st.comp == nil {
			return nil, status.Error(codes.Internal, "grpc: compressed flag set with identity or empty encoding")
		}
		r, err := st.comp.Decompress(bytes.NewReader(p))
		if err != nil {
			return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the message: %v", err)
		}
		out, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		if err != nil {
			return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the message: %v", err)
		}
		if len(out) > max {
			return nil, status.Errorf(codes.ResourceExhausted, "grpc: received message after decompression larger than max (%d)", max)
		}
		return out, nil
	default:
		return nil, status.Errorf(codes.Internal, "grpc: invalid message flag %d", flag)
	}
}

// encode marshals a reply into one length-prefixed message, compressed
// with the request's encoding.
func (st *stream) encode(v any) ([]byte, error) {
	data, err := st.c.s.opts.Codec.Marshal(v)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
	}
	defer data.Free()
	flag := byte(0)
	var body []byte
	if st.comp != nil {
		var z bytes.Buffer
		w, err := st.comp.Compress(&z)
		if err == nil {
			for _, b := range data {
				if _, err = w.Write(b.ReadOnlyData()); err != nil {
					break
				}
			}
			if err == nil {
				err = w.Close()
			}
		}
		if err != nil {
			return nil, status.Errorf(codes.Internal, "grpc: error while compressing: %v", err)
		}
		flag, body = 1, z.Bytes()
	}
	n := data.Len()
	if body != nil {
		n = len(body)
	}
	out := make([]byte, 5, 5+n)
	out[0] = flag
	binary.BigEndian.PutUint32(out[1:], uint32(n))
	if body != nil {
		return append(out, body...), nil
	}
	for _, b := range data {
		out = append(out, b.ReadOnlyData()...)
	}
	return out, nil
}

// writeHeader writes the reply's HEADERS once. Under wmu.
func (st *stream) writeHeader() error {
	if st.headerSent {
		return nil
	}
	st.headerSent = true
	c := st.c
	c.hbuf.Reset()
	c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	c.henc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	if st.comp != nil {
		c.henc.WriteField(hpack.HeaderField{Name: "grpc-encoding", Value: st.comp.Name()})
	}
	c.encodeMD(st.header)
	return c.writeHeaderBlock(st.id, false)
}

// finish queues the call's status after its pending reply bytes and
// sends what the windows allow. Under wmu.
func (st *stream) finish(s *status.Status) error {
	st.c.mu.Lock()
	st.final = s
	st.c.mu.Unlock()
	return st.pump()
}

// pump sends st's pending bytes as far as the send windows allow, then,
// with nothing left and the call finished, its trailers; the stream then
// ends. Under wmu: one pump at a time keeps a stream's frames in order.
func (st *stream) pump() error {
	c := st.c
	for {
		c.mu.Lock()
		if st.ended {
			c.mu.Unlock()
			return nil
		}
		if len(st.pending) == 0 {
			final, eof := st.final, st.eof
			c.mu.Unlock()
			if final == nil {
				return nil
			}
			if err := st.writeTrailers(final, !eof); err != nil {
				return err
			}
			c.endStream(st, false)
			return nil
		}
		n := int(min(int64(len(st.pending)), st.sendWin, c.sendWin, int64(c.peerMaxFrame)))
		if n <= 0 {
			c.mu.Unlock()
			return nil // the reader pumps again on WINDOW_UPDATE
		}
		chunk := st.pending[:n]
		st.pending = st.pending[n:]
		if len(st.pending) == 0 {
			st.pending = nil
		}
		st.sendWin -= int64(n)
		c.sendWin -= int64(n)
		c.cond.Broadcast() // a SendMsg may wait for pending to drain
		c.mu.Unlock()
		if err := c.fr.WriteData(st.id, false, chunk); err != nil {
			return err
		}
	}
}

// writeTrailers ends the stream with its status: trailers after a reply's
// headers, or a trailers-only reply; rst also resets the stream, for a
// client still sending. Under wmu.
func (st *stream) writeTrailers(s *status.Status, rst bool) error {
	c := st.c
	if !st.headerSent && len(st.header) > 0 {
		if err := st.writeHeader(); err != nil {
			return err
		}
	}
	c.hbuf.Reset()
	if !st.headerSent {
		st.headerSent = true
		c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		c.henc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	}
	c.encodeStatus(s, st.trailer)
	if err := c.writeHeaderBlock(st.id, true); err != nil {
		return err
	}
	if rst {
		return c.fr.WriteRSTStream(st.id, http2.ErrCodeNo)
	}
	return nil
}

// liveErr says why st can no longer send or receive, if it cannot. Under c.mu.
func (st *stream) liveErr() error {
	switch {
	case st.c.closed:
		return status.Error(codes.Unavailable, "h2grpc: the connection closed")
	case st.reset:
		return status.Error(codes.Canceled, "h2grpc: the client reset the stream")
	case st.ctx.Err() != nil:
		return status.FromContextError(st.ctx.Err()).Err()
	}
	return nil
}

// runStream runs a streaming call's handler on its goroutine and ends the
// stream with the handler's status.
func (st *stream) runStream() {
	c := st.c
	defer st.done()
	// Wake a Send waiting for window or a Recv waiting for data when the
	// call's context ends (deadline, Stop).
	stop := context.AfterFunc(st.ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	ss := &serverStream{st: st}
	ss.ctx = grpc.NewContextWithServerTransportStream(st.ctx, transportStream{ss})
	err := st.m.stream.Handler(st.m.impl, ss)
	// The status goes after whatever Send left pending: a client that
	// stalled past the deadline still gets whole messages, then the status.
	c.write(func() error { return st.finish(callStatus(err)) }, true)
}

// serverStream is the grpc.ServerStream a streaming handler gets (and the
// grpc.ServerTransportStream of its context, for grpc.SetHeader and
// friends).
type serverStream struct {
	st  *stream
	ctx context.Context
}

var _ grpc.ServerStream = (*serverStream)(nil)

// transportStream is ss as the grpc.ServerTransportStream in its context.
type transportStream struct{ *serverStream }

func (t transportStream) Method() string { return t.st.path }

func (t transportStream) SetTrailer(md metadata.MD) error {
	t.serverStream.SetTrailer(md)
	return nil
}

func (ss *serverStream) Context() context.Context { return ss.ctx }

func (ss *serverStream) SetHeader(md metadata.MD) error {
	if ss.st.headerSent {
		return status.Error(codes.Internal, "h2grpc: SetHeader after the header was sent")
	}
	ss.st.header = metadata.Join(ss.st.header, md)
	return nil
}

func (ss *serverStream) SendHeader(md metadata.MD) error {
	if err := ss.SetHeader(md); err != nil {
		return err
	}
	return ss.st.c.write(ss.st.writeHeader, true)
}

func (ss *serverStream) SetTrailer(md metadata.MD) {
	ss.st.trailer = metadata.Join(ss.st.trailer, md)
}

func (ss *serverStream) SendMsg(m any) error {
	st := ss.st
	msg, err := st.encode(m)
	if err != nil {
		return err
	}
	c := st.c
	// Wait while a quota's worth is still queued (a client that does not
	// read holds one message and a quota per stream, as in grpc-go).
	c.mu.Lock()
	for len(st.pending) >= sendQuota && st.liveErr() == nil {
		c.cond.Wait()
	}
	if err := st.liveErr(); err != nil {
		c.mu.Unlock()
		return err
	}
	st.pending = append(st.pending, msg...)
	c.mu.Unlock()
	// Written, not flushed: the connection's flusher pushes it out once
	// this handler had the chance to write its next messages too, so a
	// stream's messages leave in batches (one write each cost a stream
	// of 1,000 twice grpc-go's CPU: its loopy writer batches them).
	if err := c.write(st.send, false); err != nil {
		return status.Error(codes.Unavailable, "h2grpc: connection failed")
	}
	c.kickFlush()
	return nil
}

// send writes the reply's headers, once, and what the windows allow of
// the pending bytes. Under wmu.
func (st *stream) send() error {
	if err := st.writeHeader(); err != nil {
		return err
	}
	return st.pump()
}

// sendQuota is how many reply bytes a stream may queue beyond its send
// window before SendMsg waits (grpc-go's default write quota).
const sendQuota = 64 << 10

// RecvMsg waits for the next whole request message; io.EOF once the
// client's side ended.
func (ss *serverStream) RecvMsg(m any) error {
	st := ss.st
	c := st.c
	max := c.s.opts.MaxRecvMsgSize
	c.mu.Lock()
	var n int
	for {
		if st.recvErr != nil {
			err := st.recvErr
			c.mu.Unlock()
			return err
		}
		if len(st.buf) >= 5 {
			if size := binary.BigEndian.Uint32(st.buf[1:5]); int64(size) > int64(max) {
				st.recvErr = tooLarge(int(size), max)
				st.buf = nil
				continue
			} else if len(st.buf) >= 5+int(size) {
				n = 5 + int(size)
				break
			} else if need := int32(5 + int(size) - len(st.buf)); need > st.inflow && !st.eof {
				// A message larger than the window: grant what it still
				// needs now (as grpc-go's inFlow.maybeAdjust), and take
				// the grant back from the window returned when it is read.
				grow := need - st.inflow
				st.inflow += grow
				st.extra += grow
				c.mu.Unlock()
				c.write(func() error { return c.fr.WriteWindowUpdate(st.id, uint32(grow)) }, true)
				c.mu.Lock()
				continue
			}
		}
		if st.eof {
			c.mu.Unlock()
			if len(st.buf) == 0 {
				return io.EOF
			}
			return status.Error(codes.Internal, "h2grpc: the stream ended inside a message")
		}
		if err := st.liveErr(); err != nil {
			c.mu.Unlock()
			return err
		}
		c.cond.Wait()
	}
	flag, p := st.buf[0], bytes.Clone(st.buf[5:n])
	st.buf = st.buf[n:]
	if len(st.buf) == 0 {
		st.buf = nil // let the array go
	}
	c.mu.Unlock()
	c.returnWindow(st, int32(n), true)
	p, err := st.decompress(flag, p)
	if err != nil {
		return err
	}
	if err := c.s.opts.Codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(p)}, m); err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return nil
}

func tooLarge(n, max int) error {
	return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, max)
}

func unknownMethod(path string) *status.Status {
	svc, m := splitPath(path)
	if svc == "" {
		return status.Newf(codes.Unimplemented, "malformed method name: %q", path)
	}
	return status.Newf(codes.Unimplemented, "unknown method %s for service %s", m, svc)
}

// callStatus is the status a handler's error ends its call with.
func callStatus(err error) *status.Status {
	if err == nil {
		return statusOK
	}
	if s, ok := status.FromError(err); ok {
		return s
	}
	if s := status.FromContextError(err); s.Code() != codes.Unknown {
		return s
	}
	return status.New(codes.Unknown, fmt.Sprint(err))
}
