package export

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Live export's interval: the engine looks at the run once a second, so
// a shorter one would not be kept; an hour is the longest a series can
// go quiet before Prometheus marks it stale (5 min) many times over.
const (
	DefaultInterval = 10 * time.Second
	MinInterval     = time.Second
	MaxInterval     = time.Hour
	// FlushTimeout bounds the final push after the run.
	FlushTimeout = 15 * time.Second
)

// ErrLiveOptions reports live-export options that cannot work (a URL of
// the wrong shape, an interval out of range).
var ErrLiveOptions = errors.New("invalid export options")

// LiveOptions are one load run's live export: where its snapshots go.
type LiveOptions struct {
	RemoteWrite string // a Prometheus remote-write URL
	OTLP        string // an OTLP/HTTP metrics URL
	// MetricsAddr, if set, serves the run on http://MetricsAddr/metrics
	// for Prometheus to scrape (port 0 picks one: Live.MetricsURL).
	MetricsAddr string
	Every       time.Duration // between pushes (0: DefaultInterval)
	RunID       string        // Options.RunID
	Segment     string        // Options.Segment
}

// Live is a started live export: the exporter and, with MetricsAddr, the
// server of its scrape endpoint. Hook Offer and Every into the load
// engine's Snapshot and SnapshotEvery; Finish after the run.
type Live struct {
	exp   *Exporter
	srv   *http.Server
	addr  net.Addr
	Every time.Duration
}

// Check checks o without starting anything.
func (o LiveOptions) Check() error {
	if o.Every != 0 && (o.Every < MinInterval || o.Every > MaxInterval) {
		return fmt.Errorf("%w: interval %v: want %v..%v", ErrLiveOptions, o.Every, MinInterval, MaxInterval)
	}
	return nil
}

// StartLive starts o's sinks; nil (and no error) when o names none.
// Sinks' URLs of the wrong shape are ErrExport; a scrape address that
// cannot be listened on is the listener's error.
func StartLive(o LiveOptions) (*Live, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	var sinks []Sink
	if o.RemoteWrite != "" {
		rw, err := NewRemoteWrite(o.RemoteWrite)
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, rw)
	}
	if o.OTLP != "" {
		ot, err := NewOTLP(o.OTLP)
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, ot)
	}
	l := &Live{Every: o.Every}
	if l.Every == 0 {
		l.Every = DefaultInterval
	}
	if o.MetricsAddr != "" {
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return nil, err
		}
		sc := &Scrape{}
		mux := http.NewServeMux()
		mux.Handle("/metrics", sc)
		l.srv, l.addr = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln.Addr()
		go func() { _ = l.srv.Serve(ln) }() // ends with Close in Finish
		sinks = append(sinks, sc)
	}
	if len(sinks) == 0 {
		return nil, nil
	}
	exp, err := New(Options{RunID: o.RunID, Segment: o.Segment}, sinks...)
	if err != nil {
		if l.srv != nil {
			l.srv.Close()
		}
		return nil, err
	}
	l.exp = exp
	return l, nil
}

// MetricsURL is the scrape endpoint's URL, "" without one.
func (l *Live) MetricsURL() string {
	if l.addr == nil {
		return ""
	}
	return "http://" + l.addr.String() + "/metrics"
}

// Offer queues a snapshot of the run (the engine's Snapshot hook).
func (l *Live) Offer(r *results.Load) { l.exp.Offer(r) }

// Started says what runs: the run label and where it goes.
func (l *Live) Started() string {
	return fmt.Sprintf("run=%q to %s every %v", l.exp.RunID(), l.exp.Sinks(), l.Every)
}

// Finish pushes the run's result (nil when the run failed), waits for
// the pushes at most FlushTimeout, and closes the scrape endpoint. A
// failed export does not fail the run — its figures stand — but is a
// warning in res. It returns what the export did, for a summary.
func (l *Live) Finish(ctx context.Context, res *results.Load) string {
	if l.srv != nil {
		defer l.srv.Close()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FlushTimeout)
	defer cancel()
	err := l.exp.Close(ctx, res)
	st := l.exp.Stats()
	if res != nil && err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	if res != nil && st.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("export: %d snapshots dropped (the receiver was slower than the export interval)", st.Dropped))
	}
	return fmt.Sprintf("%d pushes to %s, run=%q, %d failed, %d dropped", st.Sent, l.exp.Sinks(), l.exp.RunID(), st.Failed, st.Dropped)
}
