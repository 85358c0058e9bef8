package load

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// turnScenario has five operations; its VUs answer at once, each doing
// the operations in turn: a run's own allocations, without a server.
type turnScenario struct{}

func (turnScenario) Name() string         { return "turns" }
func (turnScenario) Ops() []string        { return []string{"a", "b", "c", "d", "e"} }
func (turnScenario) Driver() Driver       { return PerVU }
func (turnScenario) Finish(*results.Load) {}
func (turnScenario) NewVU(context.Context, int, *measure.Bytes) (VU, error) {
	return &turnVU{}, nil
}

type turnVU struct{ n int }

func (v *turnVU) Do(_ context.Context, o *Outcome) {
	o.Op, o.Status, o.BodyIn = v.n%5, 200, 10
	v.n++
}
func (v *turnVU) Close() error { return nil }

// TestStatsDoNotGrowWithWorkers holds the run's statistics to their
// bound: at most ShardCount × (4 + 2 × operations) histograms, however
// many workers, and a few KiB of heap per worker beside them (a worker
// used to own a full set of histograms, 136 KiB each: 1.7 MiB with five
// operations). Counts stay exact across the shards.
func TestStatsDoNotGrowWithWorkers(t *testing.T) {
	const perWorker = 20
	run := func(c int) (hists, bytes int64) {
		t.Helper()
		spare.Lock()
		spare.h = nil // count what a run allocates, not what an earlier one left
		spare.Unlock()
		m0 := spare.made.Load()
		_, b0 := heapAllocs()
		res, err := Run(context.Background(), Options{Options: results.Options{Concurrency: c, Requests: int64(perWorker * c)}, Slowest: -1}, turnScenario{})
		_, b1 := heapAllocs()
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != int64(perWorker*c) || res.Status["200"] != res.Requests || res.Bytes.BodyIn != 10*res.Requests {
			t.Fatalf("c=%d: %d requests, %v statuses, %d bytes in; want %d of each", c, res.Requests, res.Status, res.Bytes.BodyIn, perWorker*c)
		}
		var sum int64
		for _, op := range res.Ops {
			if op.Requests == 0 || op.Latency.Count() != op.Requests {
				t.Fatalf("c=%d: op %s: %d requests, %d latencies", c, op.Name, op.Requests, op.Latency.Count())
			}
			sum += op.Requests
		}
		if sum != res.Requests {
			t.Fatalf("c=%d: the ops' requests add to %d, want %d", c, sum, res.Requests)
		}
		return spare.made.Load() - m0, b1 - b0
	}
	const few, many = 32, 4000
	h1, b1 := run(few)
	h2, b2 := run(many)
	bound := int64(measure.ShardCount(many) * (4 + 2*5))
	if h1 == 0 || h2 > bound {
		t.Errorf("histograms for statistics: %d at -c %d, %d at -c %d; want at most %d (%d shards × 14)", h1, few, h2, many, bound, measure.ShardCount(many))
	}
	per := (b2 - b1) / (many - few)
	t.Logf("histograms %d and %d; heap %d and %d bytes: %d bytes per worker", h1, h2, b1, b2, per)
	if per > 8<<10 {
		t.Errorf("%d heap bytes per worker (-c %d: %d, -c %d: %d); want at most 8 KiB", per, few, b1, many, b2)
	}
	// A second run reuses the first's histograms: it makes only those its
	// shards need beyond the first's (which shard first sees which op
	// varies from run to run), so both together stay within the bound.
	m0 := spare.made.Load()
	if _, err := Run(context.Background(), Options{Options: results.Options{Concurrency: many, Requests: many}, Slowest: -1}, turnScenario{}); err != nil {
		t.Fatal(err)
	}
	if n := spare.made.Load() - m0; h2+n > bound {
		t.Errorf("a second run allocated %d histograms for its statistics beside the first's %d; want at most %d in all (reused)", n, h2, bound)
	}
}

// TestSpareEmptiedOnReuse: a histogram returned to the spares keeps its
// counts until it is taken again, and is empty then: a process that runs
// once never pays for clearing it.
func TestSpareEmptiedOnReuse(t *testing.T) {
	spare.Lock()
	spare.h = nil
	spare.Unlock()
	h := measure.NewHistogram()
	h.Record(time.Millisecond)
	putSpare(h)
	if h.Count() != 1 {
		t.Errorf("returned to the spares: %d values, want the 1 recorded (not cleared yet)", h.Count())
	}
	got := spareHistogram()
	if got != h || got.Count() != 0 {
		t.Errorf("taken again: the same histogram %v, %d values; want it, empty", got == h, got.Count())
	}
}
