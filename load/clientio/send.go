package clientio

import (
	"errors"
	"net/http"
	"time"
)

// NoRedirect is the CheckRedirect of every net/http client load builds: a
// redirect is a response like any other, counted with its status, as
// load's own HTTP/1.1 client, wrk and h2load count it. Following it made
// one request of the same URL two exchanges over h2c, h2 and h3 (and
// net/http's HTTP/1.1) but one over load's HTTP/1.1 client.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// NewClient is one VU's net/http client on rt: each request bounded by
// timeout up to the end of its body (Timed, when timeout > 0), and
// redirects counted, not followed (NoRedirect).
func NewClient(rt http.RoundTripper, timeout time.Duration) *http.Client {
	if timeout > 0 {
		rt = NewTimed(rt, timeout)
	}
	return &http.Client{Transport: rt, CheckRedirect: NoRedirect}
}

var errNoResponse = errors.New("the RoundTripper returned neither a response nor an error")

// Send sends req through c and returns the response, never following a
// redirect (c is load's: NoRedirect). Where c has nothing of its own to
// add (no Timeout: Timed keeps load's; no cookie Jar; no userinfo in the
// URL to turn into Basic auth) it goes straight to c's RoundTripper:
// http.Client.Do copies the header map per request in case of a redirect
// and allocates for the redirect loop, 6 allocations and ~0.4 µs a
// request (go1.26, 2-CPU Xeon VM) that the bare quic-go loop in
// bench/h3bare pays and wrk does not.
func Send(c *http.Client, req *http.Request) (*http.Response, error) {
	if c.Timeout != 0 || c.Jar != nil || req.URL.User != nil {
		return c.Do(req)
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	switch {
	case err != nil:
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, err
	case resp == nil:
		return nil, errNoResponse
	case resp.Body == nil:
		resp.Body = http.NoBody
	}
	return resp, nil
}
