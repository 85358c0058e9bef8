package reqlog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// Middleware records every request next serves into w: its arrival
// time (when the handler is entered, the head read), method, target,
// headers, body (up to MaxBody; next still reads all of it) and status.
// The line is written when next returns.
func Middleware(w *Writer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		at := time.Now().UnixNano()
		rec := Request{At: at, Method: r.Method, Target: r.RequestURI}
		for k, vs := range r.Header {
			for _, v := range vs {
				rec.Header = append(rec.Header, [2]string{k, v})
			}
		}
		var whole *countReader
		if r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
			rec.Body = b
			if len(b) > MaxBody {
				rec.Body, rec.Truncated = b[:MaxBody], true
			}
			// next reads what was read, then the rest, then the error;
			// whole counts it all, for the length of a body cut.
			rest := io.Reader(r.Body)
			if err != nil {
				rest = errReader{err}
			}
			whole = &countReader{r: io.MultiReader(bytes.NewReader(b), rest)}
			r.Body = struct {
				io.Reader
				io.Closer
			}{whole, r.Body}
		}
		sw := &statusWriter{ResponseWriter: rw}
		next.ServeHTTP(sw, r)
		if rec.Truncated {
			rec.BodyLen = max(whole.n, r.ContentLength)
		}
		rec.Status = sw.status
		if rec.Status == 0 {
			rec.Status = http.StatusOK
		}
		_ = w.Write(&rec) // a full disk loses the log, not the response
	})
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// statusWriter captures the status; Unwrap, Flush and Hijack keep
// streams and WebSockets working behind it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := s.ResponseWriter.(http.Hijacker); ok {
		if s.status == 0 {
			s.status = http.StatusSwitchingProtocols
		}
		return h.Hijack()
	}
	return nil, nil, errors.New("reqlog: the response writer cannot hijack")
}
