package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/server"
)

// TestResetRepliesCountForTheirSource: a client that asks for a large list
// and drops its reply once the headers are in — an HTTP/3 or h2 stream
// reset, an HTTP/1.1 connection closed — had each one encoded for
// nothing, back to back: released at once, a dropped reply cost its
// source's share nothing (10 HTTP/3 connections × 100 such GETs of a 12
// MB list: ~100 encodings in 6 s, another client's p99 at 4-7× its quiet
// one). Now a dropped reply's unread bytes count against its source's
// share for a while, so after a share's worth the source's next list
// waits, before its encoding, and is shed as gone when its client goes;
// every transport alike. A client that reads its lists, more than the
// share's worth one after another, drops none and never waits.
func TestResetRepliesCountForTheirSource(t *testing.T) {
	// ~3.5 MiB of JSON a list, counted ~7 s once dropped unread; a
	// source's share 4 MiB: one such list, a second only while the
	// first is read.
	const users, budget, reads, most = 30_000, 32 << 20, 2, 24
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	// Small receive buffers, as h3's flow-control window is (512 KiB):
	// with the defaults a list of this size fits in the sockets' buffers
	// and h2's 4 MiB stream window, and is written whole before the
	// client drops it — written, as far as the server can tell.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10) })
	}}
	for _, tc := range []struct {
		name   string
		client func(*server.Server) (*http.Client, string)
	}{
		{"http1", func(srv *server.Server) (*http.Client, string) {
			return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}, "http://" + srv.HTTPAddr()
		}},
		{"h2c", func(srv *server.Server) (*http.Client, string) {
			return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, Protocols: h2c,
				HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 1 << 20}}}, "http://" + srv.HTTPAddr()
		}},
		{"h3", func(srv *server.Server) (*http.Client, string) {
			return h3Client(t, srv), "https://" + srv.H3Addr()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startH3(t, server.Options{SeedUsers: users, HTTP: httpapi.Options{MaxReplyBytes: budget}})
			c, base := tc.client(srv)
			defer c.CloseIdleConnections()
			// A reader: more than its share's worth of lists (and of its
			// connection's, 1 MiB), none dropped.
			// Identity: the clients would ask for gzip, a list ~20 times
			// smaller.
			get := func(c *http.Client, ctx context.Context) (*http.Response, error) {
				req, _ := http.NewRequestWithContext(ctx, "GET", base+"/users", nil)
				req.Header.Set("Accept-Encoding", "identity")
				return c.Do(req)
			}
			for i := range reads {
				resp, err := get(c, context.Background())
				if err != nil {
					t.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || n < 3<<20 || resp.ProtoMajor != map[string]int{"http1": 1, "h2c": 2, "h3": 3}[tc.name] {
					t.Fatalf("list %d read: %s %d, %d bytes, %v", i, resp.Proto, resp.StatusCode, n, err)
				}
			}
			if d, w := h3Metric(t, srv, "wirebench_http_replies_dropped_unread_total"), h3Metric(t, srv, "wirebench_http_replies_waited_source_total"); d != 0 || w != 0 {
				t.Fatalf("a client reading its %d lists: %d dropped unread, %d waited for its source's share; want 0, 0", reads, d, w)
			}
			// reset GETs the list on c and drops it once its headers are
			// in, or reports that it waited for the source's share, its
			// client then gone.
			reset := func(c *http.Client) (status int, waited bool) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan int, 1)
				go func() {
					resp, err := get(c, ctx)
					if err != nil {
						done <- -1
						return
					}
					resp.Body.Close() // unread: the stream reset, the HTTP/1.1 connection closed
					done <- resp.StatusCode
				}()
				for deadline := time.Now().Add(hang); ; {
					select {
					case status = <-done:
						// The reply's write ends (a reset, a closed
						// connection) before the next request: the two
						// are on different streams or connections.
						waitMetrics(t, srv, -1, "the dropped reply released", func() bool {
							return h3Metric(t, srv, "wirebench_http_reply_bytes_held") == 0
						})
						return status, false
					case <-time.After(20 * time.Millisecond):
						if h3Metric(t, srv, "wirebench_http_replies_waiting_source") == 1 {
							cancel()
							if s := <-done; s != -1 {
								t.Errorf("the waiting request, its client gone: status %d, want none", s)
							}
							waitMetrics(t, srv, -1, "the waiter shed once its client went", func() bool {
								return h3Metric(t, srv, "wirebench_http_replies_waiting_source") == 0
							})
							return 0, true
						}
					}
					if time.Now().After(deadline) {
						t.Fatalf("neither headers nor a wait for the source's share after %v", hang)
					}
				}
			}
			// Resets, each list dropped once its headers are in, until one
			// waits.
			served := 0
			for ; served < most; served++ {
				status, waited := reset(c)
				if waited {
					break
				}
				if status != 200 {
					t.Fatalf("reset %d: status %d", served, status)
				}
			}
			if served == most {
				t.Fatalf("%d lists encoded, each dropped unread, and none waited for its source's share (%d counted dropped unread)", most, h3Metric(t, srv, "wirebench_http_replies_dropped_unread_total"))
			}
			// Over TCP a reply may still be written whole into the
			// sockets' buffers before the client closes: written, as far
			// as the server can tell.
			if d := h3Metric(t, srv, "wirebench_http_replies_dropped_unread_total"); d < 1 || d > int64(served) || tc.name == "h3" && d != int64(served) {
				t.Errorf("%d replies counted dropped unread of %d reset", d, served)
			}
			// New connections, the old ones closed: the source's dropped
			// replies still count.
			if cl, ok := c.Transport.(io.Closer); ok {
				cl.Close()
			} else {
				c.CloseIdleConnections()
			}
			waitMetrics(t, srv, -1, "the client's HTTP/3 connections closed", func() bool {
				return h3Metric(t, srv, "wirebench_h3_open_connections") == 0
			})
			c, _ = tc.client(srv)
			defer c.CloseIdleConnections()
			if status, waited := reset(c); !waited {
				t.Errorf("a list on a new connection after %d dropped: status %d, want a wait for the source's share", served, status)
			}
			// A request is counted once its handler has returned, which
			// may be after its client saw it end: wait for the count (and
			// fail at once past it).
			want := reads + served + 2
			waitMetrics(t, srv, want, fmt.Sprintf("%d read, %d reset and two shed", reads, served), func() bool {
				return countRequests(t, srv, "/users") == want
			})
		})
	}
}
