package results

import (
	"time"

	"github.com/wirebench/wirebench/measure"
)

// Stream is what a stream scenario adds to a Load result.
type Stream struct {
	Kind string `json:"kind"`
	// Exchanges completed (streams, lists, calls) and items they carried.
	Exchanges int64 `json:"exchanges"`
	Items     int64 `json:"items"`
	// First is from the request's start to the first item; Last to the
	// last; PerMessage as the scenario defines it (see the kinds).
	First      *measure.Histogram `json:"first"`
	Last       *measure.Histogram `json:"last"`
	PerMessage *measure.Histogram `json:"per_message"`
	// In and Out split the bytes on every connection by layer.
	In  Layers `json:"in"`
	Out Layers `json:"out"`
	// InBrowser marks latencies measured by a page with performance.now().
	InBrowser bool `json:"in_browser,omitempty"`
}

// ItemsPerSecond is the rate of items over the run's measured window.
func (s *Stream) ItemsPerSecond(window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(s.Items) / window.Seconds()
}
