package conn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrAltSvc marks an Alt-Svc header that cannot be read.
var ErrAltSvc = errors.New("load: Alt-Svc")

// MaxAltSvc is the longest Alt-Svc value read; a longer one is refused
// (a header of alternatives is a few dozen bytes).
const MaxAltSvc = 4096

// AltSvcH3 finds the first HTTP/3 alternative ("h3") in an Alt-Svc value
// (RFC 7838: `h3=":443"; ma=86400, h3-29=":443"`), its host (empty: the
// origin's) and port. ok is false when none is offered or the value is
// "clear"; err reports a value that cannot be read.
func AltSvcH3(v string) (host string, port int, ok bool, err error) {
	if len(v) > MaxAltSvc {
		return "", 0, false, fmt.Errorf("%w: %d bytes, over %d", ErrAltSvc, len(v), MaxAltSvc)
	}
	if strings.TrimSpace(v) == "clear" {
		return "", 0, false, nil
	}
	for _, alt := range splitQuoted(v, ',') {
		first := strings.TrimSpace(splitQuoted(alt, ';')[0])
		if first == "" {
			continue
		}
		proto, auth, found := strings.Cut(first, "=")
		if !found || len(auth) < 2 || auth[0] != '"' || auth[len(auth)-1] != '"' {
			return "", 0, false, fmt.Errorf("%w: %q: want protocol=\"host:port\"", ErrAltSvc, first)
		}
		if strings.TrimSpace(proto) != "h3" {
			continue
		}
		h, p, err := net.SplitHostPort(auth[1 : len(auth)-1])
		if err != nil {
			return "", 0, false, fmt.Errorf("%w: %q: %v", ErrAltSvc, first, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, false, fmt.Errorf("%w: %q: port %q", ErrAltSvc, first, p)
		}
		return h, n, true, nil
	}
	return "", 0, false, nil
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// autoChoice is what --transport auto found.
type autoChoice struct {
	transport string // H3, H2 or HTTP1
	addr      string // where to connect: host:port, UDP for h3
	note      string // why, for the summary
}

// followAltSvc makes the one request over TLS on TCP that --transport auto
// starts with: the run's own method when it is GET or HEAD (with its
// headers), else HEAD, so that the probe changes nothing on the server.
func followAltSvc(u *url.URL, addr string, cfg *tls.Config, method string, header []string, timeout time.Duration) (autoChoice, error) {
	if method != "GET" && method != "HEAD" {
		method = "HEAD"
	}
	tr := &http.Transport{TLSClientConfig: cfg.Clone(), ForceAttemptHTTP2: true, DisableKeepAlives: true,
		DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return autoChoice{}, fmt.Errorf("%w: --transport auto: %v", ErrOptions, err)
	}
	for _, h := range header {
		if k, v, ok := strings.Cut(h, ":"); ok {
			req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		return autoChoice{}, fmt.Errorf("load: --transport auto: the first request, over TLS on TCP: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	over := HTTP1
	if resp.ProtoMajor == 2 {
		over = H2
	}
	alt := resp.Header.Get("Alt-Svc")
	host, port, ok, err := AltSvcH3(alt)
	if err != nil {
		return autoChoice{}, fmt.Errorf("--transport auto: %s %s over %s: %w", method, u.Path, over, err)
	}
	if !ok {
		why := "no Alt-Svc"
		if alt != "" {
			why = fmt.Sprintf("Alt-Svc %q offers no h3", alt)
		}
		return autoChoice{transport: over, addr: addr,
			note: fmt.Sprintf("%s on the first request (%s %s, status %d): %s", over, method, u.Path, resp.StatusCode, why)}, nil
	}
	if host == "" {
		host = u.Hostname()
	}
	h3 := net.JoinHostPort(host, strconv.Itoa(port))
	return autoChoice{transport: H3, addr: h3,
		note: fmt.Sprintf("h3 at udp %s, as Alt-Svc %q on the first request (%s %s over %s, status %d) advertised", h3, alt, method, u.Path, over, resp.StatusCode)}, nil
}
