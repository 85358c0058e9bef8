package streamapi

// gRPC-Web's text mode (application/grpc-web-text), the default of the
// grpc-web JavaScript client and the easy one for curl: the same frames,
// base64 both ways. connect-go speaks binary gRPC-Web only, so this
// translates at the edge: the body is decoded as it is read, the request
// goes to connect-go as application/grpc-web+proto, and each write of the
// reply is encoded as its own padded base64 chunk.

import (
	"io"
	"net/http"
	"strings"

	"github.com/wirebench/wirebench/grpcweb"
)

const mediaGRPCWebText = "application/grpc-web-text"

// isGRPCWebText reports whether a Content-Type is gRPC-Web text
// (application/grpc-web-text or application/grpc-web-text+proto).
func isGRPCWebText(ct string) bool {
	base, _, _ := strings.Cut(ct, ";")
	base = strings.ToLower(strings.TrimSpace(base))
	return base == mediaGRPCWebText || base == mediaGRPCWebText+"+proto"
}

// serveGRPCWebText serves one text-mode call through next (connect-go).
func serveGRPCWebText(next http.Handler, w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.Body = struct {
		io.Reader
		io.Closer
	}{grpcweb.NewTextReader(r.Body), r.Body}
	r2.ContentLength = -1
	r2.Header.Del("Content-Length")
	r2.Header.Set("Content-Type", "application/grpc-web+proto")
	next.ServeHTTP(&textWriter{ResponseWriter: w, enc: grpcweb.NewTextWriter(w)}, r2)
}

// textWriter is the reply side: the Content-Type says text, the body is
// base64. Unwrap lets http.ResponseController reach the connection
// (flushes, deadlines).
type textWriter struct {
	http.ResponseWriter
	enc         *grpcweb.TextWriter
	wroteHeader bool
}

func (t *textWriter) WriteHeader(code int) {
	if !t.wroteHeader {
		t.wroteHeader = true
		h := t.ResponseWriter.Header()
		if ct := h.Get("Content-Type"); strings.HasPrefix(ct, "application/grpc-web") {
			h.Set("Content-Type", mediaGRPCWebText+"+proto")
		}
		h.Del("Content-Length") // the base64 body is longer
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *textWriter) Write(p []byte) (int, error) {
	if !t.wroteHeader {
		t.WriteHeader(http.StatusOK)
	}
	return t.enc.Write(p)
}

func (t *textWriter) Flush() {
	if !t.wroteHeader {
		t.WriteHeader(http.StatusOK)
	}
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (t *textWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
