package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"
)

// TransportH2 is HTTP/2 over TLS (https:// URLs), negotiated by ALPN.
const TransportH2 = "h2"

// tlsConfig builds the client's TLS configuration for an https:// URL:
// SNI from the URL's host, certificate checks unless insecure, extra CAs
// and a client certificate from PEM files.
func tlsConfig(o RawOptions, host string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: host, InsecureSkipVerify: o.Insecure} //nolint:gosec // -k asks for it
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %v", ErrOptions, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s: no PEM certificate in it", ErrOptions, o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate: %v", ErrOptions, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// withALPN returns a copy of cfg offering these protocols.
func withALPN(cfg *tls.Config, protos ...string) *tls.Config {
	c := cfg.Clone()
	c.NextProtos = protos
	return c
}

// probeALPN asks the server which protocol it prefers, h2 or http/1.1,
// with one TLS handshake before the run (one extra connection the server
// sees, with no request on it). A failed probe picks http/1.1: the run
// then counts the failure per request, by reason.
func probeALPN(addr string, cfg *tls.Config, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: withALPN(cfg, "h2", "http/1.1")}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return TransportHTTP1
	}
	defer c.Close()
	if c.(*tls.Conn).ConnectionState().NegotiatedProtocol == "h2" {
		return TransportH2
	}
	return TransportHTTP1
}

// TLSConfig is raw mode's TLS configuration for an https:// URL (-k,
// --cacert; host is the name the certificate must carry) offering protos
// by ALPN, for the scenarios beside raw mode (replay).
func TLSConfig(insecure bool, caFile, host string, protos ...string) (*tls.Config, error) {
	cfg, err := tlsConfig(RawOptions{Insecure: insecure, CAFile: caFile}, host)
	if err != nil {
		return nil, err
	}
	return withALPN(cfg, protos...), nil
}
