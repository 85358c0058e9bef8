// Package h2 is the load engine's HTTP/2 and gRPC client: Reader reads
// HTTP/2 frames in place and decodes a header block into what a gRPC reply
// needs (read.go, FuzzH2Reader); GRPCConn is the lean gRPC client, one
// HTTP/2 connection shared by many VUs' calls with no goroutine per call
// (grpc.go, issue 17); GRPCPool and GRPCClient put n connections of it
// (or of grpc-go, --client std) behind the VUs, with one timeout context
// per VU; Pool is x/net's HTTP/2 client over n connections whose bytes
// are counted below TLS and split by layer (package wire), for h2c and h2
// raw mode and the REST scenarios over h2c.
//
// GRPCConn and Pool are safe for concurrent use by the VUs that share
// them; a GRPCClient belongs to one VU. It knows nothing of the engine:
// package load's scenarios put it behind their VUs.
package h2
