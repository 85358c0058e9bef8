package load

import (
	"time"

	"github.com/wirebench/wirebench/load/h3"
)

// NewH3Pool is an HTTP/3 pool (load/h3) to addr (host:port) for the
// scenarios beside raw mode, with the TLS options of raw mode's https://
// (host is the name the certificate must carry).
func NewH3Pool(addr, host string, conns int, timeout time.Duration, insecure bool, caFile string) (*h3.Pool, error) {
	cfg, err := tlsConfig(RawOptions{Insecure: insecure, CAFile: caFile}, host)
	if err != nil {
		return nil, err
	}
	return h3.NewPool(conns, addr, timeout, cfg), nil
}
