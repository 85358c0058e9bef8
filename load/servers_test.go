package load

import (
	"bufio"
	"context"
	"errors"
	"sync"

	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
	"golang.org/x/sys/unix"
)

// The engines every correctness test runs: the event loop, the lean
// client on goroutines, and net/http.
var engines = []struct {
	name string
	loop bool
	ro   RawOptions
	rate float64 // open loop at this rate; 0: closed loop
}{
	{"loop", true, RawOptions{}, 0},
	{"goroutine", false, RawOptions{}, 0},
	{"std", false, RawOptions{Options: conn.Options{Client: conn.ClientStd}}, 0},
	{"open", false, RawOptions{}, 5000},
}

// TestServersThatClose: against servers that close connections in every
// way HTTP allows, each engine counts exactly the responses the server
// wrote, with no failure (issue 9: phantom "timeout" failures and
// collapsed rates against Connection: close and HTTP/1.0 servers).
func TestServersThatClose(t *testing.T) {
	t.Parallel()
	const hello = "Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
	servers := []struct {
		name string
		b    loadtest.Behaviour
		body int64 // body bytes per response
	}{
		{"connection close", loadtest.Respond("HTTP/1.1 200 OK\r\nConnection: close\r\n"+hello, 1, 0), 5},
		{"http/1.0", loadtest.Respond("HTTP/1.0 200 OK\r\n"+hello, 1, 0), 5},
		{"http/1.0 close-delimited", loadtest.Respond("HTTP/1.0 200 OK\r\n\r\nhello, until EOF", 1, 0), 16},
		{"http/1.1 close-delimited", loadtest.Respond("HTTP/1.1 200 OK\r\n\r\nhello, until EOF", 1, 0), 16},
		{"close between keep-alive requests", loadtest.Respond("HTTP/1.1 200 OK\r\n"+hello, 3, 0), 5},
		{"close idle keep-alive", loadtest.Respond("HTTP/1.1 200 OK\r\n"+hello, 0, 200*time.Microsecond), 5},
		{"chunked keep-alive", loadtest.Respond("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3;ext=1\r\nllo\r\n0\r\nX-Trailer: 1\r\n\r\n", 0, 0), 5},
		{"103 early hints", loadtest.Respond("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"+hello, 0, 0), 5},
		{"204 then keep-alive", loadtest.Respond("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 0, 0), 0},
	}
	for _, sv := range servers {
		for _, e := range engines {
			t.Run(sv.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				s := loadtest.StartRawServer(t, sv.b)
				ro := e.ro
				ro.URL = s.URL
				if sv.body == 0 {
					ro.ExpectStatus = []int{204}
				}
				const n = 300
				res := runRaw(t, Options{Options: results.Options{Concurrency: 4, Requests: n, EventLoop: e.loop, Rate: e.rate, Timeout: 5 * time.Second}}, ro)
				if res.Failed != 0 || res.Requests != n {
					t.Fatalf("%d requests, %d failed %v; want %d, none failed", res.Requests, res.Failed, res.Failures, n)
				}
				s.Stop()
				if got := s.Served.Load(); got != n {
					t.Errorf("server wrote %d responses, client counted %d", got, n)
				}
				if res.Bytes.BodyIn != n*sv.body {
					t.Errorf("body bytes %d, want %d", res.Bytes.BodyIn, n*sv.body)
				}
			})
		}
	}
}

// TestHEAD: a response to HEAD has no body whatever its Content-Length.
func TestHEAD(t *testing.T) {
	t.Parallel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s := loadtest.StartRawServer(t, loadtest.Respond("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 0, 0))
			ro := e.ro
			ro.URL, ro.Method = s.URL, "HEAD"
			res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 100, EventLoop: e.loop, Rate: e.rate}}, ro)
			s.Stop()
			if res.Failed != 0 || s.Served.Load() != 100 {
				t.Errorf("%d failed %v, server served %d of 100", res.Failed, res.Failures, s.Served.Load())
			}
		})
	}
}

// TestFailuresByReason: a request that got no complete response is a
// failure counted by its reason, the same in every engine.
func TestFailuresByReason(t *testing.T) {
	t.Parallel()
	refused := closedPort(t)
	tests := []struct {
		name   string
		url    string
		b      loadtest.Behaviour
		reason string
	}{
		{"refused", refused, nil, "connection refused"},
		{"closed before response", "", func(br *bufio.Reader, c net.Conn, _ *atomic.Int64) {
			loadtest.ReadRequest(br)
		}, "closed before response"},
		{"closed mid-response", "", func(br *bufio.Reader, c net.Conn, _ *atomic.Int64) {
			loadtest.ReadRequest(br)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
		}, "closed mid-response"},
		{"reset", "", func(br *bufio.Reader, c net.Conn, _ *atomic.Int64) {
			loadtest.ReadRequest(br)
			c.(*net.TCPConn).SetLinger(0) // RST, not FIN
		}, "connection reset"},
		{"malformed", "", func(br *bufio.Reader, c net.Conn, _ *atomic.Int64) {
			loadtest.ReadRequest(br)
			io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n\r\n")
		}, "malformed response"},
		{"timeout", "", func(br *bufio.Reader, c net.Conn, _ *atomic.Int64) {
			loadtest.ReadRequest(br)
			io.Copy(io.Discard, br) // never answers: holds until the client gives up
		}, "timeout"},
	}
	for _, tc := range tests {
		for _, e := range engines {
			t.Run(tc.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				ro := e.ro
				ro.URL = tc.url
				if tc.b != nil {
					ro.URL = loadtest.StartRawServer(t, tc.b).URL
				}
				// The std client's reasons for a reset come from net/http;
				// it reports a reset on a fresh connection as EOF or reset.
				// Only the timeout case may time out: the others get a
				// timeout no busy machine reaches (a 300 ms one turned a
				// late reset into "timeout").
				timeout := 30 * time.Second
				if tc.reason == "timeout" {
					timeout = 300 * time.Millisecond
				}
				res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 6, EventLoop: e.loop, Rate: e.rate, Timeout: timeout}}, ro)
				if res.Failed != 6 || res.Failures[tc.reason] == 0 {
					t.Errorf("failures %v (%d of 6), want all %q", res.Failures, res.Failed, tc.reason)
				}
				for r := range res.Failures {
					if e.name != "std" && r != tc.reason {
						t.Errorf("reason %q, want only %q", r, tc.reason)
					}
				}
			})
		}
	}
}

// closedPort returns a URL whose connections are refused (a port held
// bound, not listening: no other test can take it meanwhile).
func closedPort(t *testing.T) string {
	return "http://" + testkit.RefusedAddr(t) + "/"
}

// stalledListener is a listening socket whose accept queue is full and
// is never drained: a SYN to it gets no answer, as from an overloaded
// server. It returns the URL.
func stalledListener(t *testing.T) string {
	fd, addr := backlog0(t)
	t.Cleanup(func() { unix.Close(fd) })
	for range 2 { // fill the queue; the second attempt may already stall
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			t.Cleanup(func() { c.Close() })
		}
	}
	return "http://" + addr + "/"
}

// backlog0 listens on 127.0.0.1 with a backlog of 0: one connection
// waiting to be accepted fills the queue, and later SYNs are dropped.
// The caller owns (closes) the socket.
func backlog0(t *testing.T) (int, string) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil { // backlog 0: one queued connection fills it
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
}

// TestSlowSYNDoesNotStallLoop: the event loop connects without blocking.
// The server accepts one connection and serves it; one more waits in its
// full accept queue and every later SYN is dropped (retransmitted after
// 1 s, 3 s...). The connection that was accepted must keep being served
// while its loop's other connections wait for their SYN-ACK: with a
// blocking connect the loop sat in the dialer and served nothing.
func TestSlowSYNDoesNotStallLoop(t *testing.T) {
	testkit.NeedTiming(t) // requests served in 1 s: a rate
	t.Parallel()
	fd, addr := backlog0(t)
	f := os.NewFile(uintptr(fd), "backlog0")
	ln, err := net.FileListener(f) // a dup: the backlog stays 0
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var served atomic.Int64
	go func() {
		c, err := ln.Accept() // only one, ever
		if err != nil {
			return
		}
		defer c.Close()
		loadtest.Respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, 0)(bufio.NewReader(c), c, &served)
	}()
	// 4 connections per loop on a 2-CPU box: the served one shares its
	// loop with stalled ones.
	res := runRaw(t, Options{Options: results.Options{Concurrency: 4 * runtime.GOMAXPROCS(0), Duration: time.Second, GracefulStop: 100 * time.Millisecond, EventLoop: true, Timeout: 3 * time.Second}}, RawOptions{Options: conn.Options{URL: "http://" + addr + "/"}})
	// The loops hold the Ps in epoll_wait, so this in-process server runs
	// only when the runtime preempts them (Options.EventLoop): about 30
	// requests a second here. A loop blocked in a connect serves 1 (the
	// request written before it dialled a stalled connection).
	if got := served.Load(); got < 10 {
		t.Errorf("served %d requests in 1 s beside stalled connects (result: %d requests, %v)", got, res.Requests, res.Failures)
	}
}

// TestStalledSYN: connects that get no SYN-ACK fail as timeouts within
// the request timeout, and the run ends on time; in the event loop a
// connect never blocks the loop (it is non-blocking, completed by
// EPOLLOUT), so timeouts keep firing every -t.
func TestStalledSYN(t *testing.T) {
	t.Parallel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ro := e.ro
			ro.URL = stalledListener(t)
			t0 := time.Now()
			res := runRaw(t, Options{Options: results.Options{Concurrency: 3, Duration: time.Second, GracefulStop: 100 * time.Millisecond, EventLoop: e.loop, Timeout: 200 * time.Millisecond}}, ro)
			// Bound: -d 1s + graceful stop 0.1s + a timeout, with slack
			// for a loaded 2-core CI box.
			if el := time.Since(t0); testkit.Timing() && el > 3*time.Second {
				t.Errorf("run took %v, want about 1.1s", el)
			}
			if res.Failures["timeout"] < 3 || res.Failed != res.Failures["timeout"] {
				t.Errorf("failures %v, want timeouts only", res.Failures)
			}
		})
	}
}

// TestPhantomFailuresAtEnd: a timed run against a Connection: close
// server ends without failures; the event loop used to count thousands
// of "i/o timeout" dial failures in the gap between the end of -d and
// its context's timer firing.
func TestPhantomFailuresAtEnd(t *testing.T) {
	t.Parallel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s := loadtest.StartRawServer(t, loadtest.Respond("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 1, 0))
			ro := e.ro
			ro.URL = s.URL
			sc, err := NewRaw(ro)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 4, Duration: 500 * time.Millisecond, EventLoop: e.loop}}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != 0 || res.Requests == 0 {
				t.Errorf("%d requests, failures %v", res.Requests, res.Failures)
			}
			s.Stop()
			if got := s.Served.Load(); got != res.Requests {
				t.Errorf("server served %d, client counted %d", got, res.Requests)
			}
			if res.Window != 500*time.Millisecond {
				t.Errorf("measured window %v, want the 500ms of -d", res.Window)
			}
		})
	}
}

// TestOpenLoopNeverAnswered: in open loop against a server that never
// answers, the requests the schedule could not send (every -c slot held)
// are reported, not silently dropped (issue 10).
func TestOpenLoopNeverAnswered(t *testing.T) {
	t.Parallel()
	s := loadtest.StartRawServer(t, func(br *bufio.Reader, c net.Conn, _ *atomic.Int64) {
		loadtest.ReadRequest(br)
		time.Sleep(time.Second) // never, within the run
	})
	res := runRaw(t, Options{Options: results.Options{Concurrency: 5, Rate: 200, Duration: 500 * time.Millisecond, GracefulStop: 100 * time.Millisecond, Timeout: 5 * time.Second}}, RawOptions{Options: conn.Options{URL: s.URL}})
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "achieved") && strings.Contains(w, "never sent")
	}
	if !found {
		t.Errorf("no 'achieved … never sent' warning: %q", res.Warnings)
	}
}

// TestFailReasonGrouping: reasons name the cause, not the stream, URL or
// port, so an h2c run's failures group into a few lines.
func TestFailReasonGrouping(t *testing.T) {
	t.Parallel()
	for in, want := range map[error]string{
		errors.New("stream error: stream ID 7; INTERNAL_ERROR; received from peer"):     "stream error: INTERNAL_ERROR; received from peer",
		errors.New("stream error: stream ID 12345; INTERNAL_ERROR; received from peer"): "stream error: INTERNAL_ERROR; received from peer",
		&url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: io.EOF}:                  "closed before response",
		&url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: syscall.ECONNREFUSED}:    "connection refused",
		fmt.Errorf("read: %w", syscall.ECONNRESET):                                      "connection reset",
	} {
		if got := clientio.FailReason(in); got != want {
			t.Errorf("failReason(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestLocalhost: a URL naming localhost reaches a server on 127.0.0.1 in
// every engine (the event loop resolves once and connects itself).
func TestLocalhost(t *testing.T) {
	t.Parallel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s := loadtest.StartRawServer(t, loadtest.Respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, 0))
			ro := e.ro
			ro.URL = strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
			res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 20, EventLoop: e.loop, Rate: e.rate, Timeout: 5 * time.Second}}, ro)
			if res.Failed != 0 {
				t.Errorf("failures %v", res.Failures)
			}
		})
	}
}

// TestServersThatAnswerEarly: a server may answer before it has read the
// request's body (a 413 for a body over its limit, Python's http.server's
// 501 for a POST) and close. The request counts as that response, as in
// curl and wrk, not as the write that failed afterwards ("connection
// reset" for every request before); a response that came before the body
// was written whole ends the connection, whose framing is then lost.
func TestServersThatAnswerEarly(t *testing.T) {
	t.Parallel()
	const resp = "HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
	// More than loopback's socket buffers hold, so that the client is
	// still writing when the server hangs up.
	body := make([]byte, 16<<20)
	for _, sv := range []struct {
		name string
		b    loadtest.Behaviour
	}{
		{"close", loadtest.AnswerEarly(resp+"Connection: close\r\n\r\nlarge", "close")},
		{"linger", loadtest.AnswerEarly(resp+"Connection: close\r\n\r\nlarge", "linger")},
		{"drain and keep-alive", loadtest.AnswerEarly(resp+"\r\nlarge", "drain")},
		{"hold", nil}, // loadtest.HoldAfterAnswer, below
	} {
		for _, e := range engines {
			t.Run(sv.name+"/"+e.name, func(t *testing.T) {
				if sv.name == "close" && e.ro.Client == conn.ClientStd {
					t.Skip("net/http's Transport reports the write error when it comes before the response (golang/go#51109); --client std is net/http as it is")
				}
				t.Parallel()
				b := sv.b
				release := make(chan struct{})
				if b == nil {
					b = loadtest.HoldAfterAnswer(resp+"Connection: close\r\n\r\nlarge", release)
				}
				s := loadtest.StartRawServer(t, b)
				var once sync.Once
				releaseAll := func() { once.Do(func() { close(release) }) }
				t.Cleanup(releaseAll) // before s.Stop's cleanup, which waits for the holders
				ro := e.ro
				ro.URL, ro.Method, ro.Body, ro.ExpectStatus = s.URL, "POST", body, []int{413}
				const n = 20
				// A response is a response when it comes, not when the server
				// lets the rest of the request in. Against "hold" the
				// server keeps every connection until the run is over: the
				// goroutine engine, which waited for its write to end, timed
				// out on every request (a failure counted below).
				res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: n, EventLoop: e.loop, Rate: e.rate / 100, Timeout: 5 * time.Second}}, ro)
				releaseAll()
				s.Stop()
				if res.Failed != 0 || res.Requests != n || s.Served.Load() != n {
					t.Fatalf("%d requests, %d failed %v, statuses %v; server answered %d; want %d, none failed", res.Requests, res.Failed, res.Failures, res.Status, s.Served.Load(), n)
				}
				// The body counts what went out of it, so the framing is the
				// heads' (about 100 bytes a request), never negative. Not so
				// for net/http: its transport writes the body from its own
				// goroutine, on past the response, so what it had taken when
				// the response came is only near what it sent.
				if b := res.Bytes; e.ro.Client != conn.ClientStd && (b.BodyOut > b.WireOut || b.WireOut-b.BodyOut > n*200) {
					t.Errorf("bytes out: wire %d, body %d", b.WireOut, b.BodyOut)
				}
			})
		}
	}
}

// A body larger than the socket takes at once, read whole by the server
// before it answers, keeps the connection: the writer that finished it is
// not taken for one the answer overtook (each engine used to close after
// such a request at most when the server said so).
func TestLargeBodiesKeepTheConnection(t *testing.T) {
	t.Parallel()
	body := make([]byte, 16<<20)
	for _, e := range engines[:2] {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			var conns atomic.Int64
			s := loadtest.StartRawServer(t, func(br *bufio.Reader, c net.Conn, served *atomic.Int64) {
				conns.Add(1)
				for {
					length, err := loadtest.ReadHead(br)
					if err != nil {
						return
					}
					if _, err := io.CopyN(io.Discard, br, length); err != nil {
						return
					}
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
						return
					}
					served.Add(1)
				}
			})
			ro := e.ro
			ro.URL, ro.Method, ro.Body = s.URL, "POST", body
			const n = 20
			res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: n, EventLoop: e.loop, Timeout: 5 * time.Second}}, ro)
			s.Stop()
			if res.Failed != 0 || res.Requests != n {
				t.Fatalf("%d requests, %d failed %v", res.Requests, res.Failed, res.Failures)
			}
			// 2 connections; a rare writer caught just before it returns may
			// cost one more, a close after every request would be 20.
			if c := conns.Load(); c > n/2 {
				t.Errorf("%d connections for %d keep-alive requests on 2 VUs", c, n)
			}
		})
	}
}

// TestResponsesOverTheReadBuffer: a response larger than the event loop's
// 64 KiB read buffer, written at once so that all of it may be in the
// socket before the first read, is read whole — the loop's sockets are
// edge-triggered, so it must read on until the socket is empty rather
// than wait for an event that will not come (it timed out when receive
// read once per event). Counts and bytes are exact.
func TestResponsesOverTheReadBuffer(t *testing.T) {
	t.Parallel()
	for _, size := range []int{64<<10 - 38, 64 << 10, 100 << 10, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", size))
			resp = append(resp, strings.Repeat("x", size-4)...)
			resp = append(resp, "tail"...)
			s := loadtest.StartRawServer(t, func(br *bufio.Reader, c net.Conn, served *atomic.Int64) {
				for {
					if _, err := loadtest.ReadHead(br); err != nil {
						return
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
					served.Add(1)
				}
			})
			const n = 40
			res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: n, EventLoop: true, Timeout: 2 * time.Second}},
				RawOptions{Options: conn.Options{URL: s.URL}, ExpectBodyContains: "tail"})
			s.Stop()
			if res.Requests != n || res.Failed != 0 {
				t.Fatalf("%d requests, %d failed %v", res.Requests, res.Failed, res.Failures)
			}
			if res.Bytes.BodyIn != int64(n*size) {
				t.Errorf("body bytes in %d, want %d", res.Bytes.BodyIn, n*size)
			}
		})
	}
}
