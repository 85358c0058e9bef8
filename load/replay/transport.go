package replay

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/h3"
)

// clients are what a replay sends with, as load's raw mode has them:
// the lean HTTP/1.1 client (over TLS for https://), HTTP/2's pool (h2c,
// or h2 over TLS) or HTTP/3's.
type clients struct {
	addr string      // host:port dialed
	tls  *tls.Config // https:// over HTTP/1.1 (ALPN http/1.1)
	h2   *h2.Pool
	h3   *h3.Pool
}

// newClients makes the shared pools by package conn's rule. https://
// without a transport is HTTP/1.1 over TLS (no ALPN probe: the transport
// is what the user names).
func newClients(o Options, u *url.URL) (clients, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return clients{}, fmt.Errorf("%w: target URL %q: want http:// or https://", ErrReplay, o.URL)
	}
	co := o.Options
	if co.Transport == "" {
		co.Transport = conn.HTTP1
	}
	c, err := conn.New(co, conn.Speaks{Transports: []string{conn.HTTP1, conn.H2C, conn.H2, conn.H3}, Target: "target"})
	if err != nil {
		return clients{}, fmt.Errorf("%w: %s", ErrReplay, strings.TrimPrefix(err.Error(), conn.ErrOptions.Error()+": "))
	}
	return clients{addr: c.Addr, tls: c.H1TLS(), h2: c.H2, h3: c.H3}, nil
}
