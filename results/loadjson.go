package results

import (
	"bytes"
	"time"
)

// Headline figures a load result file carries as plain numbers beside the
// data they are derived from, so that jq reads them without knowing how
// they are computed (.rps, .error_rate, .per_request.wire_in_bytes). They
// are written, never read: a result read back computes them again from
// its counts, which stay the only truth.
type loadFigures struct {
	// RPS is completed requests per second of the measured window.
	RPS float64 `json:"rps"`
	// ErrorRate is the failed fraction of completed requests (0..1).
	ErrorRate float64 `json:"error_rate"`
	// ClientCPUUtil is the client's CPU use as a fraction of its CPUs.
	ClientCPUUtil float64           `json:"client_cpu_util"`
	PerRequest    perRequestFigures `json:"per_request"`
}

// perRequestFigures are per completed request (0 when none completed).
type perRequestFigures struct {
	WireIn      float64 `json:"wire_in_bytes"`
	WireOut     float64 `json:"wire_out_bytes"`
	BodyIn      float64 `json:"body_in_bytes"`
	BodyOut     float64 `json:"body_out_bytes"`
	ClientCPUNs int64   `json:"client_cpu_ns"`
	Allocs      float64 `json:"client_allocs,omitempty"`
	AllocBytes  float64 `json:"client_alloc_bytes,omitempty"`
}

// Figures are r's headline figures as written beside its data.
func (r *Load) figures() loadFigures {
	per := func(n int64) float64 {
		if r.Requests == 0 {
			return 0
		}
		return float64(n) / float64(r.Requests)
	}
	return loadFigures{
		RPS: r.RPS(), ErrorRate: r.ErrorRate(), ClientCPUUtil: r.CPUUtil(),
		PerRequest: perRequestFigures{
			WireIn: per(r.Bytes.WireIn), WireOut: per(r.Bytes.WireOut),
			BodyIn: per(r.Bytes.BodyIn), BodyOut: per(r.Bytes.BodyOut),
			ClientCPUNs: int64(r.CPUPerRequest() / time.Nanosecond),
			Allocs:      per(r.CPU.Allocs), AllocBytes: per(r.CPU.AllocBytes),
		},
	}
}

// MarshalJSON writes r with its headline figures after its data.
func (r *Load) MarshalJSON() ([]byte, error) {
	type plain Load // plain has no MarshalJSON: no recursion
	var b bytes.Buffer
	err := EncodeJSON(&b, struct {
		*plain
		loadFigures
	}{(*plain)(r), r.figures()}, "")
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}
