package load

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// testServer is an HTTP server on 127.0.0.1:0 that counts the requests
// it handled and the bytes on its sockets.
type testServer struct {
	URL      string
	ln       *measure.Listener
	srv      *http.Server
	requests atomic.Int64
}

func startServer(t *testing.T, h http.HandlerFunc) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{URL: "http://" + ln.Addr().String() + "/", ln: &measure.Listener{Listener: ln}}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	ts.srv = &http.Server{Protocols: &protos, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.requests.Add(1)
		h(w, r)
	})}
	go ts.srv.Serve(ts.ln)
	t.Cleanup(func() { ts.Close() })
	return ts
}

// Close stops the server and waits for its connections to end, so its
// byte counters are final.
func (ts *testServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	ts.srv.Close()
}

func okHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("hello, wirebench"))
}

func runRaw(t *testing.T, o Options, ro RawOptions) *results.Load {
	t.Helper()
	if ro.Timeout == 0 { // the CLI sets both from -t
		ro.Timeout = o.Timeout
	}
	sc, err := NewRaw(ro)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
