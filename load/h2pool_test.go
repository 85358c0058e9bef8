package load

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// h2Server is an h2c server (net/http's) that counts the connections it
// accepted, the requests it handled and the bytes on its sockets.
type h2Server struct {
	URL      string
	ln       *measure.Listener
	srv      *http.Server
	accepts  atomic.Int64
	requests atomic.Int64
}

type acceptCounter struct {
	net.Listener
	n *atomic.Int64
}

func (a acceptCounter) Accept() (net.Conn, error) {
	c, err := a.Listener.Accept()
	if err == nil {
		a.n.Add(1)
	}
	return c, err
}

// settle waits (up to 2 s) until the server has read and written as many
// bytes as res counted: the client's last frames may still be on their
// way when the run returns.
func (s *h2Server) settle(res *results.Load) {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s.ln.Bytes.In.Load() == res.Bytes.WireOut && s.ln.Bytes.Out.Load() >= res.Bytes.WireIn {
			return
		}
	}
}

func startH2Server(t *testing.T, maxStreams uint32, h func(n int64, w http.ResponseWriter, r *http.Request)) *h2Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Server{URL: "http://" + ln.Addr().String() + "/"}
	s.ln = &measure.Listener{Listener: acceptCounter{ln, &s.accepts}}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	s.srv = &http.Server{Protocols: &protos, HTTP2: &http.HTTP2Config{MaxConcurrentStreams: int(maxStreams)},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(s.requests.Add(1), w, r) })}
	go s.srv.Serve(s.ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// TestH2ConnectionsExact: more VUs than the server's stream limit share
// exactly the connections asked for, waiting for a stream; net/http's
// Transport opened more, and x/net's own pool stalled for good
// (golang/go#70809).
func TestH2ConnectionsExact(t *testing.T) {
	t.Parallel()
	s := startH2Server(t, 4, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(time.Millisecond) // streams overlap
		w.Write([]byte("hello, wirebench"))
	})
	res := runRaw(t, Options{Options: results.Options{Concurrency: 32, Requests: 400, Timeout: 10 * time.Second}}, RawOptions{Options: conn.Options{URL: s.URL, Transport: conn.H2C, Connections: 2}})
	if res.Requests != 400 || res.Failed != 0 || s.requests.Load() != 400 {
		t.Errorf("%d requests, %d failed %v; the server handled %d", res.Requests, res.Failed, res.Failures, s.requests.Load())
	}
	if n := s.accepts.Load(); n != 2 {
		t.Errorf("%d connections for --conns 2", n)
	}
}

// TestH2GoAwayCounted: a server that ends connections with GOAWAY every
// 25 requests (as nginx does every 1,000) gets each request once, every
// one counted, on new connections.
func TestH2GoAwayCounted(t *testing.T) {
	t.Parallel()
	s := startH2Server(t, 100, func(n int64, w http.ResponseWriter, _ *http.Request) {
		if n%25 == 0 {
			w.Header().Set("Connection", "close") // net/http's h2 server: GOAWAY
		}
		w.Write([]byte("hello, wirebench"))
	})
	res := runRaw(t, Options{Options: results.Options{Concurrency: 8, Requests: 500, Timeout: 10 * time.Second}}, RawOptions{Options: conn.Options{URL: s.URL, Transport: conn.H2C}})
	s.settle(res)
	if res.Requests != 500 || res.Failed != 0 || s.requests.Load() != 500 || res.Status["200"] != 500 {
		t.Errorf("%d requests, %d failed %v, status %v; the server handled %d", res.Requests, res.Failed, res.Failures, res.Status, s.requests.Load())
	}
	if n := s.accepts.Load(); n < 10 {
		t.Errorf("%d connections: the server's GOAWAYs did not end them", n)
	}
	if res.Bytes.WireOut != s.ln.Bytes.In.Load() || res.Bytes.WireIn != s.ln.Bytes.Out.Load() {
		t.Errorf("we counted %d out %d in; the server %d in %d out", res.Bytes.WireOut, res.Bytes.WireIn, s.ln.Bytes.In.Load(), s.ln.Bytes.Out.Load())
	}
}

// TestH2BodyAnsweredEarly: a server that answers a 16 MiB body with 413
// before reading it resets the stream; the body bytes out are the DATA
// the connection sent (at most the server's window), not what the
// transport read ahead (512 KiB a request, more than the wire carried).
func TestH2BodyAnsweredEarly(t *testing.T) {
	t.Parallel()
	s := startH2Server(t, 100, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})
	body := bytes.Repeat([]byte("a"), 16<<20)
	res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 20, Timeout: 10 * time.Second}},
		RawOptions{Options: conn.Options{URL: s.URL, Transport: conn.H2C}, Method: "POST", Body: body, ExpectStatus: []int{413}})
	s.settle(res)
	if res.Requests != 20 || res.Failed != 0 || res.Status["413"] != 20 {
		t.Fatalf("%d requests, %d failed %v, status %v", res.Requests, res.Failed, res.Failures, res.Status)
	}
	b := res.Bytes
	// The server may not read the last frames the client sent: closing a
	// connection with a reply unread resets it, and a TCP reset drops what
	// the server's kernel still held (a RST_STREAM is 13 bytes; CI once
	// saw two, one per connection, missing).
	in := s.ln.Bytes.In.Load()
	if b.BodyOut > b.WireOut || b.WireOut < in || b.WireOut-in > 2*64 || b.BodyOut >= 20*int64(len(body)) {
		t.Errorf("body out %d in wire out %d (the server read %d bytes) for 20 bodies of %d answered early", b.BodyOut, b.WireOut, in, len(body))
	}
	// A whole body read by the server is counted whole.
	s2 := startH2Server(t, 100, func(_ int64, w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	res = runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 4, Timeout: 10 * time.Second}},
		RawOptions{Options: conn.Options{URL: s2.URL, Transport: conn.H2C}, Method: "POST", Body: body})
	if res.Failed != 0 || res.Bytes.BodyOut != 4*int64(len(body)) {
		t.Errorf("%d failed %v; body out %d, want %d", res.Failed, res.Failures, res.Bytes.BodyOut, 4*len(body))
	}
}

// TestH2RefusedStreamsResent: a server that refuses every 10th stream
// unprocessed (REFUSED_STREAM) has each request answered once, none
// counted as failed, and the run says how many were sent again.
func TestH2RefusedStreamsResent(t *testing.T) {
	t.Parallel()
	var streams, refused, answered atomic.Int64
	addr := loadtest.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		h, err := loadtest.OpenFakeH2(c)
		if err != nil {
			return
		}
		for {
			f, err := h.Fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					h.Fr.WriteSettingsAck()
				}
			case *http2.PingFrame:
				if !f.IsAck() {
					h.Fr.WritePing(true, f.Data)
				}
			case *http2.MetaHeadersFrame:
				if streams.Add(1)%10 == 0 {
					refused.Add(1)
					h.Fr.WriteRSTStream(f.StreamID, http2.ErrCodeRefusedStream)
					break
				}
				answered.Add(1)
				h.HB.Reset()
				h.HE.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				h.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: h.HB.Bytes(), EndHeaders: true, EndStream: true})
			}
			if h.BW.Flush() != nil {
				return
			}
		}
	})
	res := runRaw(t, Options{Options: results.Options{Concurrency: 4, Requests: 300, Timeout: 10 * time.Second}}, RawOptions{Options: conn.Options{URL: "http://" + addr + "/", Transport: conn.H2C}})
	if res.Requests != 300 || res.Failed != 0 || answered.Load() != 300 {
		t.Errorf("%d requests, %d failed %v; the server answered %d", res.Requests, res.Failed, res.Failures, answered.Load())
	}
	want := fmt.Sprintf("%d HTTP/2 requests were sent again", refused.Load())
	if refused.Load() == 0 || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("the server refused %d streams; warnings %q", refused.Load(), res.Warnings)
	}
}

// TestH2TLSHandshakeBounded: a server that accepts and never answers the
// TLS handshake fails each request by the run's timeout; the dial does not
// hang the run.
func TestH2TLSHandshakeBounded(t *testing.T) {
	t.Parallel()
	addr := loadtest.ServeTCP(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // reads the ClientHello, answers nothing
	start := time.Now()
	res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 4, Timeout: 300 * time.Millisecond}},
		RawOptions{Options: conn.Options{URL: "https://" + addr + "/", Transport: conn.H2, Insecure: true}})
	if res.Failed != 4 || (testkit.Timing() && time.Since(start) > 5*time.Second) {
		t.Errorf("%d of %d failed (%v) in %v", res.Failed, res.Requests, res.Failures, time.Since(start))
	}
}
