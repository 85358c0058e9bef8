package load

import (
	"context"

	"github.com/wirebench/wirebench/measure"
)

// Scenario makes the VUs of a run and names their operations.
// NewVU is called once per worker before the run starts; implementations
// must be safe for concurrent use of the VUs they return (shared
// connection pools, say), each VU being used by one goroutine.
type Scenario interface {
	// Ops names the operations; Outcome.Op indexes this slice.
	Ops() []string
	// NewVU returns worker id's VU. Connections it dials for itself count
	// their bytes into wire. A VU should dial lazily, so that a refused
	// connection is a failed request rather than a failed run.
	NewVU(ctx context.Context, id int, wire *measure.Bytes) (VU, error)
}

// VU is one virtual user. Do performs its next operation and fills o;
// it must not block past ctx. Close ends the VU, first undoing what an
// unfinished iteration left in the server (a user created but not yet
// deleted), so the dataset stays fixed (fairness rule 1).
type VU interface {
	Do(ctx context.Context, o *Outcome)
	Close() error
}

// WireCounter is implemented by scenarios whose connections are shared by
// VUs (h2c, gRPC) and so cannot count into a worker's Bytes.
type WireCounter interface {
	WireBytes() (in, out int64)
}

// BodyCounter is implemented by scenarios whose shared connections count
// the request body bytes sent (HTTP/2's DATA frames), which a VU cannot:
// the transport reads a body ahead of what it sends.
type BodyCounter interface {
	BodyBytesOut() int64
}

// Resender is implemented by scenarios whose transport sends a request
// again, unseen by the VU, when the server refused it unprocessed
// (HTTP/2's GOAWAY and REFUSED_STREAM): the run reports how many.
type Resender interface {
	Resent() int64
}

// Outcome is what one operation produced.
type Outcome struct {
	Op     int // index into Scenario.Ops
	Status int // HTTP status, or gRPC code; 0 if none arrived
	// Fail is empty on success, else the reason the request counts as
	// failed: a transport error, an unexpected status, a failed check.
	// Keep it low-cardinality (no ids, no ports): results count by it.
	Fail    string
	BodyIn  int // payload bytes received (HTTP body, gRPC message)
	BodyOut int // payload bytes sent
}

// reset prepares o for the next operation.
func (o *Outcome) reset() { *o = Outcome{} }
