package replay

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/measure"
)

// Record wraps a scenario that sends one fixed request (raw mode) so
// that every request it sends is written to w as wirebench's request
// log: the send time, req, and the status received, kept as keep says
// (no secrets by default). Close flushes and
// closes w (and closes inner if it is an io.Closer). The wrapped VUs run
// one goroutine each (load.PerVU), whatever inner allowed.
func Record(inner load.Scenario, w io.WriteCloser, req reqlog.Request, keep reqlog.Options) *Recorded {
	lw := reqlog.NewWriter(w, keep)
	return &Recorded{Scenario: inner, f: w, w: lw, req: req, stopFlush: lw.FlushEvery(reqlog.FlushInterval)}
}

// Recorded is a scenario whose requests a request log records.
type Recorded struct {
	load.Scenario
	f         io.WriteCloser
	w         *reqlog.Writer
	req       reqlog.Request
	stopFlush func()
}

func (r *Recorded) Driver() load.Driver { return load.PerVU }

func (r *Recorded) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	v, err := r.Scenario.NewVU(ctx, id, wire)
	if err != nil {
		return nil, err
	}
	return &recordedVU{VU: v, r: r}, nil
}

func (r *Recorded) Close() error {
	var err error
	if c, ok := r.Scenario.(io.Closer); ok {
		err = c.Close()
	}
	r.stopFlush()
	return errors.Join(err, r.w.Flush(), r.f.Close())
}

// RecordStats is what the log holds and kept out.
func (r *Recorded) RecordStats() (reqlog.WriterStats, bool) { return r.w.Stats(), true }

type recordedVU struct {
	load.VU
	r *Recorded
}

func (v *recordedVU) Do(ctx context.Context, o *load.Outcome) {
	t0 := time.Now().UnixNano()
	v.VU.Do(ctx, o)
	q := v.r.req
	q.At, q.Status = t0, o.Status
	_ = v.r.w.Write(&q) // a full disk loses the log, not the run
}
