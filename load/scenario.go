package load

import (
	"context"
	"time"

	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Scenario makes the VUs of a run, names their operations, says how
// they may be driven, and adds to the result what no single request
// records. This is the whole seam between the engine and a client: Run
// asks nothing else of a scenario.
//
// NewVU is called once per worker before the run starts, and Finish once
// after every VU closed, both from Run's goroutine. Implementations must
// be safe for concurrent use of the VUs they return (shared connection
// pools, say), each VU being used by one goroutine at a time.
type Scenario interface {
	// Name names the scenario in the result ("raw", "crud", "stream sse").
	Name() string
	// Ops names the operations; Outcome.Op indexes this slice.
	Ops() []string
	// NewVU returns worker id's VU. Connections it dials for itself count
	// their bytes into wire. A VU should dial lazily, so that a refused
	// connection is a failed request rather than a failed run.
	NewVU(ctx context.Context, id int, wire *measure.Bytes) (VU, error)
	// Driver is the driver the scenario's VUs allow (driver.go); Run uses
	// it where the options allow it too, else PerVU, which fits every VU.
	Driver() Driver
	// Finish adds to res what the scenario measured beside its VUs: the
	// bytes of connections the VUs share (h2c, gRPC, streams), the request
	// bodies a shared transport sent, requests its transport resent, a
	// stream section, a browser's own latencies. res holds the VUs'
	// measurements and the client's CPU; Run diagnoses it afterwards.
	Finish(res *results.Load)
}

// VU is one virtual user. Do performs its next operation and fills o;
// it must not block past ctx. Close ends the VU, first undoing what an
// unfinished iteration left in the server (a user created but not yet
// deleted), so the dataset stays fixed (fairness rule 1).
type VU interface {
	Do(ctx context.Context, o *Outcome)
	Close() error
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
	// Trace is the trace ID of the traceparent sent with the request
	// (zero if none was); Conn the client's local port of its connection
	// (0 if unknown). The run names its slowest requests by them.
	Trace traceparent.ID
	Conn  int
	// Hit is set by the engine before Do, in open loop: the number of the
	// request the pacer scheduled (of the whole test, in a segment). A VU
	// that follows an explicit schedule (Options.Pacer: a replay) sends
	// that request.
	Hit uint64
	// More is set by a VU whose iteration continues (a flow's next step):
	// the engine calls Do again without taking a new arrival from the
	// pacer, so that an open loop paces iterations, not requests, and -n
	// counts iterations. Wait is a pause (think time) before the VU's next
	// Do, whether or not the iteration continues; a continuing operation
	// is due when the pause ends.
	More bool
	Wait time.Duration
	// Iteration is set by a VU whose operations form iterations (a flow's
	// steps, More between them): the run then counts iterations, their
	// failures and their latency from the first operation's due time to
	// the last one's end (results.Load.Iterations).
	Iteration bool
}

// reset prepares o for the next operation.
func (o *Outcome) reset() { *o = Outcome{} }

// GRPCStatus is the Outcome.Status of a gRPC call: 1000 + the gRPC code,
// so it cannot be mistaken for an HTTP status (result files and summaries
// print it as "grpc <Code>").
func GRPCStatus(code uint32) int { return 1000 + int(code) }
