package h2

import (
	"context"
	"net"

	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/measure"
)

// RawIODialer makes dial's TCP connections rawio.Conns, for the lean gRPC
// client: without raw system calls a gRPC call at c=1 paid a futex wake
// of sysmon and its thread's nanosleeps on the client's CPU (strace: 0.6
// futex and 0.7 nanosleep per call, none for REST, whose clients have made
// raw calls since fdReader), which p50 counted against gRPC (issue 17).
// Other connections pass as they are. Bytes are counted into n (nil:
// not counted) by the rawio.Conn itself, which also writes from inside its
// reads (rawio.Conn.Queue), or by a measure.Conn around the others.
func RawIODialer(dial measure.DialFunc, n *measure.Bytes) measure.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w, err := rawio.Wrap(c)
		if err != nil {
			c.Close()
			return nil, err
		}
		if rc, ok := w.(*rawio.Conn); ok {
			rc.Count(n)
			return rc, nil
		}
		if n != nil {
			return measure.CountConn(w, n), nil
		}
		return w, nil
	}
}
