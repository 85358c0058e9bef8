package load

import (
	"context"
	"testing"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// TestSegmentedRun: three segments of -n 1000 send 1000 requests in all.
func TestSegmentedRun(t *testing.T) {
	t.Parallel()
	ts := loadtest.StartHTTP(t, loadtest.OK)
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	var rs []*results.Load
	for i := 1; i <= 3; i++ {
		r, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 5, Requests: 1000, Segment: results.Segment{I: i, N: 3}}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	m, err := results.Merge(rs...)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Requests.Load() != 1000 || m.Requests != 1000 || m.Options.Concurrency != 5 || m.Scenario != "raw" {
		t.Errorf("server %d, merged %d requests, %d VUs; want 1000, 1000, 5", ts.Requests.Load(), m.Requests, m.Options.Concurrency)
	}
}
