package study

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestGRPCVsRESTNotes: the finding is computed from the trials — server
// CPU and allocations per call as medians, the ratio to REST, and gRPC's
// extra cost split at the lean transport's floor — and a group whose cells
// did not run is left out.
func TestGRPCVsRESTNotes(t *testing.T) {
	res := &results.Study{}
	add := func(group, label string, reqs int64, cpus []time.Duration, allocs float64, layers *results.Layers) {
		id := group + "/" + label
		res.Cells = append(res.Cells, results.Cell{ID: id, Group: group, Label: label})
		for _, cpu := range cpus {
			l := &results.Load{Requests: reqs, Bytes: results.Bytes{WireIn: 300 * reqs, WireOut: 100 * reqs, BodyIn: 80 * reqs, BodyOut: 20 * reqs}}
			if layers != nil {
				l.Stream = &results.Stream{In: *layers, Out: results.Layers{H2Frames: 9 * reqs}}
			}
			res.Trials = append(res.Trials, results.Trial{Cell: id, Load: l, Server: results.ServerStats{CPU: cpu,
				GoMem: map[string]float64{"go_memstats_mallocs_total_at_start": 1000, "go_memstats_mallocs_total": 1000 + allocs*float64(reqs)}}})
		}
	}
	ms := time.Millisecond
	// 1,000 calls: 20, 30 and 25 ms of CPU are 20, 30 and 25 µs a call (median 25).
	add("CRUD c=1", "REST json", 1000, []time.Duration{20 * ms, 30 * ms, 25 * ms}, 10, nil)
	add("CRUD c=1", "gRPC", 1000, []time.Duration{50 * ms, 50 * ms, 50 * ms}, 60, nil)
	add("CRUD c=1", leanLabel, 1000, []time.Duration{30 * ms, 30 * ms, 30 * ms}, 20, nil)
	add("stream of 1000", "REST list (one JSON array)", 10, []time.Duration{10 * ms}, 500, &results.Layers{Message: 100_000, H1Headers: 1000})
	add("stream of 1000", "gRPC server stream", 10, []time.Duration{20 * ms}, 7000, &results.Layers{Message: 80_000, Envelope: 50_000, H2Frames: 90_000, H2Headers: 500})
	add("CRUD c=50", "REST json", 1000, nil, 0, nil) // no trial ran: no row
	notes := grpcVsRESTNotes(res)
	if len(notes) != 1 {
		t.Fatalf("%d notes", len(notes))
	}
	n := notes[0]
	for _, want := range []string{
		"| CRUD c=1 | REST json | 25.0 µs | 1.00× | 10.0 | 1.00× | 400 | 100 |",
		"| CRUD c=1 | gRPC | 50.0 µs | 2.00× | 60.0 | 6.00× |",
		"| CRUD c=1 | " + leanLabel + " | 30.0 µs | 1.20× | 20.0 | 2.00× |",
		"| stream of 1000 | gRPC server stream | 2000.0 µs | 2.00× | 7000.0 | 14.00× |",
		// +25 µs over REST: +20 is grpc-go over the floor, +5 the protocol.
		"(2.00×, +25.0 µs). Split at the floor: grpc-go's transport over our minimal one +20.0 µs",
		"grpc-go allocates 60.0 objects per call against the floor's 20.0), and gRPC itself against REST, both on their floor, +5.0 µs",
		// layers: in + out (9 bytes of frames a call out), per call
		"| stream of 1000 | gRPC server stream | 8000 | 5000 | 9009 | 50 | 0 | 0 | 22059 |",
		"| stream of 1000 | REST list (one JSON array) | 10000 | 0 | 9 | 0 | 100 | 0 | 10109 |",
		"- **stream of 1000**: gRPC spends 2000.0 µs per call against REST's 1000.0 µs (2.00×), with 7000.0 against 500.0 allocations per call; " +
			"framing (envelopes, frames, headers) is 14059 of its 22059 bytes per call against REST's 109 of 10109.",
	} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
	if strings.Contains(n, "CRUD c=50") {
		t.Errorf("a group with no trials has rows:\n%s", n)
	}
	t.Log(n)
	if got := grpcVsRESTNotes(&results.Study{}); got != nil {
		t.Errorf("notes from no cells: %q", got)
	}
}
