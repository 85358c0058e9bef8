package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/measure"
)

// BulkOptions describe one bulk upload: Records generated airports
// (bulk.Generated) in Format, streamed to URL (POST, e.g.
// http://127.0.0.1:8080/airports) as they are generated, so the client
// never holds the body either. With ContentLength the body's size is
// computed first by generating it once into a counter (CPU, no memory) and
// sent with Content-Length; otherwise it is chunked.
type BulkOptions struct {
	URL           string
	Format        string
	Records       int
	ContentLength bool
	// Timeout bounds the whole upload; 0 means no bound beyond ctx.
	Timeout time.Duration
}

// BulkResult is one upload's outcome. A failed upload with a reply is not
// an error: Status and Reply say what the server answered.
type BulkResult struct {
	Status   int           `json:"status"`
	Reply    string        `json:"reply"` // the first 64 KiB
	Duration time.Duration `json:"duration_ns"`
	// BodyBytes is the body as generated; WireSent and WireReceived
	// count the socket, headers and chunk framing included.
	BodyBytes    int64         `json:"body_bytes"`
	WireSent     int64         `json:"wire_sent_bytes"`
	WireReceived int64         `json:"wire_received_bytes"`
	Checksum     bulk.Checksum `json:"checksum"` // of the records sent
}

// maxBulkReply bounds the reply kept from the server.
const maxBulkReply = 64 << 10

// PostBulk streams one generated body to o.URL.
func PostBulk(ctx context.Context, o BulkOptions) (BulkResult, error) {
	var res BulkResult
	if bulk.MediaType(o.Format) == "" {
		return res, fmt.Errorf("load: bulk: %w: %q", bulk.ErrFormat, o.Format)
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	size := int64(-1)
	if o.ContentLength {
		var c countWriter
		if _, err := bulk.Generate(&c, o.Format, o.Records); err != nil {
			return res, fmt.Errorf("load: bulk: %w", err)
		}
		size = c.n
	}
	var wire measure.Bytes
	var conns settledConns
	tr := &http.Transport{
		DialContext:       conns.dialer(measure.CountingDialer(bulkDial, &wire)),
		DisableKeepAlives: true,
		// The body goes out as it is generated, in the generator's 32 KiB
		// writes; no write buffer beyond the kernel's.
		WriteBufferSize: 32 << 10,
	}
	defer tr.CloseIdleConnections()
	pr, pw := io.Pipe()
	body := &countReader{r: pr}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL, body)
	if err != nil {
		return res, fmt.Errorf("load: bulk: %w", err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", bulk.MediaType(o.Format))
	genDone := make(chan error, 1)
	go func() {
		sum, err := bulk.Generate(pw, o.Format, o.Records)
		res.Checksum = sum
		pw.CloseWithError(err)
		genDone <- err
	}()
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		pr.CloseWithError(err)
		<-genDone
		return res, fmt.Errorf("load: bulk: %w", err)
	}
	reply, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBulkReply))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	res.Duration = time.Since(start)
	// The server may answer (400, 413) before reading the whole body; the
	// generator then stops at the closed pipe.
	pr.CloseWithError(io.ErrClosedPipe)
	<-genDone
	conns.settle()
	res.Status, res.Reply = resp.StatusCode, string(bytes.TrimSpace(reply))
	res.BodyBytes = body.n.Load()
	res.WireSent, res.WireReceived = wire.Out.Load(), wire.In.Load()
	if rerr != nil {
		return res, fmt.Errorf("load: bulk: reading the reply: %w", rerr)
	}
	return res, nil
}

// settledConns lets PostBulk read the wire counters only when no write is
// in flight. The transport writes the body from its own goroutine; the
// server can read the last chunk, answer, and the reply reach us before
// that goroutine returns from the Write that sent the chunk and counts it
// (seen under the race detector: 12 KB missing from WireSent). settle
// closes the connections, which ends any blocked Write, and waits for the
// Writes already under way to return.
type settledConns struct {
	mu    sync.Mutex
	conns []*settledConn
}

type settledConn struct {
	net.Conn
	writing sync.RWMutex // read-held by every Write
}

func (c *settledConn) Write(p []byte) (int, error) {
	c.writing.RLock()
	defer c.writing.RUnlock()
	return c.Conn.Write(p)
}

func (s *settledConns) dialer(dial measure.DialFunc) measure.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc := &settledConn{Conn: c}
		s.mu.Lock()
		s.conns = append(s.conns, sc)
		s.mu.Unlock()
		return sc, nil
	}
}

func (s *settledConns) settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Conn.Close() // the transport may have closed it already
		c.writing.Lock()
		c.writing.Unlock() //lint:ignore SA2001 waiting for the Writes under way is the point
	}
}

// bulkDial is PostBulk's dialer; a test replaces it to slow down Writes.
var bulkDial measure.DialFunc = (&net.Dialer{}).DialContext

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// countReader counts the body bytes the transport read. The transport
// may still be reading (a last Read that fails on the closed pipe) when
// RoundTrip has returned and PostBulk reads the count, so it is atomic.
type countReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
