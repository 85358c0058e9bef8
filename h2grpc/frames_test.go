package h2grpc_test

// Raw HTTP/2 against h2grpc: what grpc-go's client never sends.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/h2grpc"
	"github.com/wirebench/wirebench/pb"
)

// rawConn is a hand-driven HTTP/2 client connection.
type rawConn struct {
	t    testing.TB
	nc   net.Conn
	fr   *http2.Framer
	henc *hpack.Encoder
	hbuf bytes.Buffer
}

// dialRaw connects and, with handshake, writes the client preface and an
// empty SETTINGS frame.
func dialRaw(t testing.TB, addr string, handshake bool) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := &rawConn{t: t, nc: nc, fr: http2.NewFramer(nc, nc)}
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	r.fr.SetMaxReadFrameSize(1 << 24)
	r.henc = hpack.NewEncoder(&r.hbuf)
	if handshake {
		if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
			t.Fatal(err)
		}
		r.check(r.fr.WriteSettings())
	}
	return r
}

func (r *rawConn) check(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// headers writes a header block of name/value pairs on stream id.
func (r *rawConn) headers(id uint32, end bool, kv ...string) {
	r.t.Helper()
	r.hbuf.Reset()
	for i := 0; i < len(kv); i += 2 {
		r.check(r.henc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]}))
	}
	r.check(r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.hbuf.Bytes(), EndStream: end, EndHeaders: true}))
}

// call opens a gRPC call to path on stream id, with extra header pairs.
func (r *rawConn) call(id uint32, path string, end bool, extra ...string) {
	r.t.Helper()
	r.headers(id, end, append([]string{
		":method", "POST", ":scheme", "http", ":path", path, ":authority", "test",
		"content-type", "application/grpc", "te", "trailers",
	}, extra...)...)
}

func (r *rawConn) data(id uint32, end bool, p []byte) {
	r.t.Helper()
	r.check(r.fr.WriteData(id, end, p))
}

// grpcMsg is m as one length-prefixed gRPC message.
// unaryDone makes a whole unary call on stream id and reads its reply.
func (r *rawConn) unaryDone(id uint32) {
	r.t.Helper()
	r.call(id, unaryPath, false)
	r.data(id, true, grpcMsg(r.t, &pb.EchoRequest{FirstMessage: "hi"}))
	r.response(id)
}

func grpcMsg(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return frameMsg(0, b)
}

func frameMsg(flag byte, b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	out[0] = flag
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// next reads the next frame; a read error fails the test.
func (r *rawConn) next() http2.Frame {
	r.t.Helper()
	f, err := r.fr.ReadFrame()
	if err != nil {
		r.t.Fatalf("reading a frame: %v", err)
	}
	return f
}

// until reads frames until one satisfies ok and returns it.
func (r *rawConn) until(what string, ok func(http2.Frame) bool) http2.Frame {
	r.t.Helper()
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			r.t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok(f) {
			return f
		}
	}
}

// onStream reads frames until one on stream id (HEADERS, DATA or
// RST_STREAM), failing on GOAWAY.
func (r *rawConn) onStream(id uint32) http2.Frame {
	r.t.Helper()
	return r.until("a frame on stream "+strconv.Itoa(int(id)), func(f http2.Frame) bool {
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			r.t.Fatalf("GOAWAY %v (%q) while waiting on stream %d", ga.ErrCode, ga.DebugData(), id)
		}
		return f.Header().StreamID == id && f.Header().Type != http2.FrameWindowUpdate
	})
}

// response reads stream id to its end: the header blocks and DATA
// payload; it fails on RST_STREAM other than NO_ERROR after the end.
func (r *rawConn) response(id uint32) (blocks []*http2.MetaHeadersFrame, body []byte) {
	r.t.Helper()
	for {
		switch f := r.onStream(id).(type) {
		case *http2.MetaHeadersFrame:
			blocks = append(blocks, f)
			if f.StreamEnded() {
				return blocks, body
			}
		case *http2.DataFrame:
			body = append(body, f.Data()...)
			if f.StreamEnded() {
				r.t.Fatalf("stream %d ended with DATA, not trailers", id)
			}
		case *http2.RSTStreamFrame:
			r.t.Fatalf("stream %d reset: %v", id, f.ErrCode)
		}
	}
}

// goAway reads until a GOAWAY and then expects the connection to close.
func (r *rawConn) goAway() *http2.GoAwayFrame {
	r.t.Helper()
	ga := r.until("GOAWAY", func(f http2.Frame) bool { _, ok := f.(*http2.GoAwayFrame); return ok }).(*http2.GoAwayFrame)
	r.expectClose()
	return ga
}

// expectClose reads until the server closes the connection.
func (r *rawConn) expectClose() {
	r.t.Helper()
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				r.t.Fatal("the connection stayed open")
			}
			return // EOF or reset
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok && ga.ErrCode != http2.ErrCodeNo {
			continue
		}
	}
}

// ping checks the connection is still served.
func (r *rawConn) ping() {
	r.t.Helper()
	data := [8]byte{'s', 't', 'i', 'l', 'l', 'u', 'p', '!'}
	r.check(r.fr.WritePing(false, data))
	r.until("the PING ack", func(f http2.Frame) bool {
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			r.t.Fatalf("GOAWAY %v (%q) instead of a PING ack", ga.ErrCode, ga.DebugData())
		}
		p, ok := f.(*http2.PingFrame)
		return ok && p.IsAck() && p.Data == data
	})
}

func field(f *http2.MetaHeadersFrame, name string) string {
	for _, h := range f.Fields {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

// wantTrailersOnly checks blocks is one header block, ending the stream,
// with :status 200 and grpc-status code.
func wantTrailersOnly(t testing.TB, blocks []*http2.MetaHeadersFrame, body []byte, code codes.Code) *http2.MetaHeadersFrame {
	t.Helper()
	if len(blocks) != 1 || len(body) != 0 {
		t.Fatalf("%d header blocks and %d body bytes, want a trailers-only reply", len(blocks), len(body))
	}
	f := blocks[0]
	if s := f.PseudoValue("status"); s != "200" {
		t.Fatalf(":status %q", s)
	}
	if s := field(f, "grpc-status"); s != strconv.Itoa(int(code)) {
		t.Fatalf("grpc-status %q (%q), want %d", s, field(f, "grpc-message"), code)
	}
	return f
}

// --- 7. raw HTTP/2 ---

func TestRawServerPreface(t *testing.T) {
	ts := start(t, h2grpc.Options{MaxConcurrentStreams: 7, Window: 300 << 10, MaxHeaderListSize: 5000}, &svc{})
	r := dialRaw(t, ts.addr, true)
	sf, ok := r.next().(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("the server's first frame is not SETTINGS")
	}
	for id, want := range map[http2.SettingID]uint32{
		http2.SettingMaxConcurrentStreams: 7,
		http2.SettingInitialWindowSize:    300 << 10,
		http2.SettingMaxHeaderListSize:    5000,
	} {
		if v, ok := sf.Value(id); !ok || v != want {
			t.Errorf("SETTINGS %v = %d (%v), want %d", id, v, ok, want)
		}
	}
	wu := r.until("the connection's WINDOW_UPDATE", func(f http2.Frame) bool {
		return f.Header().Type == http2.FrameWindowUpdate && f.Header().StreamID == 0
	}).(*http2.WindowUpdateFrame)
	if got := 65535 + wu.Increment; got != 300<<10 {
		t.Errorf("connection window %d, want %d", got, 300<<10)
	}
	r.until("our SETTINGS' ack", func(f http2.Frame) bool { s, ok := f.(*http2.SettingsFrame); return ok && s.IsAck() })
}

func TestRawPing(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	data := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	r.check(r.fr.WritePing(true, [8]byte{9, 9, 9, 9, 9, 9, 9, 9})) // an ack: not answered
	r.check(r.fr.WritePing(false, data))
	f := r.until("PING", func(f http2.Frame) bool { _, ok := f.(*http2.PingFrame); return ok }).(*http2.PingFrame)
	if !f.IsAck() || f.Data != data {
		t.Fatalf("PING ack=%v data=%v, want an ack of %v", f.IsAck(), f.Data, data)
	}
}

func TestRawHTTPErrors(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	std := func(method, ct string) []string {
		return []string{":method", method, ":scheme", "http", ":path", unaryPath, ":authority", "test", "content-type", ct}
	}
	for i, tc := range []struct {
		hdr    []string
		status string
	}{
		{std("GET", "application/grpc"), "405"},
		{std("PUT", "application/grpc"), "405"},
		{std("POST", "text/plain"), "415"},
		{std("POST", ""), "415"},
		{std("POST", "application/grpcx"), "415"},
	} {
		id := uint32(2*i + 1)
		r.headers(id, true, tc.hdr...)
		blocks, body := r.response(id)
		if len(blocks) != 1 || len(body) != 0 || blocks[0].PseudoValue("status") != tc.status {
			t.Errorf("%q: %d blocks, %d body bytes, :status %q, want %s alone", tc.hdr, len(blocks), len(body), blocks[0].PseudoValue("status"), tc.status)
		}
	}
	// gRPC content-type variants are gRPC.
	for i, ct := range []string{"application/grpc+proto", "application/grpc;charset=utf-8"} {
		id := uint32(101 + 2*i)
		r.call(id, unaryPath, false, "content-type", ct)
		r.data(id, true, grpcMsg(t, &pb.EchoRequest{FirstMessage: "hi"}))
		blocks, body := r.response(id)
		if len(blocks) != 2 || blocks[0].PseudoValue("status") != "200" || field(blocks[1], "grpc-status") != "0" {
			t.Errorf("content-type %s: not served", ct)
		}
		want := grpcMsg(t, &pb.EchoResponse{Message: "hi"})
		if !bytes.Equal(body, want) {
			t.Errorf("content-type %s: body %x, want %x", ct, body, want)
		}
	}
}

func TestRawEvenStreamID(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.call(2, unaryPath, true)
	if ga := r.goAway(); ga.ErrCode != http2.ErrCodeProtocol {
		t.Fatalf("GOAWAY %v, want PROTOCOL_ERROR", ga.ErrCode)
	}
}

func TestRawRefusedStream(t *testing.T) {
	ts := start(t, h2grpc.Options{MaxConcurrentStreams: 2}, &svc{})
	r := dialRaw(t, ts.addr, true)
	m := grpcMsg(t, &pb.EchoRequest{FirstMessage: "x"})
	// open starts a bidi stream and sends a message: true once the echo
	// came (the stream stays open), false if it was refused.
	open := func(id uint32) bool {
		r.call(id, bidiPath, false)
		r.data(id, false, m)
		switch f := r.onStream(id).(type) {
		case *http2.RSTStreamFrame:
			if f.ErrCode != http2.ErrCodeRefusedStream {
				t.Fatalf("stream %d reset with %v", id, f.ErrCode)
			}
			return false
		case *http2.MetaHeadersFrame:
			r.until("the echo", func(f http2.Frame) bool { return f.Header().StreamID == id && f.Header().Type == http2.FrameData })
			return true
		}
		t.Fatalf("stream %d: unexpected frame", id)
		return false
	}
	if !open(1) || !open(3) {
		t.Fatal("the first two streams were refused")
	}
	if open(5) {
		t.Fatal("a third stream was served with MaxConcurrentStreams 2")
	}
	// A client reset frees a slot, once the reset stream's handler has
	// returned (until then it counts: rapid reset).
	r.check(r.fr.WriteRSTStream(1, http2.ErrCodeCancel))
	id := uint32(7)
	for ; !open(id); id += 2 {
		if id > 7+2*100 {
			t.Fatal("the slot of a reset stream was never freed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Two open again (3 and id): the next is refused.
	if open(id + 2) {
		t.Fatal("a third stream was served after a reset freed one slot")
	}
	// A stream ended by the client completes normally.
	r.data(id, true, nil)
	blocks, _ := r.response(id)
	if field(blocks[len(blocks)-1], "grpc-status") != "0" {
		t.Fatalf("stream %d ended with %v", id, blocks[len(blocks)-1].Fields)
	}
}

// TestRawSequentialStreamsNotRefused: a client that opens its next stream
// only once the previous one ended (as grpc-go's does at
// MaxConcurrentStreams) is never refused: the slot of a stream whose
// trailers the client has seen is free.
func TestRawSequentialStreamsNotRefused(t *testing.T) {
	ts := start(t, h2grpc.Options{MaxConcurrentStreams: 1}, &svc{})
	r := dialRaw(t, ts.addr, true)
	m := grpcMsg(t, &pb.EchoRequest{FirstMessage: "y"})
	refused := 0
	const n = 1500
	for i := range n {
		id := uint32(2*i + 1)
		r.call(id, bidiPath, false)
		r.data(id, true, m)
		for done := false; !done; {
			switch f := r.onStream(id).(type) {
			case *http2.RSTStreamFrame:
				refused++
				done = true
			case *http2.MetaHeadersFrame:
				done = f.StreamEnded()
			}
		}
	}
	if refused > 0 {
		t.Errorf("%d of %d streams refused, each opened after the previous one ended, at MaxConcurrentStreams 1", refused, n)
	}
}

// TestRawStreamFlowControl: DATA beyond a stream's window resets that
// stream (FLOW_CONTROL_ERROR, its handler cancelled); the connection lives.
func TestRawStreamFlowControl(t *testing.T) {
	cancelled := make(chan struct{})
	ts := start(t, h2grpc.Options{Window: h2grpc.MinWindow}, &svc{bidi: func(ss grpc.ServerStream) error {
		<-ss.Context().Done() // reads nothing: the window is never returned
		close(cancelled)
		return nil
	}})
	r := dialRaw(t, ts.addr, true)
	r.call(1, bidiPath, false)
	chunk := make([]byte, 16384)
	for range h2grpc.MinWindow / len(chunk) {
		r.data(1, false, chunk)
	}
	r.ping() // all within the window: no reset
	r.data(1, false, []byte{0})
	f, ok := r.onStream(1).(*http2.RSTStreamFrame)
	if !ok || f.ErrCode != http2.ErrCodeFlowControl {
		t.Fatalf("got %v, want RST_STREAM FLOW_CONTROL_ERROR", f)
	}
	select {
	case <-cancelled:
	case <-time.After(3 * time.Second):
		t.Fatal("the reset stream's handler was not cancelled")
	}
	r.ping()
}

// TestRawPaddingReturned: DATA padding counts against a stream's window
// and is given back at once (it never reaches the handler).
func TestRawPaddingReturned(t *testing.T) {
	ts := start(t, h2grpc.Options{Window: h2grpc.MinWindow}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.call(1, bidiPath, false)
	pad := make([]byte, 255)
	// 400 x 255 bytes of padding: past the 64 KiB stream window unless given back.
	for i := range 400 {
		m := grpcMsg(t, &pb.EchoRequest{FirstMessage: strconv.Itoa(i)})
		r.check(r.fr.WriteDataPadded(1, false, m, pad))
		f, ok := r.until("an echo", func(f http2.Frame) bool {
			return f.Header().StreamID == 1 && f.Header().Type != http2.FrameWindowUpdate && f.Header().Type != http2.FrameHeaders
		}).(*http2.DataFrame)
		if !ok {
			t.Fatalf("message %d: %v, want the echo", i, f)
		}
		if want := grpcMsg(t, &pb.EchoResponse{Message: strconv.Itoa(i)}); !bytes.Equal(f.Data(), want) {
			t.Fatalf("echo %d: %x, want %x", i, f.Data(), want)
		}
	}
}

// TestRawWindowUpdateOverflow: a WINDOW_UPDATE taking the connection's
// send window past 2^31-1 is a connection FLOW_CONTROL_ERROR.
func TestRawWindowUpdateOverflow(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.check(r.fr.WriteWindowUpdate(0, 1<<31-1))
	if ga := r.goAway(); ga.ErrCode != http2.ErrCodeFlowControl {
		t.Fatalf("GOAWAY %v, want FLOW_CONTROL_ERROR", ga.ErrCode)
	}
}

// TestRawConnWindowReturned: DATA the server drops (on a stream it has
// already answered and reset) still counts against the connection window
// and is given back; else the client's connection window leaks away.
func TestRawConnWindowReturned(t *testing.T) {
	ts := start(t, h2grpc.Options{Window: h2grpc.MinWindow}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.call(1, "/test.Svc/Missing", false) // answered at once, stream reset
	blocks, body := r.response(1)
	wantTrailersOnly(t, blocks, body, codes.Unimplemented)
	total, returned := 4*h2grpc.MinWindow, 0
	go func() {
		chunk := make([]byte, 16384)
		for i := 0; i < total; i += len(chunk) {
			if r.fr.WriteData(1, false, chunk) != nil {
				return
			}
		}
	}()
	for returned < total-h2grpc.MinWindow/2 {
		switch f := r.next().(type) {
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				returned += int(f.Increment)
			}
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v (%q)", f.ErrCode, f.DebugData())
		}
	}
}

func TestRawHeaderListTooLarge(t *testing.T) {
	ts := start(t, h2grpc.Options{MaxHeaderListSize: 1024}, &svc{})
	r := dialRaw(t, ts.addr, true)
	var extra []string
	for i := range 40 { // 40 x ~70 bytes: small fields, a large list
		extra = append(extra, "x-pad-"+strconv.Itoa(i), strings.Repeat("v", 30))
	}
	r.call(1, unaryPath, true, extra...)
	blocks, _ := r.response(1)
	if s := blocks[0].PseudoValue("status"); s != "431" {
		t.Fatalf(":status %q, want 431", s)
	}
	// Under the limit: served.
	r.call(3, unaryPath, false, extra[:8]...)
	r.data(3, true, grpcMsg(t, &pb.EchoRequest{FirstMessage: "small"}))
	blocks, _ = r.response(3)
	if len(blocks) != 2 || field(blocks[1], "grpc-status") != "0" {
		t.Fatalf("a request under MaxHeaderListSize was not served")
	}
}

func TestRawUnaryMessageCount(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	// No message at all: HEADERS with END_STREAM.
	r.call(1, unaryPath, true)
	blocks, body := r.response(1)
	wantTrailersOnly(t, blocks, body, codes.Internal)
	// An empty DATA with END_STREAM.
	r.call(3, unaryPath, false)
	r.data(3, true, nil)
	blocks, body = r.response(3)
	wantTrailersOnly(t, blocks, body, codes.Internal)
	// Two messages.
	r.call(5, unaryPath, false)
	m := grpcMsg(t, &pb.EchoRequest{FirstMessage: "one"})
	r.data(5, true, append(m, m...))
	blocks, body = r.response(5)
	wantTrailersOnly(t, blocks, body, codes.Internal)
	// A truncated message.
	r.call(7, unaryPath, false)
	r.data(7, true, m[:len(m)-1])
	blocks, body = r.response(7)
	wantTrailersOnly(t, blocks, body, codes.Internal)
	// One message split over several DATA frames, and then trailers.
	r.call(9, unaryPath, false)
	r.data(9, false, m[:2])
	r.data(9, false, m[2:7])
	r.data(9, false, m[7:])
	r.headers(9, true, "x-trailer", "1")
	blocks, body = r.response(9)
	if len(blocks) != 2 || field(blocks[1], "grpc-status") != "0" || !bytes.Equal(body, grpcMsg(t, &pb.EchoResponse{Message: "one"})) {
		t.Fatalf("a message in pieces: %d blocks, body %x", len(blocks), body)
	}
}

func TestRawClientResetCancelsHandler(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan error, 1)
	ts := start(t, h2grpc.Options{}, &svc{bidi: func(ss grpc.ServerStream) error {
		close(started)
		select {
		case <-ss.Context().Done():
			cancelled <- ss.Context().Err()
		case <-time.After(5 * time.Second):
			cancelled <- nil
		}
		return nil
	}})
	r := dialRaw(t, ts.addr, true)
	r.call(1, bidiPath, false)
	select {
	case <-started:
	case <-time.After(3 * time.Second):
		t.Fatal("the handler did not start")
	}
	r.check(r.fr.WriteRSTStream(1, http2.ErrCodeCancel))
	if err := <-cancelled; err == nil {
		t.Fatal("RST_STREAM did not cancel the handler's context")
	}
	r.ping()
}

func TestRawUnknownEncoding(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.call(1, unaryPath, false, "grpc-encoding", "snappy-not-registered")
	r.data(1, true, frameMsg(1, []byte("whatever")))
	blocks, body := r.response(1)
	wantTrailersOnly(t, blocks, body, codes.Unimplemented)
	// The compressed flag without an encoding.
	r.call(3, unaryPath, false)
	r.data(3, true, frameMsg(1, []byte("whatever")))
	blocks, body = r.response(3)
	wantTrailersOnly(t, blocks, body, codes.Internal)
}

// TestRawGzipReply: a gzip request gets a gzip reply: grpc-encoding in the
// response headers and the compressed flag on the message.
func TestRawGzipReply(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	text := strings.Repeat("gzip ", 1000)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	b, _ := proto.Marshal(&pb.EchoRequest{FirstMessage: text})
	zw.Write(b)
	zw.Close()
	r.call(1, unaryPath, false, "grpc-encoding", "gzip")
	r.data(1, true, frameMsg(1, z.Bytes()))
	blocks, body := r.response(1)
	if len(blocks) != 2 || field(blocks[1], "grpc-status") != "0" {
		t.Fatalf("not served: %d blocks", len(blocks))
	}
	if e := field(blocks[0], "grpc-encoding"); e != "gzip" {
		t.Errorf("reply grpc-encoding %q", e)
	}
	if len(body) < 5 || body[0] != 1 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		t.Fatalf("reply is not one compressed message: %x", body[:min(len(body), 16)])
	}
	zr, err := gzip.NewReader(bytes.NewReader(body[5:]))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	resp := new(pb.EchoResponse)
	if err := proto.Unmarshal(plain, resp); err != nil || resp.Message != text {
		t.Fatalf("reply decodes to %.20q, %v", resp.Message, err)
	}
}

func TestRawGrpcTimeout(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{unary: func(ctx context.Context, req *pb.EchoRequest) (*pb.EchoResponse, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			return &pb.EchoResponse{Message: "none"}, nil
		}
		return &pb.EchoResponse{Message: strconv.FormatInt(int64(time.Until(dl)), 10)}, nil
	}})
	r := dialRaw(t, ts.addr, true)
	id := uint32(1)
	for _, tc := range []struct {
		v        string
		min, max time.Duration // the handler's time left; max 0: malformed
	}{
		{"1H", 59 * time.Minute, time.Hour},
		{"2M", 119 * time.Second, 2 * time.Minute},
		{"30S", 29 * time.Second, 30 * time.Second},
		{"99999999S", 99999998 * time.Second, 99999999 * time.Second},
		{"99999999H", 1 << 62, 1<<63 - 1}, // beyond a Duration: the largest
		{"123456789S", 0, 0},              // 9 digits
		{"S", 0, 0},
		{"10", 0, 0},
		{"10s", 0, 0},
		{"-5S", 0, 0},
		{"+5S", 0, 0},
		{"1.5S", 0, 0},
	} {
		r.call(id, unaryPath, false, "grpc-timeout", tc.v)
		r.data(id, true, grpcMsg(t, &pb.EchoRequest{}))
		blocks, body := r.response(id)
		id += 2
		if tc.max == 0 {
			wantTrailersOnly(t, blocks, body, codes.Internal)
			continue
		}
		resp := new(pb.EchoResponse)
		if len(blocks) != 2 || len(body) < 5 || proto.Unmarshal(body[5:], resp) != nil {
			t.Fatalf("grpc-timeout %s: not served", tc.v)
		}
		left, err := strconv.ParseInt(resp.Message, 10, 64)
		if err != nil || time.Duration(left) < tc.min || time.Duration(left) > tc.max {
			t.Errorf("grpc-timeout %s: handler's time left %s, want within [%v, %v]", tc.v, resp.Message, tc.min, tc.max)
		}
	}
}

// --- 6 (raw part). connection lifecycle ---

func TestMaxConnectionIdle(t *testing.T) {
	const idle = 200 * time.Millisecond
	ts := start(t, h2grpc.Options{MaxConnectionIdle: idle}, &svc{})

	// Idle from the start: GOAWAY then close.
	begin := time.Now()
	r := dialRaw(t, ts.addr, true)
	ga := r.goAway()
	if ga.ErrCode != http2.ErrCodeNo {
		t.Errorf("GOAWAY %v, want NO_ERROR", ga.ErrCode)
	}
	if d := time.Since(begin); d < idle/2 {
		t.Errorf("closed after %v, before MaxConnectionIdle %v", d, idle)
	}

	// A connection with a stream open is not idle, however long the stream.
	r = dialRaw(t, ts.addr, true)
	r.call(1, bidiPath, false)
	r.nc.SetReadDeadline(time.Now().Add(3 * idle))
	for {
		f, err := r.fr.ReadFrame()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("a connection with an open stream: %v", err)
		}
		if _, ok := f.(*http2.GoAwayFrame); ok {
			t.Fatal("GOAWAY on a connection with an open stream")
		}
	}
	r.nc.SetDeadline(time.Now().Add(5 * time.Second))
	r.data(1, true, grpcMsg(t, &pb.EchoRequest{FirstMessage: "still here"}))
	blocks, body := r.response(1)
	if len(blocks) != 2 || !bytes.Equal(body, grpcMsg(t, &pb.EchoResponse{Message: "still here"})) {
		t.Fatal("the long stream was not answered")
	}
	// Idle again once it ended.
	begin = time.Now()
	r.goAway()
	if d := time.Since(begin); d < idle/2 {
		t.Errorf("closed %v after the last stream ended, before MaxConnectionIdle %v", d, idle)
	}
}

func TestConnectionTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	ts := start(t, h2grpc.Options{ConnectionTimeout: timeout}, &svc{})

	// Nothing sent: closed after the timeout.
	begin := time.Now()
	r := dialRaw(t, ts.addr, false)
	if b, err := io.ReadAll(r.nc); err != nil && !isReset(err) || len(b) != 0 {
		t.Fatalf("a silent connection: read %q, %v; want a plain close", b, err)
	}
	if d := time.Since(begin); d < timeout/2 {
		t.Errorf("closed after %v, before ConnectionTimeout %v", d, timeout)
	}

	// The preface but no SETTINGS: the server's SETTINGS, then closed.
	r = dialRaw(t, ts.addr, false)
	io.WriteString(r.nc, http2.ClientPreface)
	if _, ok := r.next().(*http2.SettingsFrame); !ok {
		t.Fatal("no SETTINGS from the server")
	}
	r.expectClose()

	// After the handshake the timeout no longer applies.
	r = dialRaw(t, ts.addr, true)
	time.Sleep(2 * timeout)
	r.ping()
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

// TestWriteTimeout: a client that stops reading loses the connection (its
// handlers' sends fail) within WriteTimeout, instead of holding the
// handler and the write lock for ever.
func TestWriteTimeout(t *testing.T) {
	sendErr := make(chan error, 1)
	ts := start(t, h2grpc.Options{WriteTimeout: 300 * time.Millisecond}, &svc{server: func(req *pb.EchoRequest, ss grpc.ServerStream) error {
		m := &pb.EchoResponse{Message: randText(256 << 10)}
		for {
			if err := ss.SendMsg(m); err != nil {
				sendErr <- err
				return err
			}
		}
	}})
	r := dialRaw(t, ts.addr, true)
	// Windows wide open: only TCP's buffers hold the server back.
	r.check(r.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30}))
	r.check(r.fr.WriteWindowUpdate(0, 1<<30))
	r.call(1, serverPath, false)
	r.data(1, true, grpcMsg(t, &pb.EchoRequest{}))
	// ... and never read.
	select {
	case err := <-sendErr:
		if err == nil {
			t.Fatal("nil error")
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the handler's sends to a client that reads nothing still block after 4 s (WriteTimeout 300 ms)")
	}
}

// TestRawStreamWindowBoundary: a stream's send window may reach 2^31-1
// exactly (RFC 9113 §6.9.1); one more byte of credit resets the stream
// with FLOW_CONTROL_ERROR and leaves the connection served.
func TestRawStreamWindowBoundary(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.call(1, bidiPath, false)
	r.check(r.fr.WriteWindowUpdate(1, 1<<31-1-65535)) // to 2^31-1 exactly
	r.data(1, false, grpcMsg(t, &pb.EchoRequest{FirstMessage: "x"}))
	r.until("the echo", func(f http2.Frame) bool {
		if rst, ok := f.(*http2.RSTStreamFrame); ok {
			t.Fatalf("stream reset with %v at a window of 2^31-1", rst.ErrCode)
		}
		return f.Header().StreamID == 1 && f.Header().Type == http2.FrameData
	})
	// The echo took some of the window: credit it back and one more.
	r.check(r.fr.WriteWindowUpdate(1, 1<<31-1))
	f := r.until("the reset", func(f http2.Frame) bool { _, ok := f.(*http2.RSTStreamFrame); return ok }).(*http2.RSTStreamFrame)
	if f.StreamID != 1 || f.ErrCode != http2.ErrCodeFlowControl {
		t.Fatalf("RST_STREAM %d %v, want 1 FLOW_CONTROL_ERROR", f.StreamID, f.ErrCode)
	}
	r.ping()
}

// TestRawStreamIDReused: a new stream must have a higher ID than every
// stream before it; HEADERS on the ID of a stream that has ended is a
// connection error (STREAM_CLOSED), not a new call.
func TestRawStreamIDReused(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.unaryDone(1)
	r.call(1, unaryPath, false)
	if ga := r.goAway(); ga.ErrCode != http2.ErrCodeStreamClosed {
		t.Fatalf("GOAWAY %v, want STREAM_CLOSED", ga.ErrCode)
	}
}

// TestRawWindowUpdateUnopenedStream: WINDOW_UPDATE on a stream never
// opened is a connection error; on one that has ended it is ignored.
func TestRawWindowUpdateUnopenedStream(t *testing.T) {
	ts := start(t, h2grpc.Options{}, &svc{})
	r := dialRaw(t, ts.addr, true)
	r.unaryDone(1)
	r.check(r.fr.WriteWindowUpdate(1, 100)) // ended: ignored
	r.ping()
	r.check(r.fr.WriteWindowUpdate(3, 100)) // never opened
	if ga := r.goAway(); ga.ErrCode != http2.ErrCodeProtocol {
		t.Fatalf("GOAWAY %v, want PROTOCOL_ERROR", ga.ErrCode)
	}
}
