package replay

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// harReader streams a HAR 1.2 document ({"log": {"entries": [...]}})
// with jsonScan: one entry in memory at a time, and at most MaxEntry
// bytes of it, so a 1 GB export is read in the memory of its largest
// entry and an entry past the bound is skipped as it streams by (never
// held whole), counted. An entry that does not decode as a request (a
// bad URL, method or time) is counted and skipped; JSON that breaks ends
// the read there, counted, with the byte offset.
type harReader struct {
	sc    jsonScan
	bad   reqlog.Malformed
	state int // 0 before entries, 1 in entries, 2 done
	n     int64
	buf   []byte
	max   int // 0: MaxEntry
}

// MaxEntry bounds one HAR entry, as reqlog.MaxLine bounds a line of the
// other formats.
const MaxEntry = reqlog.MaxLine

func newHARReader(r *bufio.Reader) *harReader { return &harReader{sc: jsonScan{br: r}} }

func (h *harReader) Malformed() *reqlog.Malformed { return &h.bad }

type harEntry struct {
	Started string `json:"startedDateTime"`
	Request struct {
		Method  string `json:"method"`
		URL     string `json:"url"`
		Headers []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
		PostData *struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"` // "base64" (not HAR 1.2, but exported by some tools)
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status int `json:"status"`
	} `json:"response"`
}

func (h *harReader) Next() (reqlog.Request, error) {
	if h.state == 0 {
		if err := h.seekEntries(); err != nil {
			h.state = 2
			return reqlog.Request{}, err
		}
		h.state = 1
	}
	limit := h.max
	if limit <= 0 {
		limit = MaxEntry
	}
	for h.state == 1 {
		c, err := h.sc.peek()
		if err == nil && c == ']' {
			h.state = 2
			break
		}
		if err == nil && h.n > 0 {
			err = h.sc.expect(',')
		}
		h.n++
		over := false
		if err == nil {
			h.buf = h.buf[:0]
			over, err = h.sc.value(&h.buf, limit)
		}
		if err != nil {
			h.bad.Add(h.n, fmt.Sprintf("HAR breaks at byte %d (%v): the rest is not read", h.sc.off, err))
			h.state = 2
			break
		}
		if over {
			h.bad.Add(h.n, fmt.Sprintf("entry longer than %d bytes: skipped", limit))
			continue
		}
		var e harEntry
		if err := json.Unmarshal(h.buf, &e); err != nil {
			h.bad.Add(h.n, "entry: "+shorten([]byte(err.Error())))
			continue
		}
		req, why := e.request()
		if why != "" {
			h.bad.Add(h.n, why)
			continue
		}
		return req, nil
	}
	h.buf = nil
	return reqlog.Request{}, io.EOF
}

// seekEntries reads up to the '[' of log.entries, skipping every other
// member without keeping it.
func (h *harReader) seekEntries() error {
	for _, want := range []string{"log", "entries"} {
		if err := h.sc.expect('{'); err != nil {
			return fmt.Errorf("%w: HAR: %v", ErrReplay, err)
		}
		for first := true; ; first = false {
			c, err := h.sc.peek()
			if err == nil && c == '}' {
				return fmt.Errorf("%w: HAR: no %q", ErrReplay, want)
			}
			if err == nil && !first {
				err = h.sc.expect(',')
			}
			var key []byte
			if err == nil {
				var over bool
				if over, err = h.sc.value(&key, 4096); over {
					err = fmt.Errorf("a member name longer than 4096 bytes")
				}
			}
			var name string
			if err == nil {
				if json.Unmarshal(key, &name) != nil {
					err = fmt.Errorf("want a member name at byte %d", h.sc.off)
				}
			}
			if err == nil {
				err = h.sc.expect(':')
			}
			if err != nil {
				return fmt.Errorf("%w: HAR: no %q (%v)", ErrReplay, want, err)
			}
			if name == want {
				break
			}
			if _, err := h.sc.value(nil, 0); err != nil {
				return fmt.Errorf("%w: HAR: %v", ErrReplay, err)
			}
		}
	}
	if err := h.sc.expect('['); err != nil {
		return fmt.Errorf("%w: HAR: %v", ErrReplay, err)
	}
	return nil
}

// request checks an entry and makes it a request.
func (e *harEntry) request() (reqlog.Request, string) {
	var req reqlog.Request
	t, err := time.Parse(time.RFC3339Nano, e.Started)
	at, inRange := unixNano(t)
	if err != nil || !inRange {
		return req, fmt.Sprintf("bad startedDateTime %q", shorten([]byte(e.Started)))
	}
	r := &e.Request
	if !reqlog.ValidMethod(r.Method) {
		return req, fmt.Sprintf("bad method %q", shorten([]byte(r.Method)))
	}
	if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") || !reqlog.ValidTarget(r.URL) {
		return req, fmt.Sprintf("bad url %q", shorten([]byte(r.URL)))
	}
	req.At, req.Method, req.Target, req.Status = at, r.Method, r.URL, e.Response.Status
	for _, hd := range r.Headers {
		if strings.HasPrefix(hd.Name, ":") { // HTTP/2 pseudo-headers in browser exports
			continue
		}
		if !reqlog.ValidHeader(hd.Name, hd.Value) {
			return req, fmt.Sprintf("bad header %q", shorten([]byte(hd.Name)))
		}
		req.Header = append(req.Header, [2]string{hd.Name, hd.Value})
	}
	if p := r.PostData; p != nil && p.Text != "" {
		req.Body = []byte(p.Text)
		if p.Encoding == "base64" {
			if req.Body, err = base64.StdEncoding.DecodeString(p.Text); err != nil {
				return req, "postData: bad base64"
			}
		}
	}
	if req.Status < 0 || req.Status > 999 {
		req.Status = 0 // HAR uses 0 and -1 for "no response"
	}
	return req, ""
}
