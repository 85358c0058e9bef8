package export

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/results"
)

// ErrExport is wrapped by every error a Sink returns.
var ErrExport = errors.New("export")

// Sink sends the run so far somewhere. Send is called from one goroutine
// at a time, with metrics of cumulative values.
type Sink interface {
	// Name names the sink in errors and summaries ("prometheus remote write").
	Name() string
	Send(ctx context.Context, b *Batch) error
}

// Batch is one snapshot's metrics, with the labels of the run.
type Batch struct {
	At      time.Time // when the snapshot was taken
	Start   time.Time // the run's start (OTLP's start time of cumulative points)
	Labels  []Label   // run, segment, cell: on every series
	metrics []metric
}

// Options configure an Exporter. The zero value exports with no labels
// but a random run ID, a queue of DefaultQueue and DefaultTimeout.
type Options struct {
	// RunID labels every series (label "run"); the segments of one
	// distributed run should share it. Empty: a random one (Exporter.RunID).
	RunID string
	// Segment ("2/4") and Cell (a study's cell) label every series when set.
	Segment string
	Cell    string
	// Queue is how many snapshots may wait to be sent (DefaultQueue);
	// past it a snapshot is dropped and counted.
	Queue int
	// Timeout bounds one send to one sink (DefaultTimeout).
	Timeout time.Duration
}

// Defaults and limits of Options.
const (
	DefaultQueue   = 2
	MaxQueue       = 100
	DefaultTimeout = 5 * time.Second
)

// Stats count what an Exporter did.
type Stats struct {
	Sent     int64  // snapshots sent to every sink (a failed sink still counts the send)
	Dropped  int64  // snapshots dropped because the queue was full
	Failed   int64  // sends that failed, all sinks
	LastErr  error  // the last failure, if any
	LastSink string // the sink that failed last
}

// Exporter sends snapshots to its sinks from a goroutine of its own, so
// that Offer never blocks the run.
type Exporter struct {
	o       Options
	sinks   []Sink
	queue   chan *results.Load
	done    chan struct{}
	dropped atomic.Int64
	mu      sync.Mutex
	stats   Stats
	closed  bool
	lastAt  time.Time // the newest batch's time; only the sending goroutine uses it
}

// New starts an exporter; Close stops it.
func New(o Options, sinks ...Sink) (*Exporter, error) {
	switch {
	case o.Queue < 0 || o.Queue > MaxQueue:
		return nil, fmt.Errorf("%w: queue %d: want 0..%d", ErrExport, o.Queue, MaxQueue)
	case o.Timeout < 0:
		return nil, fmt.Errorf("%w: timeout %v: want > 0", ErrExport, o.Timeout)
	}
	if o.Queue == 0 {
		o.Queue = DefaultQueue
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	e := &Exporter{o: o, sinks: sinks, queue: make(chan *results.Load, o.Queue), done: make(chan struct{})}
	go e.loop()
	return e, nil
}

// Sinks names the sinks, for a summary: "prometheus remote write, otlp".
func (e *Exporter) Sinks() string {
	names := make([]string, len(e.sinks))
	for i, s := range e.sinks {
		names[i] = s.Name()
	}
	return strings.Join(names, ", ")
}

// RunID is the run label in effect.
func (e *Exporter) RunID() string { return e.o.RunID }

// Offer queues a snapshot of the run so far. It never blocks: when the
// queue is full the snapshot is dropped and counted.
func (e *Exporter) Offer(l *results.Load) {
	select {
	case e.queue <- l:
	default:
		e.dropped.Add(1)
	}
}

func (e *Exporter) loop() {
	defer close(e.done)
	for l := range e.queue {
		e.send(context.Background(), l)
	}
}

func (e *Exporter) send(ctx context.Context, l *results.Load) {
	b := e.batch(l)
	for _, s := range e.sinks {
		sctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
		err := s.Send(sctx, b)
		cancel()
		e.mu.Lock()
		if err != nil {
			e.stats.Failed++
			e.stats.LastErr, e.stats.LastSink = err, s.Name()
		}
		e.mu.Unlock()
	}
	e.mu.Lock()
	e.stats.Sent++
	e.mu.Unlock()
}

func (e *Exporter) batch(l *results.Load) *Batch {
	b := &Batch{At: l.End, Start: l.Start, Labels: []Label{{"run", e.o.RunID}}, metrics: collect(l, e.dropped.Load())}
	if b.At.IsZero() {
		b.At = time.Now()
	}
	// Receivers refuse a sample not newer than one they have, to the
	// millisecond (remote write's timestamps: two batches within one ms
	// were "duplicate sample for timestamp", CI 2026-11-30). The run's
	// final result ends when its last request did, which a live snapshot
	// taken just before the engine stopped looking may follow or share a
	// millisecond with: the final is stamped in the millisecond after it
	// (its totals include the snapshot's).
	if b.At.UnixMilli() <= e.lastAt.UnixMilli() {
		b.At = time.UnixMilli(e.lastAt.UnixMilli() + 1)
	}
	e.lastAt = b.At
	if e.o.Segment != "" {
		b.Labels = append(b.Labels, Label{"segment", e.o.Segment})
	}
	if e.o.Cell != "" {
		b.Labels = append(b.Labels, Label{"cell", e.o.Cell})
	}
	return b
}

// Close sends final (the run's result, if not nil) after what is queued,
// waits for the sends, and returns the last error of a failed send, if
// any. ctx bounds the wait.
func (e *Exporter) Close(ctx context.Context, final *results.Load) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	close(e.queue)
	select {
	case <-e.done:
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for queued snapshots: %w", ErrExport, context.Cause(ctx))
	}
	if final != nil {
		e.send(ctx, final)
	}
	st := e.Stats()
	if err := st.LastErr; err != nil {
		if !errors.Is(err, ErrExport) {
			err = fmt.Errorf("%w: %w", ErrExport, err)
		}
		return fmt.Errorf("%w (%d of %d sends failed, the last to %s)", err, st.Failed, st.Sent*int64(len(e.sinks)), st.LastSink)
	}
	return nil
}

// Stats returns what the exporter did so far.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Dropped = e.dropped.Load()
	return s
}

// post sends body to url with headers, and wants a 2xx answer.
func post(ctx context.Context, c *http.Client, url string, body []byte, header map[string]string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytesReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrExport, err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrExport, err)
	}
	defer resp.Body.Close()
	msg, _ := readSome(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: %s answered %s: %s", ErrExport, url, resp.Status, msg)
	}
	return nil
}
