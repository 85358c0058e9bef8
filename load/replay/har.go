package replay

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// harReader streams a HAR 1.2 document ({"log": {"entries": [...]}})
// with json.Decoder's tokens: one entry in memory at a time, so a 1 GB
// export is read in the memory of its largest entry. An entry that does
// not decode as a request (a bad URL, method or time) is counted and
// skipped; JSON that breaks ends the read there, counted, with the byte
// offset.
type harReader struct {
	dec   *json.Decoder
	bad   reqlog.Malformed
	state int // 0 before entries, 1 in entries, 2 done
	n     int64
}

func newHARReader(r io.Reader) *harReader { return &harReader{dec: json.NewDecoder(r)} }

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
	for h.state == 1 {
		if !h.dec.More() {
			h.state = 2
			break
		}
		h.n++
		var raw json.RawMessage
		if err := h.dec.Decode(&raw); err != nil {
			h.bad.Add(h.n, fmt.Sprintf("HAR breaks at byte %d (%v): the rest is not read", h.dec.InputOffset(), err))
			h.state = 2
			break
		}
		var e harEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			h.bad.Add(h.n, "entry: "+err.Error())
			continue
		}
		req, why := e.request()
		if why != "" {
			h.bad.Add(h.n, why)
			continue
		}
		return req, nil
	}
	return reqlog.Request{}, io.EOF
}

// seekEntries reads tokens up to the '[' of log.entries.
func (h *harReader) seekEntries() error {
	if err := h.delim('{'); err != nil {
		return err
	}
	for _, want := range []string{"log", "entries"} {
		for {
			t, err := h.dec.Token()
			if err != nil {
				return fmt.Errorf("%w: HAR: no %q (%v)", ErrReplay, want, err)
			}
			key, ok := t.(string)
			if !ok {
				return fmt.Errorf("%w: HAR: no %q", ErrReplay, want)
			}
			if key == want {
				break
			}
			var skip json.RawMessage
			if err := h.dec.Decode(&skip); err != nil {
				return fmt.Errorf("%w: HAR: %v", ErrReplay, err)
			}
		}
		d := byte('{')
		if want == "entries" {
			d = '['
		}
		if err := h.delim(d); err != nil {
			return err
		}
	}
	return nil
}

func (h *harReader) delim(d byte) error {
	t, err := h.dec.Token()
	if err != nil {
		return fmt.Errorf("%w: HAR: %v", ErrReplay, err)
	}
	if t != json.Delim(d) {
		return fmt.Errorf("%w: HAR: want %q at byte %d, got %v", ErrReplay, d, h.dec.InputOffset(), t)
	}
	return nil
}

// request checks an entry and makes it a request.
func (e *harEntry) request() (reqlog.Request, string) {
	var req reqlog.Request
	t, err := time.Parse(time.RFC3339Nano, e.Started)
	if err != nil {
		return req, fmt.Sprintf("bad startedDateTime %q", shorten([]byte(e.Started)))
	}
	r := &e.Request
	if !reqlog.ValidMethod(r.Method) {
		return req, fmt.Sprintf("bad method %q", shorten([]byte(r.Method)))
	}
	if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") || strings.ContainsAny(r.URL, " \r\n") {
		return req, fmt.Sprintf("bad url %q", shorten([]byte(r.URL)))
	}
	req.At, req.Method, req.Target, req.Status = t.UnixNano(), r.Method, r.URL, e.Response.Status
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
