package conn

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/results"
)

// DefaultTimeout bounds the connection set-up before a run (the ALPN
// probe, --transport auto's first request) when Options.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// Speaks is what a client can send over, for New.
type Speaks struct {
	// Transports are those the client has code for (HTTP1, H2C, H2, H3,
	// GRPC); New refuses any other, the one --transport auto or the ALPN
	// probe picked too.
	Transports []string
	// Method and Header are --transport auto's first request: the run's
	// own when it is GET or HEAD, else HEAD, so that the probe changes
	// nothing on the server.
	Method string
	Header []string
	// Target is what the client's user calls the URL in messages ("" is
	// "URL"; replay's is "target").
	Target string
}

// Conns are one run's connections as New resolved them: the transport,
// the address dialed, the TLS configuration and the shared pools. Over
// HTTP/1.1 each VU dials its own connection (load/h1) to Addr with
// H1TLS; over h2c and h2 the VUs share H2, over h3 H3, over gRPC GRPC.
type Conns struct {
	o      Options
	Target *url.URL    // the parsed URL; nil for gRPC's host:port
	Addr   string      // host:port dialed: TCP, or UDP for h3 (Alt-Svc's with auto)
	TLS    *tls.Config // https://: SNI, checks, CAs, client certificate, no ALPN; nil for http://
	H2     *h2.Pool    // h2c, h2
	H3     *h3.Pool    // h3
	GRPC   *h2.GRPCPool
	// Auto says which transport --transport auto took and why (the
	// Alt-Svc it followed, or its absence).
	Auto string
}

// New is the one rule from scheme and transport to TLS and pools:
//
//   - http:// is HTTP/1.1 (""), h2c, or with auto HTTP/1.1 (no TLS, hence
//     no Alt-Svc to follow); h2 and h3 need https://.
//   - https:// is HTTP/1.1 over TLS, h2 or h3; "" asks the server by ALPN
//     with one TLS handshake before the run (HTTP/1.1 when the options are
//     HTTP/1.1's: NoKeepAlive, ClientStd); auto makes one request and
//     follows its Alt-Svc to h3; h2c is refused.
//   - grpc dials host:port (or an http:// URL's) over h2c, an https://
//     URL's over TLS (h2 by ALPN); TLS options with a plaintext target are
//     refused rather than ignored.
//
// Pools dial lazily, at a VU's first request; Close releases them.
func New(o Options, sp Speaks) (*Conns, error) {
	switch o.Client {
	case "":
		o.Client = ClientLean
	case ClientLean, ClientStd:
	default:
		return nil, fmt.Errorf("%w: client %q (want lean or std)", ErrOptions, o.Client)
	}
	c := &Conns{}
	var err error
	if o.Transport == GRPC {
		if err = c.resolveGRPC(o); err != nil {
			return nil, err
		}
	} else if err = c.resolve(&o, sp); err != nil {
		return nil, err
	}
	if !slices.Contains(sp.Transports, o.Transport) {
		return nil, fmt.Errorf("%w: transport %q (want %s)", ErrOptions, o.Transport, orList(sp.Transports))
	}
	if o.Transport == H2C || o.Transport == H2 || o.Transport == H3 {
		if err := h2Only(o.Client, o.NoKeepAlive); err != nil {
			return nil, err
		}
	}
	if o.ZeroRTT && o.Transport != H3 {
		return nil, fmt.Errorf("%w: --0rtt is HTTP/3's (--transport h3), not %s", ErrOptions, o.Transport)
	}
	if o.NoLayers && o.Transport != H3 {
		return nil, fmt.Errorf("%w: --no-layers is HTTP/3's (--transport h3), not %s", ErrOptions, o.Transport)
	}
	if o.CheckLayers && (o.Transport != H3 || o.NoLayers) {
		return nil, fmt.Errorf("%w: --layers-checked is HTTP/3's split (--transport h3, without --no-layers)", ErrOptions)
	}
	c.o = o
	switch o.Transport {
	case H2C:
		c.H2 = h2.NewPool(o.Connections, o.Timeout, nil)
	case H2:
		c.H2 = h2.NewPool(o.Connections, o.Timeout, WithALPN(c.TLS, "h2"))
	case H3:
		c.H3 = h3.NewPool(o.Connections, c.Addr, o.Timeout, c.TLS)
		if o.ZeroRTT {
			c.H3.Enable0RTT()
		}
		if o.NoLayers {
			c.H3.NoLayers()
		}
		if o.CheckLayers {
			c.H3.CheckLayers()
		}
	case GRPC:
		if c.GRPC, err = h2.NewGRPCPool(c.Addr, o.Connections, o.Timeout, true, o.Client != ClientStd, c.TLS); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// resolveGRPC settles a gRPC target: host:port or http://host:port is
// h2c, https://host:port TLS.
func (c *Conns) resolveGRPC(o Options) error {
	c.Addr = o.URL
	u, err := url.Parse(o.URL)
	if err == nil && u.Host != "" {
		c.Addr = u.Host
	}
	c.Addr = strings.TrimSuffix(c.Addr, "/")
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil || port == "" {
		return fmt.Errorf("%w: URL %q: want host:port for grpc (https://host:port over TLS)", ErrOptions, o.URL)
	}
	if u != nil && u.Host != "" && u.Scheme == "https" {
		c.TLS, err = o.TLSConfig(host)
		return err
	}
	if o.Insecure || o.CAFile != "" || o.CertFile != "" {
		return fmt.Errorf("%w: -k, --cacert and --cert are TLS's, and %s is plaintext (h2c): use https://%s", ErrOptions, o.URL, c.Addr)
	}
	return nil
}

// resolve parses an http(s):// URL and settles o.Transport from its
// scheme (New's rule), with the TLS configuration for https://.
func (c *Conns) resolve(o *Options, sp Speaks) error {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: URL %q: want http(s)://host[:port]/path", ErrOptions, o.URL)
	}
	c.Target, c.Addr = u, HostPort(u)
	if u.Scheme == "http" {
		switch o.Transport {
		case "":
			o.Transport = HTTP1
		case Auto:
			o.Transport, c.Auto = HTTP1, "http1: an http:// URL has no TLS, hence no HTTP/3 to follow"
		case H3:
			return fmt.Errorf("%w: --transport h3 is HTTP/3 over QUIC, always encrypted: use an https:// %s", ErrOptions, cmp.Or(sp.Target, "URL"))
		case H2:
			return fmt.Errorf("%w: --transport h2 is HTTP/2 over TLS: use an https:// %s, or h2c", ErrOptions, cmp.Or(sp.Target, "URL"))
		}
		return nil
	}
	if c.TLS, err = o.TLSConfig(u.Hostname()); err != nil {
		return err
	}
	timeout := cmp.Or(o.Timeout, DefaultTimeout)
	switch {
	case o.Transport == "" && (o.NoKeepAlive || o.Client == ClientStd): // HTTP/1.1's options
		o.Transport = HTTP1
	case o.Transport == "":
		o.Transport = probeALPN(c.Addr, c.TLS, timeout)
	case o.Transport == Auto: // altsvc.go
		ch, err := followAltSvc(u, c.Addr, c.TLS, cmp.Or(sp.Method, "GET"), sp.Header, timeout)
		if err != nil {
			return err
		}
		o.Transport, c.Addr, c.Auto = ch.transport, ch.addr, ch.note
	case o.Transport == H2C:
		https := "https"
		if sp.Target != "" {
			https = "an https:// " + sp.Target
		}
		return fmt.Errorf("%w: h2c is HTTP/2 without TLS: use --transport h2 for %s", ErrOptions, https)
	}
	return nil
}

// Options are the options in effect: Transport resolved (never "" nor
// auto) and Client set.
func (c *Conns) Options() Options { return c.o }

// H1TLS is the TLS configuration of HTTP/1.1 over TLS (ALPN http/1.1),
// nil for http://.
func (c *Conns) H1TLS() *tls.Config {
	if c.TLS == nil {
		return nil
	}
	return WithALPN(c.TLS, "http/1.1")
}

// Aside is one more connection of the same kind for requests apart from
// the run (a scenario reading its dataset first): a gRPC pool whose bytes
// are not counted, or an h3 pool of its own; nil pools over HTTP/1.1 and
// h2c, whose VUs dial their own. Close it after use.
func (c *Conns) Aside() (*Conns, error) {
	a := &Conns{o: c.o, Target: c.Target, Addr: c.Addr, TLS: c.TLS}
	a.o.Connections, a.o.ZeroRTT = 1, false
	var err error
	switch {
	case c.GRPC != nil:
		a.GRPC, err = h2.NewGRPCPool(c.Addr, 1, c.o.Timeout, false, c.o.Client != ClientStd, c.TLS)
	case c.H3 != nil:
		a.H3 = h3.NewPool(1, c.Addr, c.o.Timeout, c.TLS)
	}
	return a, err
}

// Close releases the shared connections (gRPC's and h3's; h2's close with
// their VUs).
func (c *Conns) Close() {
	if c.GRPC != nil {
		c.GRPC.Close()
	}
	if c.H3 != nil {
		c.H3.Close()
	}
}

// HostPort is u's host with its scheme's port when it names none.
func HostPort(u *url.URL) string {
	switch {
	case u.Port() != "":
		return u.Host
	case u.Scheme == "https":
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// h2Only refuses the HTTP/1.1 options a multiplexed run would ignore: a
// connection per request and net/http's client.
func h2Only(client string, noKeepAlive bool) error {
	switch {
	case noKeepAlive:
		return fmt.Errorf("%w: --no-keepalive (a connection per request) is HTTP/1.1's: over HTTP/2 the connections are --conns", ErrOptions)
	case client == ClientStd:
		return fmt.Errorf("%w: --client std is net/http's HTTP/1.1 Transport or grpc-go: HTTP/2 runs on x/net's client connections", ErrOptions)
	}
	return nil
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// FinishPools adds what shared pools counted to res, once every VU has
// closed: h2's wire and DATA bytes and its requests sent again, h3's wire
// bytes (closing it first, so its CONNECTION_CLOSE is counted) and bytes
// by layer inside QUIC. Either pool may be nil.
func FinishPools(res *results.Load, p2 *h2.Pool, p3 *h3.Pool) {
	if p2 != nil {
		res.Bytes.WireIn += p2.Bytes.In.Load()
		res.Bytes.WireOut += p2.Bytes.Out.Load()
		res.Bytes.BodyOut += p2.BodyOut()
		h2.ResentWarning(res, p2.Resent())
	}
	if p3 != nil {
		p3.Close()
		res.Bytes.WireIn += p3.Bytes.In.Load()
		res.Bytes.WireOut += p3.Bytes.Out.Load()
		p3.Finish(res)
	}
}
