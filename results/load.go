package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// ErrLoad reports a load result that cannot be read or merged;
// ErrThreshold a threshold expression that cannot be parsed. Their texts
// name the domain, "load", as the command line prints them.
var (
	ErrLoad      = errors.New("load: bad result")
	ErrThreshold = errors.New("load: bad threshold")
)

// LoadSchema names the load result file format. A reader refuses other schemas;
// a change that old readers would misread gets a new version (schema.go).
const LoadSchema = "wirebench.load/v2"

// Load is one load run's result (or the merge of several segments), written as the
// JSON result file. Histograms are serialized whole, so results merge
// exactly and percentiles can be recomputed later.
type Load struct {
	Schema   string `json:"schema"`
	Scenario string `json:"scenario"`
	// Options are the effective options (defaults filled, segment applied).
	Options Options `json:"options"`
	// Test is the whole test's options (defaults filled, no segment
	// share) in a segment's result and in their merge: the segments of
	// one test have the same (segments.go).
	Test *Options `json:"test,omitempty"`
	// Config is the scenario's and CLI's configuration (target, method,
	// headers, format, transport, every flag as given).
	Config Config `json:"config,omitzero"`
	// Conn is how the connections were set up (transport and why,
	// handshakes, 0-RTT), as the scenario reports it.
	Conn *Conn       `json:"conn,omitempty"`
	Env  measure.Env `json:"env"`
	// Link is the emulated network the run went through (--link); nil
	// over the machine's own loopback.
	Link *Link `json:"link,omitempty"`

	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Window is the measured window: from Start until requests stopped
	// being issued (Start + Duration, or End if the run ended first). The
	// graceful stop after it only lets requests in flight finish, so rates
	// are taken over Window, not diluted by that wait. Zero in results
	// written before it existed: rates then use End − Start.
	Window time.Duration `json:"window_ns,omitempty"`

	Requests    int64 `json:"requests"`
	Failed      int64 `json:"failed"`
	Interrupted int64 `json:"interrupted"` // cut by the end of the run, not counted
	// Scheduled is how many arrivals an open loop's schedule held in its
	// window (-d): rate × window for even pacing, the seeded draw's own
	// count for Poisson arrivals, which varies by √n about it. Zero in
	// closed loop and in results written before it existed.
	Scheduled int64 `json:"scheduled,omitempty"`

	// Latency is measured from the intended send time in open loop
	// (coordinated omission corrected) and equals Service in closed loop.
	Latency *measure.Histogram `json:"latency"`
	// Service is from the actual send to the end of the response.
	Service *measure.Histogram `json:"service"`
	// Lag is how late requests were sent against the schedule (open loop).
	Lag *measure.Histogram `json:"lag"`
	// ClientLag is the part of Lag the client caused: how late each send
	// was from when a worker was free for it (its timer, its scheduling,
	// the CPU it got); the rest of Lag is arrivals waiting for a free
	// worker, which a slow server causes. Absent in files before it.
	ClientLag *measure.Histogram `json:"client_lag,omitempty"`

	Ops      []Op             `json:"ops"`
	Status   map[string]int64 `json:"status"`
	Failures map[string]int64 `json:"failures"`
	// Causes are Failures grouped by cause (failures.go), most frequent
	// first: what a reader of the file acts on without parsing messages.
	Causes []FailureCause `json:"failure_causes,omitempty"`
	Bytes  Bytes          `json:"bytes"`
	CPU    CPU            `json:"client_cpu"`

	// Stream is set by the stream scenarios (load/stream); Merge sums the
	// segments' sections.
	Stream *Stream `json:"stream,omitempty"`
	// Layers splits the wire bytes by layer for runs whose client counts
	// them on every request outside a stream scenario (HTTP/3: load/h3);
	// Merge sums them when every segment has them.
	Layers *Split `json:"layers,omitempty"`
	// KV is set by the key-value scenarios (kv.go): hot-key traffic and
	// the GETs' hit ratio; Merge sums the segments' sections.
	KV *KV `json:"kv,omitempty"`

	// Iterations is set when the run's operations form iterations (a
	// flow's steps): their count, failures and latency (iterations.go).
	Iterations *Iterations `json:"iterations,omitempty"`

	// Exemplars are the slowest requests and a few per latency bucket,
	// with their trace IDs (exemplar.go); Merge keeps the slowest of all.
	Exemplars *Exemplars `json:"exemplars,omitempty"`

	// Stop is set when the run was cut short (SIGINT, SIGTERM): Window
	// is then how long it really ran, not the planned duration.
	Stop *Stop `json:"stop,omitempty"`
	// Thresholds are the run's pass/fail criteria with their verdicts on
	// this result, so the verdict travels with the numbers (report,
	// compare). A segment's result has none: merge evaluates them.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`

	// Segments lists the segments merged into this result.
	Segments []string `json:"segments,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Stop says why a run ended before its planned end.
type Stop struct {
	Interrupted bool   `json:"interrupted"`
	Signal      string `json:"signal,omitempty"` // "SIGINT", "SIGTERM"
	// Cause is why the run stopped on its own, not interrupted: no
	// request succeeded and every one failed for a reason more requests
	// cannot change (connection refused).
	Cause string `json:"cause,omitempty"`
}

// ThresholdResult is one threshold and its verdict.
type ThresholdResult struct {
	Expr     string `json:"expr"`     // as given: p99<50ms
	Measured string `json:"measured"` // the value it was checked against
	Pass     bool   `json:"pass"`
}

// Op is the per-operation share of a result.
type Op struct {
	Name     string             `json:"name"`
	Requests int64              `json:"requests"`
	Failed   int64              `json:"failed"`
	Latency  *measure.Histogram `json:"latency"`
	Service  *measure.Histogram `json:"service"`
}

// Bytes splits traffic into payload (Body) and everything on the
// wire (Wire = body + HTTP headers, chunk framing, HTTP/2 and gRPC frames).
type Bytes struct {
	WireIn  int64 `json:"wire_in"`
	WireOut int64 `json:"wire_out"`
	BodyIn  int64 `json:"body_in"`
	BodyOut int64 `json:"body_out"`
}

// CPU is the client's own CPU use over the run (fairness rule 4).
type CPU struct {
	User   time.Duration `json:"user_ns"`
	System time.Duration `json:"system_ns"`
	// CPUs is how many CPUs the client was allowed (its affinity).
	CPUs int `json:"cpus"`
	// Allocs and AllocBytes are the heap allocations of the whole client
	// process over the run (runtime/metrics): the client's own, reported
	// apart from the server's.
	Allocs     int64 `json:"allocs,omitempty"`
	AllocBytes int64 `json:"alloc_bytes,omitempty"`
}

// Elapsed is the wall-clock length of the run.
func (r *Load) Elapsed() time.Duration { return r.End.Sub(r.Start) }

// Measured is the window rates are taken over (see Window).
func (r *Load) Measured() time.Duration {
	if r.Window > 0 {
		return r.Window
	}
	return r.Elapsed()
}

// RPS is completed requests per second of the measured window.
func (r *Load) RPS() float64 {
	if s := r.Measured().Seconds(); s > 0 {
		return float64(r.Requests) / s
	}
	return 0
}

// ErrorRate is the failed fraction of requests.
func (r *Load) ErrorRate() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Failed) / float64(r.Requests)
}

// CPUPerRequest is client CPU time per completed request.
func (r *Load) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return (r.CPU.User + r.CPU.System) / time.Duration(r.Requests)
}

// CPUUtil is the client's CPU use as a fraction of the CPUs it had.
func (r *Load) CPUUtil() float64 {
	e := r.Elapsed().Seconds()
	if e <= 0 || r.CPU.CPUs == 0 {
		return 0
	}
	return (r.CPU.User + r.CPU.System).Seconds() / e / float64(r.CPU.CPUs)
}

// WriteJSON writes r as an indented result file.
func (r *Load) WriteJSON(w io.Writer) error {
	if err := EncodeJSON(w, r, "  "); err != nil {
		return fmt.Errorf("load: write result: %w", err)
	}
	return nil
}

// ReadLoad reads a load result file, refusing other schemas.
func ReadLoad(rd io.Reader) (*Load, error) {
	var r Load
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLoad, err)
	}
	if !readable(r.Schema, LoadSchema) {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrLoad, r.Schema, LoadSchema)
	}
	r.upgrade()
	if r.Latency == nil || r.Service == nil || r.Lag == nil {
		return nil, fmt.Errorf("%w: missing histograms", ErrLoad)
	}
	for _, op := range r.Ops {
		if op.Latency == nil || op.Service == nil {
			return nil, fmt.Errorf("%w: op %q: missing histograms", ErrLoad, op.Name)
		}
	}
	return &r, nil
}
