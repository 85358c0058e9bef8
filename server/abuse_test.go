package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/internal/race"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/server"
)

// The timeouts under test are small so the suite stays fast. What each
// test asserts always is the outcome (a status, a reset, a count, the
// heap coming back); how soon it came (the timeout plus slack) is a
// wall-clock measurement, checked with WIREBENCH_TIMING=1 only
// (testkit.Timing). hang bounds every wait against a server that never
// answers: a guard, far above any busy box's delay.
const (
	tick  = 300 * time.Millisecond // --read-timeout, --write-timeout
	slack = 5 * time.Second
	hang  = time.Minute
)

func startAbuse(t *testing.T, users int, to server.Timeouts, h ...httpapi.Options) *server.Server {
	t.Helper()
	opts := server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, SeedUsers: users, Timeouts: to}
	if len(h) > 0 {
		opts.HTTP = h[0]
	}
	srv, err := server.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// heapAfterGC is the live heap, for "memory comes back" checks.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// checkHeap fails when the live heap stays more than 64 MiB above base
// after the abuse ended; each held reply in these tests is ~7 MiB and
// there are several, so leaked replies show, noise does not.
func checkHeap(t *testing.T, base uint64) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		h := heapAfterGC()
		if h < base+64<<20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("live heap %d MiB, %d MiB before the abuse", h>>20, base>>20)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSlowBody: a body trickled one byte every 50 ms (issue 10: one byte
// every 5 s held a connection forever) ends at the read timeout with 408.
func TestSlowBody(t *testing.T) {
	srv := startAbuse(t, 1, server.Timeouts{Read: tick})
	conn := dialTCP(t, srv.HTTPAddr())
	start := time.Now()
	fmt.Fprintf(conn, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	done := make(chan struct{})
	go func() { // the trickle: at most 1000 bytes × 50 ms = 50 s without the timeout
		defer close(done)
		for range 1000 {
			time.Sleep(50 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"timeout"`) {
		t.Errorf("status %d, body %q; want 408", resp.StatusCode, body)
	}
	if d := time.Since(start); testkit.Timing() && d > tick+slack {
		t.Errorf("answered after %v, read timeout %v", d, tick)
	}
	conn.Close()
	<-done
}

// TestSlowReaders: clients that request a large list and never read it
// held 3.9 GB (100 clients, 100k users): each handler stayed blocked in
// Write with its reply. With a write timeout the writes fail, every
// handler returns (the request counter shows it) and the replies' memory
// is freed, while the clients still have not read.
func TestSlowReaders(t *testing.T) {
	const users, clients = 60_000, 4 // ~7 MiB of JSON each: more than the socket buffers hold
	srv := startAbuse(t, users, server.Timeouts{Write: tick})
	base := heapAfterGC()
	for range clients {
		c, err := net.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		tc := c.(*net.TCPConn)
		tc.SetReadBuffer(4096) // a small window: the server's writes block
		defer tc.Close()
		fmt.Fprintf(tc, "GET /users HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	start := time.Now()
	for served := 0; served < clients; served = countRequests(t, srv, "/users") {
		if time.Since(start) > hang {
			t.Fatalf("after %v only %d of %d handlers returned: the rest are blocked writing to clients that do not read", time.Since(start), served, clients)
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkHeap(t, base)
}

// TestReplyBudget: while replies that clients do not read hold the
// --max-reply-memory budget, further replies are shed at once with 503 and
// Retry-After instead of piling up; once the held reply's write fails the
// budget is back and a list is served again. The write fails because the
// client hangs up, not at a short write timeout: a 1 s one ran out on a
// busy box before the other clients' requests came, and they were served.
func TestReplyBudget(t *testing.T) {
	const users, clients = 60_000, 4 // ~7 MiB of JSON each; the budget holds one
	srv := startAbuse(t, users, server.Timeouts{Write: hang}, httpapi.Options{MaxReplyBytes: 10 << 20})
	status := make(chan int, clients)
	var conns []*net.TCPConn
	for range clients {
		c, err := net.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		tc := c.(*net.TCPConn)
		tc.SetReadBuffer(4096)
		defer tc.Close()
		conns = append(conns, tc)
		fmt.Fprintf(tc, "GET /users HTTP/1.1\r\nHost: x\r\n\r\n")
		go func() { // read the status line only, then stop reading
			tc.SetReadDeadline(time.Now().Add(hang))
			var proto string
			var code int
			fmt.Fscan(bufio.NewReaderSize(tc, 64), &proto, &code)
			status <- code
		}()
	}
	got := map[int]int{}
	for range clients {
		got[<-status]++
	}
	if got[200] != 1 || got[503] != clients-1 {
		t.Fatalf("statuses %v, want one 200 and %d 503", got, clients-1)
	}
	// Still held: a reader is shed.
	// (Uncompressed: a gzip reply of the list is small enough to fit.)
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := hc.Get("http://" + srv.HTTPAddr() + "/users")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a second large reply while the first holds the budget: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// The holder hangs up: its write fails, the budget comes back, and a
	// reader is served (503s until the handler has noticed).
	for _, c := range conns {
		c.SetLinger(0)
		c.Close()
	}
	deadline := time.Now().Add(hang)
	for {
		resp, err := hc.Get("http://" + srv.HTTPAddr() + "/users")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && n > 6<<20 {
			break
		}
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || time.Now().After(deadline) {
			t.Fatalf("list after the abuse: %d, %d bytes, Retry-After %q", resp.StatusCode, n, resp.Header.Get("Retry-After"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestManyListsBoundedMemory: 40 clients at once request a large list and
// do not read it. The replies encoded at once are bounded by the CPUs and
// the replies held by --max-reply-memory, so the live heap stays near
// budget + a few encodings, where 40 concurrent encodings (~25 MiB each:
// snapshot, encoder buffer, reply) grew it by 230-290 MiB here (sampled).
func TestManyListsBoundedMemory(t *testing.T) {
	const clients, budget = 40, 16 << 20
	users := 60_000
	if race.Enabled {
		// Encoding runs ~10x slower under the race detector (74 s here with
		// 60,000 users); a tenth of the list still asks for more than the
		// budget at once (40 x ~0.65 MB).
		users = 6_000
	}
	srv := startAbuse(t, users, server.Timeouts{Write: tick}, httpapi.Options{MaxReplyBytes: budget})
	base := heapAfterGC()
	for range clients {
		c, err := net.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		tc := c.(*net.TCPConn)
		tc.SetReadBuffer(4096)
		defer tc.Close()
		fmt.Fprintf(tc, "GET /users HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	var peak uint64
	start := time.Now()
	// Each reply ends at the write timeout, unread: dropped, it counts
	// against the clients' source a while longer, and the later lists
	// wait for it before their encoding (Source) until their clients go.
	for countRequests(t, srv, "/users")+int(h3Metric(t, srv, "wirebench_http_replies_waiting_source")) < clients {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapAlloc)
		if time.Since(start) > hang*race.Slowdown { // 20 encodings one or two at a time, each ending at the write timeout
			t.Fatalf("handlers still running after %v", time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// HeapAlloc counts garbage not yet collected too; 200 MiB leaves room
	// for it and the GC lag (75-100 MiB here with the bounds in place).
	if grown := (peak - min(peak, base)) >> 20; grown > 200 {
		t.Errorf("heap grew by %d MiB during the abuse", grown)
	}
	checkHeap(t, base)
}

// countRequests reads the server's request counter for route from /metrics.
func countRequests(t *testing.T, srv *server.Server, route string) int {
	t.Helper()
	resp, err := http.Get("http://" + srv.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "wirebench_http_requests_total{") && strings.Contains(line, `route="`+route+`"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += int(v)
		}
	}
	return n
}

// h2conn is a raw h2c connection driven frame by frame.
type h2conn struct {
	t  *testing.T
	c  net.Conn
	fr *http2.Framer
	hb bytes.Buffer
	he *hpack.Encoder
	// wmu orders the Framer's writes: frames answers SETTINGS and PINGs
	// while a test's goroutine may be writing DATA (TestSlowBodyH2).
	wmu sync.Mutex
}

// dialH2 opens an h2c connection with prior knowledge and the given
// SETTINGS, and acknowledges the server's.
func dialH2(t *testing.T, addr string, settings ...http2.Setting) *h2conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(hang * race.Slowdown))
	h := &h2conn{t: t, c: c, fr: http2.NewFramer(c, c)}
	h.he = hpack.NewEncoder(&h.hb)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := h.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *h2conn) request(id uint32, method, path string, endStream bool, hdr ...string) {
	h.t.Helper()
	h.hb.Reset()
	fields := append([]string{":method", method, ":scheme", "http", ":authority", "x", ":path", path}, hdr...)
	for i := 0; i+1 < len(fields); i += 2 {
		h.he.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.hb.Bytes(), EndStream: endStream, EndHeaders: true}); err != nil {
		h.t.Fatal(err)
	}
}

// frames reads frames until done returns true, acknowledging SETTINGS and
// answering PINGs; it returns the server's MAX_CONCURRENT_STREAMS.
func (h *h2conn) frames(done func(http2.Frame) bool) (maxStreams uint32) {
	h.t.Helper()
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("reading frames: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok {
					maxStreams = v
				}
				h.wmu.Lock()
				h.fr.WriteSettingsAck()
				h.wmu.Unlock()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				h.wmu.Lock()
				h.fr.WritePing(true, f.Data)
				h.wmu.Unlock()
			}
		}
		if done(f) {
			return maxStreams
		}
	}
}

// TestZeroWindowStreams: one h2c connection with a zero flow-control
// window and 20 streams of a large list held 673 MB. Now the connection
// has at most --h2-max-streams streams, each is reset at the write
// timeout, and the memory comes back.
func TestZeroWindowStreams(t *testing.T) {
	const users, maxStreams = 60_000, 4
	srv := startAbuse(t, users, server.Timeouts{Write: tick, H2MaxStreams: maxStreams})
	base := heapAfterGC()
	h := dialH2(t, srv.HTTPAddr(), http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	start := time.Now()
	const streams = maxStreams + 3
	for i := range streams {
		h.request(uint32(2*i+1), "GET", "/users", true)
	}
	resets, refused, data := 0, 0, 0
	advertised := h.frames(func(f http2.Frame) bool {
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.ErrCode == http2.ErrCodeRefusedStream || f.ErrCode == http2.ErrCodeProtocol {
				refused++
			} else {
				resets++
			}
		case *http2.DataFrame:
			data += len(f.Data())
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v", f.ErrCode)
		}
		return resets+refused == streams
	})
	if advertised != maxStreams {
		t.Errorf("server advertises %d concurrent streams, want %d", advertised, maxStreams)
	}
	if refused != streams-maxStreams || data != 0 {
		t.Errorf("%d streams refused (want %d), %d data bytes sent into a zero window", refused, streams-maxStreams, data)
	}
	if d := time.Since(start); testkit.Timing() && d > tick+slack*race.Slowdown {
		t.Errorf("streams reset after %v, write timeout %v", d, tick)
	}
	checkHeap(t, base)
	// The connection itself still works: a small request with a window.
	// A request queued behind reset streams whose handlers are still
	// encoding (under the race detector they outlast the write timeout) is
	// reset at the write timeout too, so a reset asks again; a dead
	// connection fails the read.
	h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	start = time.Now()
	for id := uint32(101); ; id += 2 {
		h.request(id, "GET", "/healthz", true)
		served := false
		h.frames(func(f http2.Frame) bool {
			switch f := f.(type) {
			case *http2.DataFrame:
				served = f.StreamID == id
				return served
			case *http2.RSTStreamFrame:
				return f.StreamID == id
			}
			return false
		})
		if served {
			break
		}
		if d := time.Since(start); d > hang*race.Slowdown {
			t.Fatalf("/healthz on the connection still reset after %v", d)
		}
		time.Sleep(tick)
	}
}

// TestSlowBodyH2: on h2c the read timeout applies per stream.
func TestSlowBodyH2(t *testing.T) {
	srv := startAbuse(t, 1, server.Timeouts{Read: tick})
	h := dialH2(t, srv.HTTPAddr())
	start := time.Now()
	h.request(1, "POST", "/users", false, "content-type", "application/json", "content-length", "1000")
	stop := make(chan struct{})
	go func() { // one byte per 50 ms: 50 s without the timeout
		for range 1000 {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			h.wmu.Lock()
			err := h.fr.WriteData(1, false, []byte(" "))
			h.wmu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	defer close(stop)
	var status string
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			status = f.Value
		}
	})
	h.frames(func(f http2.Frame) bool {
		switch f := f.(type) {
		case *http2.HeadersFrame:
			dec.Write(f.HeaderBlockFragment())
			return true
		case *http2.RSTStreamFrame:
			status = "RST " + f.ErrCode.String()
			return true
		}
		return false
	})
	if status != "408" {
		t.Errorf("slow h2c body: %q, want 408", status)
	}
	if d := time.Since(start); testkit.Timing() && d > tick+slack {
		t.Errorf("answered after %v, read timeout %v", d, tick)
	}
}

// TestIdleConnection: a keep-alive connection with no next request is
// closed at the idle timeout.
func TestIdleConnection(t *testing.T) {
	srv := startAbuse(t, 1, server.Timeouts{Idle: tick})
	conn := dialTCP(t, srv.HTTPAddr())
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(hang))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
	if d := time.Since(start); testkit.Timing() && (d < tick/2 || d > tick+slack) {
		t.Errorf("closed after %v, idle timeout %v", d, tick)
	}
}

// TestSlowHeaders: headers trickled a byte at a time end at the
// read-header timeout, and endless headers at 64 KiB with 431.
func TestSlowHeaders(t *testing.T) {
	srv := startAbuse(t, 1, server.Timeouts{ReadHeader: tick})
	conn := dialTCP(t, srv.HTTPAddr())
	start := time.Now()
	io.WriteString(conn, "GET /users/1 HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	go func() { // 1000 × 50 ms = 50 s without the timeout
		for range 1000 {
			time.Sleep(50 * time.Millisecond)
			if _, err := conn.Write([]byte("a")); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(hang))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("slow headers: connection still open after %v", time.Since(start))
		}
	}
	if d := time.Since(start); testkit.Timing() && d > tick+slack {
		t.Errorf("closed after %v, read-header timeout %v", d, tick)
	}

	endless, err := net.Dial("tcp", srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer endless.Close()
	endless.SetDeadline(time.Now().Add(hang))
	go func() {
		io.WriteString(endless, "GET /users/1 HTTP/1.1\r\nHost: x\r\n")
		line := []byte("X-Endless: " + strings.Repeat("a", 1000) + "\r\n")
		for range 10_000 { // 10 MB unless the server stops reading
			if _, err := endless.Write(line); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(endless), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("endless headers: %d, want 431", resp.StatusCode)
	}
}

// dialTCP opens a raw connection to addr, closed when the test ends.
func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
