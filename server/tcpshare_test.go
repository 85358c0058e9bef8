package server_test

import (
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/server"
)

// neverReadH2 opens an h2c connection whose streams have a zero
// flow-control window and sends streams GETs of path on it: the server
// can write none of their bodies. Its frames are read and dropped (the
// server's SETTINGS acknowledged) until the test closes it.
func neverReadH2(t *testing.T, srv *server.Server, streams int, path string) *h2conn {
	t.Helper()
	h := dialH2(t, srv.HTTPAddr(), http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	go func() {
		for {
			f, err := h.fr.ReadFrame()
			if err != nil {
				return // closed by the test
			}
			if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
				h.wmu.Lock()
				h.fr.WriteSettingsAck()
				h.wmu.Unlock()
			}
		}
	}()
	h.wmu.Lock()
	defer h.wmu.Unlock()
	for i := range streams {
		h.request(uint32(2*i+1), "GET", path, true)
	}
	return h
}

// waitMetrics polls until ok holds, failing after hang or, sooner, when
// more than handled requests of /users were handled (the lists that
// should have waited were encoded instead; handled < 0: not checked,
// waiters shed once their client went count too).
func waitMetrics(t *testing.T, srv *server.Server, handled int, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(hang); !ok(); time.Sleep(20 * time.Millisecond) {
		if n := countRequests(t, srv, "/users"); handled >= 0 && n > handled {
			t.Fatalf("%s: %d lists encoded, want %d", what, n, handled)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, hang)
		}
	}
}

// TestNeverReadH2Streams: an h2 connection's never-read GETs of a large
// list cost the server one encoding, as an HTTP/3 connection's do
// (TestH3NeverReadOneConnection): the others wait, before their
// encoding, for the first to be written, within a budget that would hold
// them all. Before the connection's share applied to h2, every one was
// encoded and held (here 8, up to the whole budget).
func TestNeverReadH2Streams(t *testing.T) {
	const users, streams, budget = 60_000, 8, 256 << 20 // ~7 MiB of JSON each; a connection's share 8 MiB: one
	srv := startAbuse(t, users, server.Timeouts{Write: hang}, httpapi.Options{MaxReplyBytes: budget})
	h := neverReadH2(t, srv, streams, "/users")
	waitMetrics(t, srv, 1, "one list held, the others waiting for their connection's share", func() bool {
		return h3Metric(t, srv, "wirebench_http_replies_waiting_connection") == streams-1 && h3Metric(t, srv, "wirebench_http_reply_bytes_held") > 0
	})
	if held := h3Metric(t, srv, "wirebench_http_reply_bytes_held"); held < 6<<20 || held > 14<<20 {
		t.Errorf("wirebench_http_reply_bytes_held %d while one connection's %d never-read lists wait, want one list (~7 MiB, in a buffer of up to twice that)", held, streams)
	}
	h.c.Close()
	waitMetrics(t, srv, -1, "the share back and no request waiting after the client went", func() bool {
		return h3Metric(t, srv, "wirebench_http_reply_bytes_held") == 0 && h3Metric(t, srv, "wirebench_http_replies_waiting_connection") == 0
	})
	if n := h3Metric(t, srv, "wirebench_http_replies_waited_connection_total"); n != streams-1 {
		t.Errorf("%d requests waited for their connection's share, want %d", n, streams-1)
	}
}

// TestNeverReadH2Connections: one source's never-read GETs of a large
// list over many h2 connections, one stream each, hold its share of the
// budget (1/8), as over HTTP/3 (TestH3NeverReadManyConnections): its
// first 4 lists (28 MiB; a fifth would pass the 32 MiB share), left
// unread, make its later ones wait before their encoding.
func TestNeverReadH2Connections(t *testing.T) {
	const users, first, later, budget = 60_000, 4, 6, 256 << 20 // 7.0 MiB of JSON each; a source's share 32 MiB
	srv := startAbuse(t, users, server.Timeouts{Write: hang}, httpapi.Options{MaxReplyBytes: budget})
	var conns []*h2conn
	for range first {
		conns = append(conns, neverReadH2(t, srv, 1, "/users"))
	}
	waitMetrics(t, srv, first, "the first lists encoded", func() bool { return countRequests(t, srv, "/users") == first })
	time.Sleep(time.Second) // unread long enough to count (a quarter of a second)
	for range later {
		conns = append(conns, neverReadH2(t, srv, 1, "/users"))
	}
	waitMetrics(t, srv, first, "the later lists waiting for their source's unread ones", func() bool {
		return h3Metric(t, srv, "wirebench_http_replies_waiting_source") == later
	})
	for _, h := range conns {
		h.c.Close()
	}
	waitMetrics(t, srv, -1, "the budget back and no request waiting after the client went", func() bool {
		return h3Metric(t, srv, "wirebench_http_reply_bytes_held") == 0 && h3Metric(t, srv, "wirebench_http_replies_waiting_source") == 0
	})
	if n := h3Metric(t, srv, "wirebench_http_replies_waited_source_total"); n != later {
		t.Errorf("%d requests waited for their source's share, want %d", n, later)
	}
}

// TestNeverReadH2AndH3OneShare: a source's never-read GETs of a large
// list over h2 and HTTP/3 at once hold one share of the budget (1/8), not
// one per transport: its first 4 lists over h2 (28 MiB of its 32 MiB
// share), left unread, make its later ones over HTTP/3 wait before their
// encoding. With a share per transport the HTTP/3 lists were all encoded
// (4 more, 28 MiB more: a host using both doubled its share).
func TestNeverReadH2AndH3OneShare(t *testing.T) {
	const users, first, later, budget = 60_000, 4, 4, 256 << 20 // 7.0 MiB of JSON each; a source's share 32 MiB
	srv := startH3(t, server.Options{SeedUsers: users, Timeouts: server.Timeouts{Write: hang}, HTTP: httpapi.Options{MaxReplyBytes: budget}})
	var conns []*h2conn
	for range first {
		conns = append(conns, neverReadH2(t, srv, 1, "/users"))
	}
	waitMetrics(t, srv, first, "the first lists encoded", func() bool { return countRequests(t, srv, "/users") == first })
	time.Sleep(time.Second) // unread long enough to count (a quarter of a second)
	stop := neverRead(t, srv, later, 1, "/users")
	defer stop()
	waitMetrics(t, srv, first, "the HTTP/3 lists waiting for the source's unread h2 ones", func() bool {
		return h3Metric(t, srv, "wirebench_http_replies_waiting_source") == later
	})
	for _, h := range conns {
		h.c.Close()
	}
	if got := stop(); got[200] != 0 {
		t.Errorf("HTTP/3 statuses %v, want none served while the source's share was held", got)
	}
	waitMetrics(t, srv, -1, "the budget back and no request waiting after the client went", func() bool {
		return h3Metric(t, srv, "wirebench_http_reply_bytes_held") == 0 && h3Metric(t, srv, "wirebench_http_replies_waiting_source") == 0
	})
	if n := h3Metric(t, srv, "wirebench_http_replies_waited_source_total"); n != later {
		t.Errorf("%d requests waited for their source's share, want %d", n, later)
	}
}
