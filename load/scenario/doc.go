// Package scenario is the load engine's scenarios that know wirebench's
// reference API, apart from the engine: New makes the user and echo
// scenarios (CRUD, Get, List, Create, Echo) over REST (HTTP/1.1 with
// h1.Conn or net/http, h2c with h2.Pool) or gRPC (h2's lean client or
// grpc-go), every reply decoded and checked; NewKV the KV scenarios over
// RESP (pipelined with -P: the Batches driver) or HTTP/1.1; PostBulk
// streams one bulk upload (wirebench gen --post).
//
// Each is a load.Scenario: its VUs are used by one goroutine each, while
// the connections they share (h2c, gRPC) are safe for concurrent use.
package scenario
