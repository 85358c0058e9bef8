package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Bodies taken from a HAR (Options.Bodies).
const (
	BodiesRequests  = "requests"  // the requests' postData (the default)
	BodiesResponses = "responses" // the responses' content: what an API sends
	BodiesBoth      = "both"
)

// harBodies is what readHARBodies reads of an entry.
type harBodies struct {
	Request struct {
		Method   string `json:"method"`
		URL      string `json:"url"`
		PostData *struct {
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Content *struct {
			Text     string `json:"text"`
			Encoding string `json:"encoding"` // "base64" for binary or compressed captures
		} `json:"content"`
	} `json:"response"`
}

// readHARBodies streams log.entries of a HAR with encoding/json's
// decoder, one entry in memory at a time, and takes the JSON bodies of
// the requests, the responses or both (the replay's HAR reader keeps
// requests only: it sends them).
func readHARBodies(r io.Reader, path string, o *Options, add func(Sample, []byte) error, st *InputStats) error {
	dec := json.NewDecoder(r)
	fail := func(err error) error {
		return fmt.Errorf("%w: %s: HAR at byte %d: %v", ErrInput, path, dec.InputOffset(), err)
	}
	for _, want := range []string{"log", "entries"} {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return fail(fmt.Errorf("want an object holding %q", want))
		}
		for {
			t, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			if t == json.Delim('}') {
				return fail(fmt.Errorf("no %q", want))
			}
			if t == want {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fail(errors.New("log.entries is not an array"))
	}
	for n := 1; dec.More(); n++ {
		var e harBodies
		if err := dec.Decode(&e); err != nil {
			return fail(fmt.Errorf("entry %d: %v", n, err))
		}
		var bodies [][2]string // text, encoding
		if p := e.Request.PostData; p != nil && o.Bodies != BodiesResponses {
			bodies = append(bodies, [2]string{p.Text, p.Encoding})
		}
		if c := e.Response.Content; c != nil && o.Bodies != BodiesRequests {
			bodies = append(bodies, [2]string{c.Text, c.Encoding})
		}
		for _, b := range bodies {
			body := []byte(b[0])
			if b[1] == "base64" {
				d, err := base64.StdEncoding.DecodeString(b[0])
				if err != nil {
					st.Skipped++
					continue
				}
				body = d
			}
			body = bytes.TrimSpace(body)
			if len(body) == 0 || body[0] != '{' && body[0] != '[' {
				st.Skipped++
				continue
			}
			if len(body) > o.MaxSample {
				return fmt.Errorf("%w: %s: entry %d (%s %s): a body of %d bytes, over the limit of %d (--max-sample)",
					ErrInput, path, n, e.Request.Method, cut(e.Request.URL, 60), len(body), o.MaxSample)
			}
			if err := add(Sample{File: path}, body); err != nil {
				return fmt.Errorf("%w: %s: entry %d (%s %s): %v", ErrInput, path, n, e.Request.Method, cut(e.Request.URL, 60), err)
			}
		}
	}
	return nil
}
