package load

import (
	"crypto/tls"
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
