package scenario

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/load/h1"
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
	// AnsweredEarly: the server answered before it had read the whole
	// body and stopped reading (the rest could not be sent).
	AnsweredEarly bool `json:"answered_early,omitempty"`
}

// maxBulkReply bounds the reply kept from the server.
const maxBulkReply = 64 << 10

// PostBulk streams one generated body to o.URL.
//
// It writes the request and reads the response at once, on a connection
// of its own, as curl does: a server may answer before it has read the
// body (413 over its limit, 400 at a bad record halfway) and hang up, and
// that answer is the upload's outcome (AnsweredEarly), not the write it
// cut short. net/http's Transport reports the write error instead when it
// comes first (golang/go#51109), and its reply may overtake the return of
// the Write that sent the body's end, and so that Write's byte count: the
// writer here is waited for before the counters are read.
func PostBulk(ctx context.Context, o BulkOptions) (BulkResult, error) {
	var res BulkResult
	if bulk.MediaType(o.Format) == "" {
		return res, fmt.Errorf("load: bulk: %w: %q", bulk.ErrFormat, o.Format)
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return res, fmt.Errorf("load: bulk: URL %q: want http://host:port/path or https://", o.URL)
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
	conn, err := bulkConnect(ctx, u, &wire)
	if err != nil {
		return res, fmt.Errorf("load: bulk: %w", err)
	}
	defer conn.Close()
	defer context.AfterFunc(ctx, func() { conn.Close() })() // ctx ends the upload

	start := time.Now()
	var body countWriter // the writer's; read after sent
	sent := make(chan error, 1)
	go func() {
		var err error
		res.Checksum, err = writeBulk(conn, u, o.Format, size, o.Records, &body)
		sent <- err
	}()
	var resp h1.Response
	reply, rerr := h1.ParseResponse(bufio.NewReader(conn), &resp, nil, false, false)
	res.Duration = time.Since(start)
	conn.Close() // stops the writer if the server answered before the body's end
	werr := <-sent
	res.BodyBytes = body.n
	res.WireSent, res.WireReceived = wire.Out.Load(), wire.In.Load()
	switch {
	case rerr != nil && ctx.Err() != nil:
		return res, fmt.Errorf("load: bulk: %w", ctx.Err())
	case rerr != nil && werr != nil:
		return res, fmt.Errorf("load: bulk: sending the body: %w (then reading the reply: %v)", werr, rerr)
	case rerr != nil:
		return res, fmt.Errorf("load: bulk: reading the reply: %w", rerr)
	}
	res.Status, res.AnsweredEarly = resp.Status, werr != nil
	res.Reply = string(bytes.TrimSpace(reply[:min(len(reply), maxBulkReply)]))
	return res, nil
}

// bulkConnect dials u's host (TLS for https), counting into wire.
func bulkConnect(ctx context.Context, u *url.URL, wire *measure.Bytes) (net.Conn, error) {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	conn, err := measure.CountingDialer(bulkDial, wire)(ctx, "tcp", addr)
	if err != nil || u.Scheme != "https" {
		return conn, err
	}
	// TLS runs over the counting connection: its records count as framing.
	tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}})
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// writeBulk writes the request: its head, then the records as they are
// generated, with Content-Length size, or chunked when size < 0. body
// counts the body bytes generated.
func writeBulk(w io.Writer, u *url.URL, format string, size int64, records int, body *countWriter) (bulk.Checksum, error) {
	// The generator writes 32 KiB at a time; with a chunk's framing that
	// fits the buffer, so each goes out in about one write(2).
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: wirebench\r\nContent-Type: %s\r\nConnection: close\r\n",
		u.RequestURI(), u.Host, bulk.MediaType(format))
	var out io.Writer = bw
	if size >= 0 {
		fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", size)
	} else {
		bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		out = chunkWriter{bw}
	}
	sum, err := bulk.Generate(io.MultiWriter(out, body), format, records)
	if err != nil {
		return sum, err
	}
	if size < 0 {
		bw.WriteString("0\r\n\r\n")
	}
	return sum, bw.Flush()
}

// chunkWriter frames each Write as one chunk.
type chunkWriter struct{ w *bufio.Writer }

func (c chunkWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil // a chunk of length 0 would end the body
	}
	fmt.Fprintf(c.w, "%x\r\n", len(p))
	c.w.Write(p)
	if _, err := c.w.WriteString("\r\n"); err != nil {
		return 0, err
	}
	return len(p), nil
}

// bulkDial is PostBulk's dialer; a test replaces it to slow down Writes.
var bulkDial measure.DialFunc = (&net.Dialer{}).DialContext

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
