package export

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// gateSink blocks every Send until released, counting the sends.
type gateSink struct {
	release chan struct{}
	mu      sync.Mutex
	sent    []int64 // requests of each batch sent
	fail    error
}

func (*gateSink) Name() string { return "gate" }
func (s *gateSink) Send(ctx context.Context, b *Batch) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range b.metrics {
		if m.name == nameRequests {
			s.sent = append(s.sent, int64(m.value))
		}
	}
	return s.fail
}

func snapshot(requests int64) *results.Load {
	t0 := time.Unix(1_800_000_000, 0)
	return &results.Load{Start: t0, End: t0.Add(time.Duration(requests) * time.Millisecond),
		Ops: []results.Op{{Name: "GET", Requests: requests}}}
}

// TestOfferNeverBlocks: with the sink stuck, Offer returns at once; one
// snapshot is in the sink, Queue wait, the rest are dropped and counted;
// once the sink moves, Close sends what waited and then the final.
func TestOfferNeverBlocks(t *testing.T) {
	sink := &gateSink{release: make(chan struct{})}
	e, err := New(Options{Queue: 2, Timeout: time.Minute}, sink)
	if err != nil {
		t.Fatal(err)
	}
	e.Offer(snapshot(1))
	// Wait until the exporter has taken the first into the (stuck) sink.
	for deadline := time.Now().Add(10 * time.Second); len(e.queue) > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the exporter never took the first snapshot")
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() {
		for i := int64(2); i <= 10; i++ {
			e.Offer(snapshot(i))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Offer blocked on a stuck sink")
	}
	if st := e.Stats(); st.Dropped != 7 {
		t.Errorf("dropped %d, want 7 (9 offered, 2 queued)", st.Dropped)
	}
	close(sink.release)
	if err := e.Close(context.Background(), snapshot(11)); err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 2, 3, 11}; !slices.Equal(sink.sent, want) {
		t.Errorf("sent %v, want %v: the first, the two queued, the final", sink.sent, want)
	}
	if st := e.Stats(); st.Sent != 4 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
	if err := e.Close(context.Background(), nil); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestCloseReportsFailedSends: a sink that fails makes Close return
// ErrExport with the sink's name and error, and the stats count it.
func TestCloseReportsFailedSends(t *testing.T) {
	boom := errors.New("receiver says no")
	sink := &gateSink{release: make(chan struct{}), fail: boom}
	close(sink.release)
	e, err := New(Options{}, sink)
	if err != nil {
		t.Fatal(err)
	}
	e.Offer(snapshot(1))
	err = e.Close(context.Background(), snapshot(2))
	if !errors.Is(err, ErrExport) || !errors.Is(err, boom) {
		t.Fatalf("Close: %v, want ErrExport wrapping the sink's error", err)
	}
	if st := e.Stats(); st.Failed != 2 || st.Sent != 2 {
		t.Errorf("stats %+v, want 2 sent, 2 failed", st)
	}
}

// TestCloseGivesUpAtItsDeadline: a sink that never answers holds Close
// only until its context ends.
func TestCloseGivesUpAtItsDeadline(t *testing.T) {
	sink := &gateSink{release: make(chan struct{})} // never released
	e, err := New(Options{Timeout: time.Hour}, sink)
	if err != nil {
		t.Fatal(err)
	}
	e.Offer(snapshot(1))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.Close(ctx, snapshot(2)); !errors.Is(err, ErrExport) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want ErrExport and the deadline", err)
	}
	close(sink.release)
}

func TestOptionsLimits(t *testing.T) {
	for _, o := range []Options{{Queue: -1}, {Queue: MaxQueue + 1}, {Timeout: -time.Second}} {
		if _, err := New(o); !errors.Is(err, ErrExport) {
			t.Errorf("New(%+v): %v, want ErrExport", o, err)
		}
	}
	e, err := New(Options{Queue: MaxQueue})
	if err != nil {
		t.Fatalf("queue %d: %v", MaxQueue, err)
	}
	if len(e.RunID()) != 12 {
		t.Errorf("default run ID %q: want 12 hex digits", e.RunID())
	}
	_ = e.Close(context.Background(), nil)
}

// atSink records the time of every batch.
type atSink struct{ at []time.Time }

func (*atSink) Name() string { return "at" }
func (s *atSink) Send(_ context.Context, b *Batch) error {
	s.at = append(s.at, b.At)
	return nil
}

// TestBatchTimesIncrease: a final result that ends before the last live
// snapshot's time (the engine took one just after the last request) is
// stamped after it, or Prometheus refuses the final write as out of order.
func TestBatchTimesIncrease(t *testing.T) {
	sink := &atSink{}
	e, err := New(Options{}, sink)
	if err != nil {
		t.Fatal(err)
	}
	live := snapshot(10)
	final := snapshot(11)
	final.End = live.End.Add(-time.Microsecond)
	e.Offer(live)
	if err := e.Close(context.Background(), final); err != nil {
		t.Fatal(err)
	}
	if len(sink.at) != 2 || !sink.at[1].After(sink.at[0]) || sink.at[1].Sub(sink.at[0]) != time.Millisecond {
		t.Errorf("batch times %v: want the final 1 ms after the live one", sink.at)
	}
	// A final that ends later than the snapshot but within its millisecond
	// goes in the next one: remote write's timestamps are milliseconds, and
	// Prometheus answered the second of two in one ms "duplicate sample for
	// timestamp".
	sink = &atSink{}
	if e, err = New(Options{}, sink); err != nil {
		t.Fatal(err)
	}
	live.End = live.End.Add(100 * time.Microsecond)
	final.End = live.End.Add(500 * time.Microsecond)
	e.Offer(live)
	if err := e.Close(context.Background(), final); err != nil {
		t.Fatal(err)
	}
	if len(sink.at) != 2 || sink.at[1].UnixMilli() != sink.at[0].UnixMilli()+1 {
		t.Errorf("batch times %v: want the final in the millisecond after the live one", sink.at)
	}
}
