package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/export"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/results"
)

// exportFlags are load's flags for live export (export.LiveOptions) and
// for naming requests (docs/export.md).
type exportFlags struct{ o export.LiveOptions }

func (e *exportFlags) register(fs *pflag.FlagSet, f *loadFlags) {
	fs.StringVar(&e.o.RemoteWrite, "prometheus-rw", "", "push the run as it goes to this Prometheus remote-write `URL` (http://host:9090/api/v1/write): latency as native histograms with exemplars, request, failure, byte and CPU counters (docs/export.md)")
	fs.StringVar(&e.o.OTLP, "otlp", "", "push the run as it goes to this OTLP/HTTP metrics `URL` (http://host:4318/v1/metrics): latency as exponential histograms with exemplars, and the counters (docs/export.md)")
	fs.StringVar(&e.o.MetricsAddr, "metrics-addr", "", "serve the run as it goes on http://`address`/metrics for Prometheus to scrape (port 0 picks one; stderr says which)")
	e.o.Every = export.DefaultInterval
	fs.Var(flags.Duration{D: &e.o.Every}, "export-interval", "with --prometheus-rw or --otlp: push every `interval`, and once at the end")
	fs.StringVar(&e.o.RunID, "run-id", "", "with --prometheus-rw or --otlp: the `ID` in every series' run label (default random; give all segments of one run the same)")
	fs.BoolVar(&f.Raw.Traceparent, "traceparent", false, "raw HTTP and the REST scenarios: send a W3C traceparent header with a fresh trace ID per request, so the slowest can be found in the server's logs")
	fs.IntVar(&f.Options.Slowest, "slowest", 0, "keep the `N` slowest requests by name, in --out and the summary (default 10, -1 none)")
}

// check refuses export flags that would do nothing or cannot work.
func (e *exportFlags) check(fs *pflag.FlagSet, f *loadFlags) error {
	if e.o.RemoteWrite == "" && e.o.OTLP == "" && e.o.MetricsAddr == "" {
		for _, name := range []string{"export-interval", "run-id"} {
			if fs.Changed(name) {
				return usagef("--%s applies with --prometheus-rw, --otlp or --metrics-addr", name)
			}
		}
	}
	if f.Raw.Traceparent {
		if strings.HasPrefix(f.Scenario, "kv-") || f.Stream.Kind != "" || f.Browser.Kind != "" {
			return usagef("--traceparent applies to raw HTTP and the reference-API scenarios (REST and gRPC; not kv-*, --stream or --browser) for now")
		}
		f.Ref.Traceparent = true // the reference-API scenarios take it from their own options
	}
	if err := flags.CheckInt("--slowest", int64(f.Options.Slowest), -1, results.MaxSlowest, ""); err != nil {
		return err
	}
	if e.o.Every == 0 { // replay's: no live export
		return nil
	}
	return flags.CheckDuration("--export-interval", e.o.Every, export.MinInterval, export.MaxInterval)
}

// start starts the export, if asked, and hooks it to the run's
// snapshots; nil when there is nothing to export.
func (e *exportFlags) start(o *load.Options, stderr io.Writer) (*export.Live, error) {
	if o.Segment.N > 1 {
		e.o.Segment = o.Segment.String()
	}
	l, err := export.StartLive(e.o)
	if errors.Is(err, export.ErrExport) {
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), export.ErrExport.Error()+": "))
	} else if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	if l == nil {
		return nil, nil
	}
	if u := l.MetricsURL(); u != "" {
		fmt.Fprintf(stderr, "export: metrics on %s\n", u)
	}
	o.Snapshot, o.SnapshotEvery = l.Offer, l.Every
	// The run label first, so the run can be found while it goes.
	fmt.Fprintf(stderr, "export: %s\n", l.Started())
	return l, nil
}

// finishExport pushes the run's result (nil when the run failed) and
// says what the export did.
func finishExport(ctx context.Context, l *export.Live, res *results.Load, stderr io.Writer) {
	if l == nil {
		return
	}
	if line := l.Finish(ctx, res); res != nil {
		fmt.Fprintf(stderr, "export: %s\n", line)
	}
}
