package wire

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/store"
)

// feedAll runs in through a fresh parser of stack s, direction response
// (in) or request (out), cut into pieces of size chunk (0: whole).
func feedAll(s Stack, response bool, in []byte, chunk int) results.Layers {
	var w Counter
	pin, pout := newParsers(s, &w)
	p := pout
	if response {
		p = pin
	}
	if chunk <= 0 {
		chunk = len(in) + 1
	}
	for len(in) > 0 {
		n := min(chunk, len(in))
		p.feed(in[:n])
		in = in[n:]
	}
	if response {
		return w.In()
	}
	return w.Out()
}

// TestLayersKnownExchanges checks each parser on exchanges written by
// hand, whose split is known byte for byte, whole and a byte at a time.
func TestLayersKnownExchanges(t *testing.T) {
	resHead := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	ndjson := resHead + "c\r\n{\"id\":1}\n{}\n\r\n0\r\n\r\n" // records of 8 and 2 bytes, 2 newlines
	sse := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 28\r\n\r\n" +
		"event: u\ndata: {\"id\":1}\n\n:x\n" // 28 bytes
	h2 := h2Preface +
		"\x00\x00\x00\x04\x00\x00\x00\x00\x00" + // SETTINGS, empty
		"\x00\x00\x03\x01\x04\x00\x00\x00\x01abc" + // HEADERS, 3-byte block
		"\x00\x00\x0b\x00\x09\x00\x00\x00\x01\x02" + "\x00\x00\x00\x00\x03xyz" + "pp" + // DATA padded(2), END_STREAM: 5-byte prefix, 3-byte message
		"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x00\x10" // WINDOW_UPDATE
	cases := []struct {
		name     string
		s        Stack
		response bool
		in       string
		want     results.Layers
	}{
		{"h1 request with a body", StackH1, false, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n{}{}" + "GET / HTTP/1.1\r\n\r\n",
			results.Layers{H1Headers: 52 + 18, Message: 4}},
		{"h1 chunked response", StackH1, true, resHead + "3\r\nabc\r\n0\r\n\r\n",
			results.Layers{H1Headers: int64(len(resHead)), H1Framing: 3 + 2 + 5, Message: 3}},
		{"ndjson", StackH1NDJSON, true, ndjson,
			results.Layers{H1Headers: int64(len(resHead)), H1Framing: 3 + 2 + 5, Message: 10, Envelope: 2}},
		{"sse", StackH1SSE, true, sse,
			results.Layers{H1Headers: int64(len(sse) - 28), Message: 8, Envelope: 28 - 8}},
		{"h2 grpc client side", StackH2GRPC, false, h2,
			results.Layers{H2Frames: 24 + 9 + 9 + 9 + 1 + 2 + 9 + 4, H2Headers: 3, Envelope: 5, Message: 3}},
		{"grpc-web response", StackH1Enveloped, true, "HTTP/1.1 200 OK\r\nContent-Length: 26\r\n\r\n" +
			"\x00\x00\x00\x00\x02hi" + "\x80\x00\x00\x00\x0egrpc-status:0\r",
			results.Layers{H1Headers: 39, Envelope: 5 + 5 + 14, Message: 2}},
		{"websocket, masked client frames", StackWS, false, "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n" +
			"\x81\x82\x01\x02\x03\x04" + string([]byte{'h' ^ 1, 'i' ^ 2}) + "\x88\x80\x00\x00\x00\x00",
			results.Layers{H1Headers: 40, WS: 6 + 6, Message: 2}},
	}
	for _, c := range cases {
		for _, chunk := range []int{0, 1, 7} {
			got := feedAll(c.s, c.response, []byte(c.in), chunk)
			if got != c.want {
				t.Errorf("%s (chunks of %d): got %+v, want %+v", c.name, chunk, got, c.want)
			}
			if got.Total() != int64(len(c.in)) {
				t.Errorf("%s: total %d, want %d", c.name, got.Total(), len(c.in))
			}
		}
	}
}

// TestLayersGRPCUnary counts a real gRPC exchange: the message layers
// must equal the marshalled sizes and five bytes of prefix each way, and
// the layers must sum to the bytes on the socket.
func TestLayersGRPCUnary(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(10, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcapi.NewServer(st)
	go srv.Serve(ln)
	defer srv.Stop()

	var w Counter
	var raw measure.Bytes
	d := &net.Dialer{}
	dial := Dialer(d.DialContext, StackH2GRPC, &w, &raw)
	cc, err := grpc.NewClient("passthrough:///"+ln.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	req := &pb.GetUserRequest{Id: 3}
	resp, err := pb.NewUserServiceClient(cc).Get(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	cc.Close()
	in, out := w.In(), w.Out()
	if out.Message != int64(proto.Size(req)) || out.Envelope != 5 {
		t.Errorf("sent: message %d envelope %d, want %d and 5", out.Message, out.Envelope, proto.Size(req))
	}
	if in.Message != int64(proto.Size(resp)) || in.Envelope != 5 {
		t.Errorf("received: message %d envelope %d, want %d and 5", in.Message, in.Envelope, proto.Size(resp))
	}
	if in.Total() != raw.In.Load() || out.Total() != raw.Out.Load() {
		t.Errorf("layers sum to %d/%d, socket saw %d/%d", in.Total(), out.Total(), raw.In.Load(), raw.Out.Load())
	}
	if out.H2Frames < 24+9 || out.H2Headers == 0 || in.H2Headers == 0 || in.Other+out.Other != 0 {
		t.Errorf("implausible split: in %+v out %+v", in, out)
	}
}

// FuzzLayers: whatever the bytes and however they are cut, every stack's
// parsers account for each byte exactly once, and the split does not
// depend on the cutting.
func FuzzLayers(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), uint8(3), uint8(0))
	f.Add([]byte(h2Preface+"\x00\x00\x0b\x00\x09\x00\x00\x00\x01\x02\x00\x00\x00\x00\x03xyzpp"), uint8(5), uint8(0))
	f.Add([]byte("HTTP/1.1 101 Switching\r\n\r\n\x82\x7e\x00\x05\x00\x00\x00\x00\x00"), uint8(2), uint8(6))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\ndata: x\r\n\r\nid: 3\n"), uint8(1), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, chunk, stack uint8) {
		s := Stack(int(stack) % (int(StackH2) + 1))
		for _, response := range []bool{true, false} {
			whole := feedAll(s, response, in, 0)
			if whole.Total() != int64(len(in)) {
				t.Fatalf("stack %d: layers sum to %d of %d bytes: %+v", s, whole.Total(), len(in), whole)
			}
			if cut := feedAll(s, response, in, int(chunk)+1); cut != whole {
				t.Fatalf("stack %d: chunks of %d give %+v, whole %+v", s, int(chunk)+1, cut, whole)
			}
		}
	})
}

// TestLayersPlainH2: over plain HTTP/2 (raw h2c and h2 runs) a DATA
// frame's payload is the body, whole, whatever it holds; its padding and
// header are frames.
func TestLayersPlainH2(t *testing.T) {
	// DATA, padded (flag 0x8), stream 1: pad length 2, "\x00\x00\x00\x00\x05" (a
	// gRPC prefix look-alike) and "abc", 2 bytes of padding.
	frame := "\x00\x00\x0b\x00\x08\x00\x00\x00\x01\x02\x00\x00\x00\x00\x05abc\x00\x00"
	got := feedAll(StackH2, true, []byte(frame), 0)
	if got.Message != 8 || got.Envelope != 0 || got.H2Frames != 9+1+2 {
		t.Errorf("plain h2 DATA: %+v", got)
	}
	if g := feedAll(StackH2GRPC, true, []byte(frame), 0); g.Envelope != 5 || g.Message != 3 {
		t.Errorf("gRPC DATA: %+v", g)
	}
}

// TestLayersLimits: a head over maxHead turns the rest into Other (the
// parser keeps no more); DATA of streams past maxH2Streams is counted as
// Message without envelope parsing; totals stay exact.
func TestLayersLimits(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", clientio.MaxHead) + "\r\n\r\nbody"
	got := feedAll(StackH1, true, []byte(head), 64<<10)
	if got.Other == 0 || got.H1Headers != clientio.MaxHead || got.Total() != int64(len(head)) {
		t.Errorf("oversized head: %+v", got)
	}
	if whole := feedAll(StackH1, true, []byte(head), 0); whole != got {
		t.Errorf("oversized head whole %+v, in chunks %+v", whole, got)
	}
	var w Counter
	h := newH2Parser(&w.in, false)
	frame := func(stream uint32, payload string) []byte {
		b := []byte{0, 0, byte(len(payload)), h2Data, 0, byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
		return append(b, payload...)
	}
	for i := range uint32(maxH2Streams) {
		h.feed(frame(2*i+1, "\x00\x00\x00\x00\x01m")) // open streams: prefix + 1-byte message
	}
	h.feed(frame(2*maxH2Streams+1, "\x00\x00\x00\x00\x01m"))
	l := w.In()
	if l.Envelope != 5*maxH2Streams || l.Message != maxH2Streams+6 || len(h.streams) != maxH2Streams {
		t.Errorf("past the stream bound: %+v, %d streams tracked", l, len(h.streams))
	}
}
