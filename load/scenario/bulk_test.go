package scenario

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/measure"
)

// The client never holds the body: a million records (about 100 MB of
// JSON) go to a server that counts and discards them, chunked and with a
// computed Content-Length, while the client's heap stays small.
func TestPostBulkStreamsWithoutBuffering(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 300_000 // about 31 MB: still three times the heap bound below
	}
	type seen struct {
		n       int64
		length  int64
		chunked bool
		ctype   string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, _ := io.Copy(io.Discard, r.Body)
		got <- seen{k, r.ContentLength, len(r.TransferEncoding) > 0, r.Header.Get("Content-Type")}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	for _, withLength := range []bool{false, true} {
		runtime.GC()
		var peak uint64
		done := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		res, err := PostBulk(context.Background(), BulkOptions{URL: srv.URL, Format: bulk.FormatJSON, Records: n, ContentLength: withLength})
		done <- struct{}{}
		s := <-got
		if err != nil || res.Status != 200 || res.Reply != `{"ok":true}` {
			t.Fatalf("%+v %v", res, err)
		}
		if s.n != res.BodyBytes || s.chunked == withLength || (withLength && s.length != s.n) || s.ctype != "application/json" {
			t.Fatalf("server saw %+v, client sent %d bytes (length %v)", s, res.BodyBytes, withLength)
		}
		if res.WireSent <= res.BodyBytes || res.Checksum != bulk.GeneratedChecksum(n) {
			t.Fatalf("wire %d for body %d; checksum %v", res.WireSent, res.BodyBytes, res.Checksum)
		}
		// 20 MiB: the generator holds one record and a 32 KiB buffer; the
		// httptest server copies through a 32 KiB buffer, so the live heap
		// is a few MiB — but HeapInuse also counts garbage the GC has not
		// reached yet, which lags on a loaded 2-CPU machine (11.3 MiB
		// seen). A buffered body (31-104 MB) still fails this at once.
		t.Logf("Content-Length %v: %s body bytes, peak heap in use %.1f MiB", withLength, strconv.FormatInt(res.BodyBytes, 10), float64(peak)/(1<<20))
		if peak > 20<<20 || res.BodyBytes < 25<<20 {
			t.Fatalf("peak heap %d for a %d-byte body", peak, res.BodyBytes)
		}
	}
}

// slowReturnConn returns from each Write some time after the kernel took
// the bytes: the server has them and may answer first, as happens when the
// transport's writing goroutine is descheduled (seen under -race in CI).
type slowReturnConn struct{ net.Conn }

func (c slowReturnConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	time.Sleep(30 * time.Millisecond)
	return n, err
}

// WireSent counts every byte the server received even when the reply
// overtakes the Write that sent the last of them.
func TestPostBulkCountsWritesStillReturning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := &measure.Listener{Listener: ln}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"ok":true}`))
	}))
	srv.Listener.Close()
	srv.Listener = server
	srv.Start()
	defer srv.Close()
	defer func(d measure.DialFunc) { bulkDial = d }(bulkDial)
	bulkDial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return slowReturnConn{c}, nil
	}
	for _, withLength := range []bool{false, true} {
		res, err := PostBulk(context.Background(), BulkOptions{URL: srv.URL, Format: bulk.FormatJSON, Records: 50, ContentLength: withLength})
		if err != nil || res.Status != 200 {
			t.Fatalf("%+v %v", res, err)
		}
		// The server read the whole request before answering.
		if in := server.Bytes.In.Swap(0); res.WireSent != in {
			t.Errorf("Content-Length %v: client counted %d bytes sent, server read %d", withLength, res.WireSent, in)
		}
	}
}

// A server that refuses the upload as soon as it has read the head and
// hangs up (the kernel resets the connection on the unread body) gets its
// answer counted, as curl does; net/http's Transport reported the write
// error ("broken pipe", "connection reset").
func TestPostBulkAnsweredEarly(t *testing.T) {
	const resp = "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: 13\r\n"
	for _, then := range []string{"close", "linger"} {
		s := loadtest.StartRawServer(t, loadtest.AnswerEarly(resp+"Connection: close\r\n\r\n{\"too\":\"big\"}", then))
		for _, withLength := range []bool{false, true} {
			res, err := PostBulk(context.Background(), BulkOptions{URL: s.URL + "airports", Format: bulk.FormatJSON, Records: 300_000, ContentLength: withLength, Timeout: 10 * time.Second})
			if err != nil || res.Status != 413 || res.Reply != `{"too":"big"}` || !res.AnsweredEarly {
				t.Fatalf("%s, Content-Length %v: %+v %v", then, withLength, res, err)
			}
			if res.WireSent >= 31<<20 || res.WireReceived < int64(len(resp)) {
				t.Errorf("%s, Content-Length %v: sent %d bytes of a 31 MB body, received %d", then, withLength, res.WireSent, res.WireReceived)
			}
		}
	}
}
