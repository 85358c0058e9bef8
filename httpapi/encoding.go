package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wirebench/wirebench/api"
)

// Content codings. klauspost/compress is used for both: its gzip is a
// faster drop-in for compress/gzip, and the standard library has no zstd.
const (
	codingIdentity = ""
	codingGzip     = "gzip"
	codingZstd     = "zstd"
)

var (
	gzipReaders sync.Pool // *gzip.Reader
	gzipWriters = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}
	// zstdPools holds one pool of decoders per body limit (int64 ->
	// *sync.Pool): a decoder knows the limit, so a frame declaring more
	// content (a 2^63-byte frame header) or a larger window than we accept
	// is refused before anything is allocated for it.
	zstdPools sync.Map
	// zstdEncoder is shared (EncodeAll is safe for concurrent use) and
	// made by the first zstd reply: a server never asked for zstd does not
	// keep its tables live.
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		return e
	})
	buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// minZstdWindow is the window every decoder supports whatever the body
// limit: RFC 8878 recommends that decoders accept windows up to 8 MiB,
// which streaming encoders declare even for small bodies.
const minZstdWindow = 8 << 20

func zstdPool(limit int64) *sync.Pool {
	if p, ok := zstdPools.Load(limit); ok {
		return p.(*sync.Pool)
	}
	p, _ := zstdPools.LoadOrStore(limit, &sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderMaxWindow(uint64(max(limit, minZstdWindow))))
		if err != nil {
			panic(fmt.Sprintf("httpapi: zstd decoder for limit %d: %v", limit, err))
		}
		return d
	}})
	return p.(*sync.Pool)
}

func getBuffer() *bytes.Buffer { b := buffers.Get().(*bytes.Buffer); b.Reset(); return b }

// putBuffer returns b to the pool unless it grew past 1 MiB, so one huge
// request does not pin memory forever.
func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		buffers.Put(b)
	}
}

// readBody reads the request body into buf, undoing its Content-Encoding,
// and enforces limit on both the wire size and the decoded size (so a small
// compressed bomb is a 413, not an out-of-memory).
func readBody(r *Request, buf *bytes.Buffer, limit int64) error {
	if r.ContentLength > limit {
		// Refused before reading a byte: with "Expect: 100-continue" the
		// client is never told to send the body (net/http sends 100
		// Continue only on the first read), and without it the body is
		// not read for nothing.
		return fmt.Errorf("%w: Content-Length %d exceeds %d bytes", api.ErrTooLarge, r.ContentLength, limit)
	}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	// The engines' bodies are ReadClosers already: a NopCloser around
	// them would be one more allocation per body (Close is never called).
	rc, ok := r.Body.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(r.Body)
	}
	body := io.Reader(http.MaxBytesReader(nil, rc, limit))
	switch coding := strings.ToLower(strings.TrimSpace(r.ContentEncoding)); coding {
	case codingIdentity, "identity":
		// MaxBytesReader yields at most limit bytes, then its error: the
		// decoded limit below is the wire's, with no LimitReader to
		// allocate.
		if _, err := buf.ReadFrom(body); err != nil {
			return wireError(err, limit)
		}
		return nil
	case codingGzip, "x-gzip":
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(body)
		} else {
			err = zr.Reset(body)
		}
		if err != nil {
			return wireError(err, limit)
		}
		defer gzipReaders.Put(zr)
		body = zr
	case codingZstd:
		pool := zstdPool(limit)
		zr := pool.Get().(*zstd.Decoder)
		defer func() { zr.Reset(nil); pool.Put(zr) }()
		if err := zr.Reset(body); err != nil {
			return wireError(err, limit)
		}
		body = zr
	default:
		return fmt.Errorf("%w: Content-Encoding %q (supported: gzip, zstd)", api.ErrUnsupportedType, coding)
	}
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if err != nil {
		return wireError(err, limit)
	}
	if n > limit {
		return fmt.Errorf("%w: decoded body exceeds %d bytes", api.ErrTooLarge, limit)
	}
	return nil
}

// wireError classifies a failure to read the body: a MaxBytesReader
// overflow, wherever it surfaced, and a zstd frame declaring more than the
// limit are ErrTooLarge; anything else (a broken
// gzip stream, a client gone) is ErrMalformed.
func wireError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("%w: body exceeds %d bytes", api.ErrTooLarge, mbe.Limit)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The server's read timeout (HTTP/1: the connection's deadline;
		// h2c: the stream's) ended a body that was still arriving.
		return fmt.Errorf("%w: body not received within the read timeout: %v", api.ErrTimeout, err)
	}
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		// The frame declares more content or window than the limit.
		return fmt.Errorf("%w: zstd frame: decoded body exceeds %d bytes (%v)", api.ErrTooLarge, limit, err)
	}
	return fmt.Errorf("%w: reading body: %v", api.ErrMalformed, err)
}

// chooseCoding picks a response coding from Accept-Encoding: the highest q
// among gzip and zstd, zstd on a tie (it is cheaper at the same ratio).
func chooseCoding(acceptEncoding string) string {
	switch acceptEncoding {
	case "":
		return codingIdentity
	case codingGzip, codingZstd:
		return acceptEncoding
	}
	if c, ok := codings.load(acceptEncoding); ok {
		return c
	}
	c := parseCodings(acceptEncoding)
	if len(acceptEncoding) <= memoKeyLen {
		codings.store(acceptEncoding, c)
	}
	return c
}

// codings remembers chooseCoding's answers (browsers send one long value).
var codings memo[string, string]

// parseCodings parses an Accept-Encoding value for chooseCoding.
func parseCodings(acceptEncoding string) string {
	best, bestQ := codingIdentity, 0.0
	for part := range strings.SplitSeq(acceptEncoding, ",") {
		c, q := parseRange(part)
		if c != codingGzip && c != codingZstd || q <= 0 {
			continue
		}
		if q > bestQ || (q == bestQ && c == codingZstd) {
			best, bestQ = c, q
		}
	}
	return best
}

// compress appends src encoded with coding to dst.
func compress(dst *bytes.Buffer, src []byte, coding string) error {
	switch coding {
	case codingGzip:
		zw := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(zw)
		zw.Reset(dst)
		if _, err := zw.Write(src); err != nil {
			return err
		}
		return zw.Close()
	case codingZstd:
		dst.Write(zstdEncoder().EncodeAll(src, dst.AvailableBuffer()))
		return nil
	}
	return fmt.Errorf("httpapi: unknown coding %q", coding)
}
