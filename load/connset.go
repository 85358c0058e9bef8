package load

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h3"
)

// TLSConfig is raw mode's TLS configuration for an https:// URL (-k,
// --cacert; host is the name the certificate must carry) offering protos
// by ALPN, for the scenarios beside raw mode (replay).
func TLSConfig(insecure bool, caFile, host string, protos ...string) (*tls.Config, error) {
	cfg, err := conn.Options{Insecure: insecure, CAFile: caFile}.TLSConfig(host)
	if err != nil {
		return nil, err
	}
	return conn.WithALPN(cfg, protos...), nil
}

// NewH3Pool is an HTTP/3 pool (load/h3) to addr (host:port) for the
// scenarios beside raw mode, with the TLS options of raw mode's https://
// (host is the name the certificate must carry).
func NewH3Pool(addr, host string, conns int, timeout time.Duration, insecure bool, caFile string) (*h3.Pool, error) {
	cfg, err := conn.Options{Insecure: insecure, CAFile: caFile}.TLSConfig(host)
	if err != nil {
		return nil, err
	}
	return h3.NewPool(conns, addr, timeout, cfg), nil
}

// FollowAltSvc is --transport auto for the reference scenarios.
func FollowAltSvc(rawURL string, insecure bool, caFile string, timeout time.Duration) (addr, note string, err error) {
	return conn.FollowAltSvc(conn.Options{URL: rawURL, Insecure: insecure, CAFile: caFile, Timeout: timeout})
}

// H2Only refuses the HTTP/1.1 options an HTTP/2 run would ignore: one
// client (x/net's) and the connections of --conns.
func H2Only(client string, noKeepAlive bool) error {
	switch {
	case noKeepAlive:
		return fmt.Errorf("%w: --no-keepalive (a connection per request) is HTTP/1.1's: over HTTP/2 the connections are --conns", ErrOptions)
	case client == conn.ClientStd:
		return fmt.Errorf("%w: --client std is net/http's HTTP/1.1 Transport or grpc-go: HTTP/2 runs on x/net's client connections", ErrOptions)
	}
	return nil
}
