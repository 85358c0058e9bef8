package h3

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/ipv4"

	"github.com/wirebench/wirebench/measure"
)

// testServer is quic-go's HTTP/3 server on 127.0.0.1:0 whose UDP socket
// is counted like the client's, and which counts requests and connections.
type testServer struct {
	addr            string
	roots           *x509.CertPool
	bytes           measure.Bytes
	requests, conns atomic.Int64
	srv             *http3.Server
	stall           chan struct{} // ?stall=head or =body waits for the test's end
	// stalled counts the stalled requests, cut those of them whose
	// stream the client reset (their context ended before the test's).
	stalled, cut atomic.Int64
	// onConn, if set, sees each connection as it is accepted (set while
	// the server serves: an atomic, not srv.ConnContext).
	onConn atomic.Pointer[func(*quic.Conn)]
}

func startServer(t testing.TB, maxStreams int64) *testServer {
	t.Helper()
	return startServerConfig(t, &quic.Config{MaxIncomingStreams: maxStreams})
}

func startServerConfig(t testing.TB, qc *quic.Config) *testServer {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	s := &testServer{roots: x509.NewCertPool(), stall: make(chan struct{})}
	s.roots.AddCert(leaf)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s.addr = udp.LocalAddr().String()
	s.srv = &http3.Server{
		TLSConfig:  http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}),
		QUICConfig: qc,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if st := r.URL.Query().Get("stall"); st != "" {
				if st == "body" { // the headers and a first byte, then nothing
					w.Write([]byte("x"))
					w.(http.Flusher).Flush()
				}
				s.stalled.Add(1)
				select {
				case <-r.Context().Done():
					s.cut.Add(1)
				case <-s.stall:
				}
				return
			}
			b, _ := io.ReadAll(r.Body)
			if n, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil { // ?n=N: N bytes
				w.Write(bytes.Repeat([]byte("r"), n))
			} else {
				w.Write([]byte("hello " + string(b)))
			}
			s.requests.Add(1)
		}),
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			s.conns.Add(1)
			if f := s.onConn.Load(); f != nil {
				(*f)(c)
			}
			return ctx
		},
	}
	done := make(chan struct{})
	go func() { s.srv.Serve(newCountConn(udp, &s.bytes)); close(done) }()
	t.Cleanup(func() { close(s.stall); s.srv.Close(); udp.Close(); <-done })
	return s
}

// --conns is exact: 12 VUs over 3 connections open 3 QUIC connections,
// no more, even with one stream per connection allowed (the others wait
// for it); every request arrives; the handshakes are timed, one each.
func TestPoolConnectionsExact(t *testing.T) {
	s := startServer(t, 1)
	p := NewPool(3, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	defer p.Close()
	p.Warm(context.Background())
	var wg sync.WaitGroup
	var failed atomic.Int64
	for vu := range 12 {
		wg.Go(func() {
			for range 20 {
				resp, err := p.Client(vu).Post("https://"+s.addr+"/", "text/plain", strings.NewReader("x"))
				if err != nil {
					t.Error(err)
					failed.Add(1)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "hello x" || resp.ProtoMajor != 3 {
					t.Errorf("%s %q", resp.Proto, b)
				}
			}
		})
	}
	wg.Wait()
	if got := s.requests.Load(); got != 240 || failed.Load() != 0 {
		t.Errorf("server saw %d requests, want 240 (%d failed)", got, failed.Load())
	}
	if got := s.conns.Load(); got != 3 {
		t.Errorf("%d QUIC connections, want 3 (--conns)", got)
	}
	if hs := p.Handshakes(); len(hs) != 3 || hs[0] <= 0 {
		t.Errorf("handshakes %v, want 3 timed", hs)
	}
}

// Every UDP payload byte is counted once on each side: once the
// connections are at rest (the last ACKs crossed), what the client sent is
// what the server received and the other way round (loopback loses
// nothing at this rate), and it is more than the bodies it carried; after
// the client closes, the server receives its CONNECTION_CLOSE packets,
// counted on both sides. (Compared at rest, not after the close: a packet
// the server sends just before it reads the client's CONNECTION_CLOSE
// arrives at a closed socket, counted by the server only — this test
// failed so under -race on this branch, 26 to 31 bytes, 1 run in 3.)
func TestPoolBytesMatchTheServerSocket(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(2, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	body := strings.Repeat("b", 5000)
	for vu := range 4 {
		resp, err := p.Client(vu).Post("https://"+s.addr+"/", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	settle := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: client in %d out %d, server in %d out %d: want each side's out = the other's in", what,
					p.Bytes.In.Load(), p.Bytes.Out.Load(), s.bytes.In.Load(), s.bytes.Out.Load())
			}
		}
	}
	settle("at rest", func() bool {
		return p.Bytes.Out.Load() == s.bytes.In.Load() && p.Bytes.In.Load() == s.bytes.Out.Load()
	})
	if cout, cin := p.Bytes.Out.Load(), p.Bytes.In.Load(); cout < 4*5000 || cin < 4*int64(len("hello ")+5000) {
		t.Errorf("client in %d out %d: less than the bodies", cin, cout)
	}
	before := p.Bytes.Out.Load()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	settle("after close", func() bool { return p.Bytes.Out.Load() == s.bytes.In.Load() })
	if p.Bytes.Out.Load() == before {
		t.Error("no CONNECTION_CLOSE counted")
	}
}

// A request to a port where nothing listens fails within its timeout,
// and the pool stays usable (it dials again on the next request).
func TestPoolNoServer(t *testing.T) {
	udp, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	addr := udp.LocalAddr().String()
	udp.Close()
	p := NewPool(1, addr, 500*time.Millisecond, &tls.Config{InsecureSkipVerify: true})
	defer p.Close()
	if _, err := p.Client(0).Get("https://" + addr + "/"); err == nil {
		t.Fatal("a request with no server succeeded")
	}
	if hs := p.Handshakes(); len(hs) != 0 {
		t.Errorf("handshakes %v with no server", hs)
	}
}

// A dial that outlives Close (Warm gave up on it) is closed when it
// completes, not kept as the slot's connection: nothing of a closed pool
// stays open.
func TestPoolCloseDuringDial(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Warm(ctx) // returns at once; the dial goes on
	sl := p.slots[0]
	sl.mu.Lock()
	d := sl.dialing
	sl.mu.Unlock()
	if d == nil {
		t.Skip("the handshake finished before Warm returned")
	}
	p.Close()
	<-d.done
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if !errors.Is(d.err, ErrClosed) || sl.c != nil {
		t.Errorf("dial after Close: err %v, connection kept %v", d.err, sl.c != nil)
	}
}

// A connection the server closed (its idle timeout) is dialed again by the
// next request, which succeeds: the slot does not keep a dead connection.
func TestPoolRedialsAfterServerIdleClose(t *testing.T) {
	s := startServerConfig(t, &quic.Config{MaxIdleTimeout: 200 * time.Millisecond})
	p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	defer p.Close()
	get := func() {
		t.Helper()
		resp, err := p.Client(0).Get("https://" + s.addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get()
	c := p.slots[0].c
	// The server's 200 ms idle timeout ends it (the client waits at least
	// 5 s, quic-go's floor for a peer's idle timeout); 30 s is a guard.
	select {
	case <-c.qc.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the connection outlived the server's idle timeout by 30 s")
	}
	get()
	if got := s.conns.Load(); got != 2 || len(p.Handshakes()) != 2 || s.requests.Load() != 2 {
		t.Errorf("%d connections, %d handshakes, %d requests: want 2 each", got, len(p.Handshakes()), s.requests.Load())
	}
}

// TestCountConnTakesTheFastPath: the counted socket offers quic-go what
// its own *net.UDPConn does — ReadMsgUDP/WriteMsgUDP (ECN, GSO) and
// ReadBatch (recvmmsg) — so the client does not fall back to one system
// call per datagram, and a batch read is counted datagram by datagram.
func TestCountConnTakesTheFastPath(t *testing.T) {
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var b measure.Bytes
	var pc net.PacketConn = newCountConn(u, &b)
	if _, ok := pc.(quic.OOBCapablePacketConn); !ok {
		t.Fatal("countConn is not a quic.OOBCapablePacketConn: quic-go would read and write one datagram per system call")
	}
	bc, ok := pc.(interface {
		ReadBatch([]ipv4.Message, int) (int, error)
	})
	if !ok {
		t.Fatal("countConn has no ReadBatch: quic-go would unwrap the socket and read past the count")
	}
	s, err := net.DialUDP("udp", nil, u.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{100, 200, 300} {
		if _, err := s.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	ms := make([]ipv4.Message, 8)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, 1500)}
	}
	got := 0
	for got < 3 {
		k, err := bc.ReadBatch(ms, 0)
		if err != nil {
			t.Fatal(err)
		}
		got += k
	}
	if in := b.In.Load(); in != 600 {
		t.Fatalf("counted %d bytes in, want 600", in)
	}
	if _, _, err := pc.(quic.OOBCapablePacketConn).WriteMsgUDP(make([]byte, 50), nil, s.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	if out := b.Out.Load(); out != 50 {
		t.Fatalf("counted %d bytes out, want 50", out)
	}
}
