package grpcapi

import (
	"runtime"

	"google.golang.org/grpc"
)

// TransportOptions are the server's HTTP/2 transport settings for small
// unary calls (issue 17: gRPC's p50 at c=1 against REST's):
//
//   - A static flow-control window of window bytes per stream and per
//     connection, as the h2c server's (--h2-stream-buffer): any window set
//     turns off grpc-go's BDP estimation, which otherwise answers data with
//     a PING and its ACK (frames, a write and a wake-up each) to grow the
//     window: nothing a loopback link with 16 KiB messages needs. window
//     below 64 KiB is raised to it (grpc-go ignores smaller ones).
//   - Stream workers, one per CPU: a call runs on a waiting goroutine
//     instead of a new one per stream.
//   - A shared write buffer (a connection's 32 KiB write buffer goes back
//     to a pool between flushes, so idle connections hold none) is
//     grpc-go's default since the option was deprecated.
func TransportOptions(window int32) []grpc.ServerOption {
	window = max(window, 64<<10)
	return []grpc.ServerOption{
		grpc.InitialWindowSize(window),
		grpc.InitialConnWindowSize(window),
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
	}
}
