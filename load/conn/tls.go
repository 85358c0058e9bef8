package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"
)

// TLSConfig is the client's TLS configuration for an https:// target:
// SNI from host (the name the certificate must carry), certificate checks
// unless Insecure, CAFile's CAs beside the system's, and the client
// certificate of CertFile and KeyFile. It offers no protocol by ALPN
// (WithALPN).
func (o Options) TLSConfig(host string) (*tls.Config, error) {
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

// WithALPN returns a copy of cfg offering these protocols.
func WithALPN(cfg *tls.Config, protos ...string) *tls.Config {
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
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: WithALPN(cfg, "h2", "http/1.1")}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return HTTP1
	}
	defer c.Close()
	if c.(*tls.Conn).ConnectionState().NegotiatedProtocol == "h2" {
		return H2
	}
	return HTTP1
}
