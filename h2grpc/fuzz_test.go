package h2grpc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/h2grpc"
	"github.com/wirebench/wirebench/pb"
)

// seedWriter builds a frame sequence as a client would send it after the
// preface and an empty SETTINGS frame.
type seedWriter struct {
	buf  bytes.Buffer
	fr   *http2.Framer
	hbuf bytes.Buffer
	henc *hpack.Encoder
}

func newSeed() *seedWriter {
	w := &seedWriter{}
	w.fr = http2.NewFramer(&w.buf, nil)
	w.henc = hpack.NewEncoder(&w.hbuf)
	return w
}

func (w *seedWriter) block(kv ...string) []byte {
	w.hbuf.Reset()
	for i := 0; i < len(kv); i += 2 {
		w.henc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return bytes.Clone(w.hbuf.Bytes())
}

func (w *seedWriter) call(id uint32, path string, end bool, extra ...string) *seedWriter {
	b := w.block(append([]string{":method", "POST", ":scheme", "http", ":path", path, ":authority", "fuzz",
		"content-type", "application/grpc", "te", "trailers"}, extra...)...)
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: b, EndStream: end, EndHeaders: true})
	return w
}

func (w *seedWriter) msg(id uint32, end bool, m proto.Message) *seedWriter {
	b, _ := proto.Marshal(m)
	w.fr.WriteData(id, end, frameMsg(0, b))
	return w
}

func (w *seedWriter) bytes() []byte { return bytes.Clone(w.buf.Bytes()) }

func fuzzSeeds() [][]byte {
	var seeds [][]byte
	req := &pb.EchoRequest{FirstMessage: "hello", SecondMessage: "3"}

	// A unary call.
	seeds = append(seeds, newSeed().call(1, unaryPath, false).msg(1, true, req).bytes())

	// A unary call without a message; one whose header block is split
	// over HEADERS and CONTINUATION, its message over two DATA frames.
	w := newSeed().call(1, unaryPath, true)
	b := w.block(":method", "POST", ":scheme", "http", ":path", unaryPath, ":authority", "fuzz",
		"content-type", "application/grpc", "grpc-timeout", "10S", "x-md", "v", "x-md-bin", "AAEC")
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b[:5], EndHeaders: false})
	w.fr.WriteContinuation(3, true, b[5:])
	m, _ := proto.Marshal(req)
	fm := frameMsg(0, m)
	w.fr.WriteData(3, false, fm[:3])
	w.fr.WriteDataPadded(3, true, fm[3:], make([]byte, 7))
	seeds = append(seeds, w.bytes())

	// Connection-level frames around a call.
	w = newSeed()
	w.fr.WritePing(false, [8]byte{1, 2, 3})
	w.fr.WriteWindowUpdate(0, 1000)
	w.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: 20000},
		http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
	w.fr.WritePriority(1, http2.PriorityParam{StreamDep: 0, Weight: 10})
	w.call(1, serverPath, false).msg(1, true, &pb.EchoRequest{FirstMessage: "s", SecondMessage: "20"})
	w.fr.WriteWindowUpdate(1, 5000)
	w.fr.WriteSettingsAck()
	seeds = append(seeds, w.bytes())

	// Streams: bidi messages then a reset; a client stream ended by
	// trailers; a server stream.
	w = newSeed().call(1, bidiPath, false).msg(1, false, req).msg(1, false, req)
	w.fr.WriteRSTStream(1, http2.ErrCodeCancel)
	w.call(3, clientPath, false).msg(3, false, req).msg(3, false, req)
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: w.block("x-trailer", "t"), EndStream: true, EndHeaders: true})
	w.call(5, serverPath, false).msg(5, true, req)
	seeds = append(seeds, w.bytes())

	// gzip: a compressed unary call and a compressed client stream.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(m)
	zw.Close()
	w = newSeed().call(1, unaryPath, false, "grpc-encoding", "gzip")
	w.fr.WriteData(1, true, frameMsg(1, z.Bytes()))
	w.call(3, clientPath, false, "grpc-encoding", "gzip")
	w.fr.WriteData(3, false, frameMsg(1, z.Bytes()))
	w.fr.WriteData(3, true, frameMsg(0, m))
	seeds = append(seeds, w.bytes())

	// Not gRPC: GET, another content-type, an unknown method; a GOAWAY.
	w = newSeed()
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block(":method", "GET", ":scheme", "http", ":path", "/", ":authority", "fuzz"), EndStream: true, EndHeaders: true})
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: w.block(":method", "POST", ":scheme", "http", ":path", unaryPath, ":authority", "fuzz", "content-type", "text/plain"), EndStream: true, EndHeaders: true})
	w.call(5, "/no.Such/Method", false).msg(5, true, req)
	w.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	seeds = append(seeds, w.bytes())
	return seeds
}

// framesEnd reports whether in is a whole number of frames (by their
// length fields).
func framesEnd(in []byte) bool {
	for len(in) >= 9 {
		n := 9 + (int(in[0])<<16 | int(in[1])<<8 | int(in[2]))
		if n > len(in) {
			return false
		}
		in = in[n:]
	}
	return len(in) == 0
}

// FuzzFrames writes arbitrary frames after the preface and SETTINGS on a
// fresh connection to one shared server. The server must neither panic nor
// hang: the connection ends, or (input ending on a frame boundary) a PING
// written after the input is answered; the server's own frames must parse;
// and a grpc-go call on a new connection must still succeed.
func FuzzFrames(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	ts := start(f, h2grpc.Options{MaxRecvMsgSize: 64 << 10, MaxConcurrentStreams: 8, MaxHeaderListSize: 8 << 10}, &svc{})
	f.Fuzz(func(t *testing.T, in []byte) {
		exchange(t, ts.addr, in)
		cc := dial(t, ts.addr)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := unary(ctx, cc, &pb.EchoRequest{FirstMessage: "alive"})
		if err != nil || resp.Message != "alive" {
			t.Fatalf("a normal call after the input: %q, %v", resp.GetMessage(), err)
		}
	})
}

func exchange(t *testing.T, addr string, in []byte) {
	nc, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(3 * time.Second))

	whole := framesEnd(in)
	pingData := [8]byte{'f', 'u', 'z', 'z', 'p', 'i', 'n', 'g'}
	var out bytes.Buffer
	out.WriteString(http2.ClientPreface)
	fw := http2.NewFramer(&out, nil)
	fw.WriteSettings()
	out.Write(in)
	if whole {
		fw.WritePing(false, pingData)
	}
	go func() {
		if _, err := nc.Write(out.Bytes()); err == nil && !whole {
			nc.(*net.TCPConn).CloseWrite()
		}
	}()

	fr := http2.NewFramer(io.Discard, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.SetMaxReadFrameSize(1<<24 - 1)
	for {
		f, err := fr.ReadFrame()
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.Fatalf("after %d input bytes (whole frames: %v) the server neither answered nor closed", len(in), whole)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
			errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
			return // the server closed the connection
		default:
			t.Fatalf("the server's frames do not parse: %v", err)
		}
		if p, ok := f.(*http2.PingFrame); ok && whole && p.IsAck() && p.Data == pingData {
			return // processed the input and still serving
		}
	}
}

func TestFramesEnd(t *testing.T) {
	one := make([]byte, 9+3)
	binary.BigEndian.PutUint32(one, 3<<8) // length 3
	for _, tc := range []struct {
		in   []byte
		want bool
	}{
		{nil, true},
		{one, true},
		{append(bytes.Clone(one), one...), true},
		{one[:11], false},
		{append(bytes.Clone(one), 0), false},
	} {
		if got := framesEnd(tc.in); got != tc.want {
			t.Errorf("framesEnd(%x) = %v", tc.in, got)
		}
	}
}
