package httpapi

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Header values shared by every response of the net/http engine. Assigning
// a shared []string to the header map costs no allocation where
// Header.Set allocates one per header per response; net/http clones the
// handler's map before writing it and never modifies a value in place.
var (
	varyValues       = []string{VaryValue}
	retryAfterValues = []string{"1"}
	// codingValues has every coding Response.encode applies.
	codingValues = map[string][]string{codingGzip: {codingGzip}, codingZstd: {codingZstd}}
)

// dates is the Date header of the current second. net/http formats a Date
// for every reply whose handler set none (a clock read and about 1,630
// instructions, 3.4% of the process's per GET by cachegrind, issue 17); like nginx's
// and fasthttp's cached date, this formats it once a second. The value
// is what net/http would write: the reply's second, in http.TimeFormat.
var dates atomic.Pointer[dateValue]

type dateValue struct {
	unix int64
	v    []string
}

// dateHeader returns the Date header value for now, shared (see above).
func dateHeader(now time.Time) []string {
	sec := now.Unix()
	if d := dates.Load(); d != nil && d.unix == sec {
		return d.v
	}
	d := &dateValue{sec, []string{now.UTC().Format(http.TimeFormat)}}
	dates.Store(d)
	return d.v
}

// headerValues holds one shared Content-Type value per media type the core
// answers with, built once in New.
type headerValues map[string][]string

func newHeaderValues(f *formats) headerValues {
	hv := headerValues{textPlain: {textPlain}}
	for _, e := range f.byMedia {
		hv[e.MediaTypes[0]] = []string{e.MediaTypes[0]}
	}
	return hv
}

// chunkingThreshold is net/http's bufferBeforeChunkingSize: a body of at
// most this many bytes, written in one call by a handler that then
// returns, stays in net/http's buffer and gets its Content-Length from
// net/http itself (HTTP/1 and h2 alike, HEAD too), without a header-map
// entry to clone, parse and sort. A longer one would be chunked, so it
// gets an explicit Content-Length.
const chunkingThreshold = 2048

// header returns the first value of an incoming header. net/http stores
// incoming names canonicalized, so an index skips Get's canonicalization.
func header(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// ServeHTTP is the net/http engine's adapter.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request{
		Method: r.Method, Path: r.URL.Path,
		ContentType: header(r.Header, "Content-Type"), Accept: header(r.Header, "Accept"),
		ContentEncoding: header(r.Header, "Content-Encoding"), AcceptEncoding: header(r.Header, "Accept-Encoding"),
		ContentLength: r.ContentLength, Body: r.Body, Context: r.Context(),
	}
	var resp Response
	s.Handle(&req, &resp)
	h := w.Header()
	h["Date"] = dateHeader(time.Now())
	if resp.Vary {
		h["Vary"] = varyValues
	}
	if resp.Allow != "" {
		h.Set("Allow", resp.Allow)
	}
	if resp.RetryAfter != "" {
		if resp.RetryAfter == retryAfterValues[0] {
			h["Retry-After"] = retryAfterValues
		} else {
			h.Set("Retry-After", resp.RetryAfter)
		}
	}
	if resp.Body != nil {
		if v, ok := s.contentTypes[resp.ContentType]; ok {
			h["Content-Type"] = v
		} else {
			h.Set("Content-Type", resp.ContentType)
		}
		if resp.ContentEncoding != "" {
			h["Content-Encoding"] = codingValues[resp.ContentEncoding]
		}
		if len(resp.Body) > chunkingThreshold {
			h["Content-Length"] = []string{strconv.Itoa(len(resp.Body))}
		}
	}
	w.WriteHeader(resp.Status)
	if resp.src != nil {
		writeWatched(w, &resp)
	} else if resp.Body != nil {
		_, _ = w.Write(resp.Body)
	}
	resp.Release()
}

// writeWatched writes a reply its source's share counts (Source) in
// replyChunk pieces, telling the share each one the client took: a reply
// whose writes stop is one the client does not read.
func writeWatched(w http.ResponseWriter, resp *Response) {
	for b := resp.Body; len(b) > 0; {
		n := min(len(b), replyChunk)
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		b = b[n:]
		resp.src.wrote()
	}
}
