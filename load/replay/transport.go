package replay

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/wirebench/wirebench/load"
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

// newClients checks the target's scheme against the transport and makes
// the shared pools. https:// without a transport is HTTP/1.1 over TLS (no
// ALPN probe: the transport is what the user names).
func newClients(o Options, u *url.URL) (clients, error) {
	c := clients{addr: hostPort(u)}
	https := u.Scheme == "https"
	switch {
	case u.Scheme != "http" && !https:
		return c, fmt.Errorf("%w: target URL %q: want http:// or https://", ErrReplay, o.URL)
	case !https && o.Transport == conn.H2:
		return c, fmt.Errorf("%w: transport h2 is HTTP/2 over TLS: use an https:// target, or h2c", ErrReplay)
	case !https && o.Transport == conn.H3:
		return c, fmt.Errorf("%w: transport h3 is HTTP/3 over QUIC, always encrypted: use an https:// target", ErrReplay)
	case https && o.Transport == conn.H2C:
		return c, fmt.Errorf("%w: h2c is HTTP/2 without TLS: use --transport h2 for an https:// target", ErrReplay)
	}
	var err error
	switch o.Transport {
	case "", conn.HTTP1:
		if https {
			c.tls, err = load.TLSConfig(o.Insecure, o.CAFile, u.Hostname(), "http/1.1")
		}
	case conn.H2C:
		c.h2 = h2.NewPool(o.Connections, o.Timeout, nil)
	case conn.H2:
		var cfg *tls.Config
		if cfg, err = load.TLSConfig(o.Insecure, o.CAFile, u.Hostname(), "h2"); err == nil {
			c.h2 = h2.NewPool(o.Connections, o.Timeout, cfg)
		}
	case conn.H3:
		c.h3, err = load.NewH3Pool(c.addr, u.Hostname(), o.Connections, o.Timeout, o.Insecure, o.CAFile)
	default:
		return c, fmt.Errorf("%w: transport %q: want http1, h2c, h2 or h3", ErrReplay, o.Transport)
	}
	if err != nil {
		return c, fmt.Errorf("%w: %s", ErrReplay, strings.TrimPrefix(err.Error(), load.ErrOptions.Error()+": "))
	}
	return c, nil
}

// hostPort is u's host with its scheme's port when it names none.
func hostPort(u *url.URL) string {
	switch {
	case u.Port() != "":
		return u.Host
	case u.Scheme == "https":
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}
