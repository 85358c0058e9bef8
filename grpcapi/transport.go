package grpcapi

import (
	"google.golang.org/grpc"
)

// StreamWorkers is how many goroutines TransportOptions keeps waiting for
// calls. grpc-go hands a new stream to a worker only if one is waiting at
// that moment, else it starts a goroutine for it, whose stack then grows
// (copied, frame by frame) on every call: with one worker per CPU (2) and
// ghz's default 50 calls in flight, nearly every call took a new
// goroutine, and stack growth was 45k of ~117k instructions a call. More
// workers are not free: each GC cycle shrinks idle workers' stacks, which
// regrow on their next call. Instructions a call against bare grpc-go at
// ghz -c 50 (bench/grpc-instr.sh, 2026-11-30): 16 workers 0.85, 32 0.73,
// 48 0.68, 64 0.66-0.67, 100 0.70-0.72, 128 0.75; a stream of 1,000 at
// c=1 1.01-1.03 up to 64, 1.03-1.06 above (docs/grpc.md). 64: enough for
// ghz's default concurrency and our benchmarks' 50, with some headroom;
// calls beyond the workers still get a goroutine each.
const StreamWorkers = 64

// TransportOptions are the server's HTTP/2 transport settings for small
// unary calls (issue 17: gRPC's p50 at c=1 against REST's):
//
//   - A static flow-control window of window bytes per stream and per
//     connection, as the h2c server's (--h2-stream-buffer): any window set
//     turns off grpc-go's BDP estimation, which otherwise answers data with
//     a PING and its ACK (frames, a write and a wake-up each) to grow the
//     window: nothing a loopback link with 16 KiB messages needs. window
//     below 64 KiB is raised to it (grpc-go ignores smaller ones).
//   - StreamWorkers stream workers: a call runs on a waiting goroutine,
//     its stack already grown, instead of a new one per stream.
//   - A shared write buffer (a connection's 32 KiB write buffer goes back
//     to a pool between flushes, so idle connections hold none) is
//     grpc-go's default since the option was deprecated.
func TransportOptions(window int32) []grpc.ServerOption {
	window = max(window, 64<<10)
	return []grpc.ServerOption{
		grpc.InitialWindowSize(window),
		grpc.InitialConnWindowSize(window),
		grpc.NumStreamWorkers(StreamWorkers),
	}
}
