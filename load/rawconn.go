package load

import (
	"context"
	"net"

	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/measure"
)

// rawIODialer makes dial's TCP connections rawio.Conns, for the lean gRPC
// client: without raw system calls a gRPC call at c=1 paid a futex wake
// of sysmon and its thread's nanosleeps on the client's CPU (strace: 0.6
// futex and 0.7 nanosleep per call, none for REST, whose clients have made
// raw calls since fdReader), which p50 counted against gRPC (issue 17).
// Other connections pass as they are.
func rawIODialer(dial measure.DialFunc) measure.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		rc, err := rawio.Wrap(c)
		if err != nil {
			c.Close()
			return nil, err
		}
		return rc, nil
	}
}
