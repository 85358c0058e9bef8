// Package loadtest holds the fake servers that the tests of load and of
// its client packages share.
package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/server"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// ServeTCP listens on 127.0.0.1:0 and serves each connection it accepts
// with serve, in a goroutine of its own, until the test ends; it returns
// the address.
func ServeTCP(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// FakeH2 is the server side of a test's HTTP/2 connection, opened by
// OpenFakeH2: the client's preface read, the server's SETTINGS sent.
type FakeH2 struct {
	Fr *http2.Framer
	BW *bufio.Writer
	HB bytes.Buffer // the HPACK block HE writes
	HE *hpack.Encoder
}

// OpenFakeH2 reads the client's preface from c and sends SETTINGS.
func OpenFakeH2(c net.Conn, settings ...http2.Setting) (*FakeH2, error) {
	br := bufio.NewReader(c)
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(br, preface); err != nil || string(preface) != http2.ClientPreface {
		return nil, fmt.Errorf("no HTTP/2 preface (%v)", err)
	}
	h := &FakeH2{BW: bufio.NewWriter(c)}
	h.Fr = http2.NewFramer(h.BW, br)
	table := uint32(4096)
	for _, st := range settings {
		if st.ID == http2.SettingHeaderTableSize {
			table = st.Val // the decoder keeps what it announced
		}
	}
	h.Fr.ReadMetaHeaders = hpack.NewDecoder(table, nil)
	h.HE = hpack.NewEncoder(&h.HB)
	h.Fr.WriteSettings(settings...)
	return h, h.BW.Flush()
}

// StartServer runs the reference server (REST and gRPC) on
// 127.0.0.1:0 with users seeded users.
func StartServer(t *testing.T, users int) (restURL, grpcAddr string) {
	t.Helper()
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: users, SeedTodos: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return "http://" + srv.HTTPAddr(), srv.GRPCAddr()
}

// HTTPServer is an HTTP server on 127.0.0.1:0 that counts the requests
// it handled and the bytes on its sockets.
type HTTPServer struct {
	URL      string
	Ln       *measure.Listener // counts the bytes on the server's sockets
	Srv      *http.Server
	Requests atomic.Int64
}

// StartHTTP serves h over HTTP/1.1 and h2c until the test ends.
func StartHTTP(t *testing.T, h http.HandlerFunc) *HTTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &HTTPServer{URL: "http://" + ln.Addr().String() + "/", Ln: &measure.Listener{Listener: ln}}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	ts.Srv = &http.Server{Protocols: &protos, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.Requests.Add(1)
		h(w, r)
	})}
	go ts.Srv.Serve(ts.Ln)
	t.Cleanup(func() { ts.Close() })
	return ts
}

// Close stops the server and waits for its connections to end, so its
// byte counters are final.
func (ts *HTTPServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.Srv.Shutdown(ctx)
	ts.Srv.Close()
}

// OK answers 200 with a short text body.
func OK(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("hello, wirebench"))
}
