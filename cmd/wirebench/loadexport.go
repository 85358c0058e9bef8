package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/export"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// Live export's interval: the engine looks at the run once a second, so
// a shorter one would not be kept; an hour is the longest a series can
// go quiet before Prometheus marks it stale (5 min) many times over.
const (
	defaultExportInterval = 10 * time.Second
	minExportInterval     = time.Second
	maxExportInterval     = time.Hour
	// exportFlushTimeout bounds the final push after the run.
	exportFlushTimeout = 15 * time.Second
)

// exportFlags are load's flags for live export and for naming requests
// (docs/export.md): --prometheus-rw, --otlp, --export-interval,
// --run-id, --traceparent, --slowest.
type exportFlags struct {
	promRW, otlp, metricsAddr string
	every                     time.Duration
	runID                     string
}

// liveExport is a started export: the exporter and, with --metrics-addr,
// the server of its scrape endpoint.
type liveExport struct {
	exp *export.Exporter
	srv *http.Server
}

func (e *exportFlags) register(fs *pflag.FlagSet, f *loadFlags) {
	fs.StringVar(&e.promRW, "prometheus-rw", "", "push the run as it goes to this Prometheus remote-write `URL` (http://host:9090/api/v1/write): latency as native histograms with exemplars, request, failure, byte and CPU counters (docs/export.md)")
	fs.StringVar(&e.otlp, "otlp", "", "push the run as it goes to this OTLP/HTTP metrics `URL` (http://host:4318/v1/metrics): latency as exponential histograms with exemplars, and the counters (docs/export.md)")
	fs.StringVar(&e.metricsAddr, "metrics-addr", "", "serve the run as it goes on http://`address`/metrics for Prometheus to scrape (port 0 picks one; stderr says which)")
	e.every = defaultExportInterval
	fs.Var(durationFlag{&e.every}, "export-interval", "with --prometheus-rw or --otlp: push every `interval`, and once at the end")
	fs.StringVar(&e.runID, "run-id", "", "with --prometheus-rw or --otlp: the `ID` in every series' run label (default random; give all segments of one run the same)")
	fs.BoolVar(&f.raw.Traceparent, "traceparent", false, "raw HTTP and the REST scenarios: send a W3C traceparent header with a fresh trace ID per request, so the slowest can be found in the server's logs")
	fs.IntVar(&f.o.Slowest, "slowest", 0, "keep the `N` slowest requests by name, in --out and the summary (default 10, -1 none)")
}

// check refuses export flags that would do nothing or cannot work.
func (e *exportFlags) check(fs *pflag.FlagSet, f *loadFlags) error {
	if e.promRW == "" && e.otlp == "" && e.metricsAddr == "" {
		for _, name := range []string{"export-interval", "run-id"} {
			if fs.Changed(name) {
				return loadUsagef("--%s applies with --prometheus-rw, --otlp or --metrics-addr", name)
			}
		}
	}
	if f.raw.Traceparent {
		switch {
		case strings.HasPrefix(f.scenario, "kv-") || f.stream.Kind != "" || f.browser.Kind != "":
			return loadUsagef("--traceparent applies to raw HTTP and the reference-API scenarios (REST and gRPC; not kv-*, --stream or --browser) for now")
		}
		f.sc.Traceparent = true // the reference-API scenarios take it from their own options
	}
	if err := checkInt("--slowest", int64(f.o.Slowest), -1, results.MaxSlowest, ""); err != nil {
		return err
	}
	return checkDuration("--export-interval", e.every, minExportInterval, maxExportInterval)
}

// start starts the exporter, if asked, and hooks it to the run's
// snapshots; nil when there is nothing to export.
func (e *exportFlags) start(o *load.Options, stderr io.Writer) (*liveExport, error) {
	var sinks []export.Sink
	if e.promRW != "" {
		rw, err := export.NewRemoteWrite(e.promRW)
		if err != nil {
			return nil, loadUsagef("--prometheus-rw: %v", err)
		}
		sinks = append(sinks, rw)
	}
	if e.otlp != "" {
		ot, err := export.NewOTLP(e.otlp)
		if err != nil {
			return nil, loadUsagef("--otlp: %v", err)
		}
		sinks = append(sinks, ot)
	}
	var srv *http.Server
	if e.metricsAddr != "" {
		ln, err := net.Listen("tcp", e.metricsAddr)
		if err != nil {
			return nil, fmt.Errorf("--metrics-addr: %w", err)
		}
		sc := &export.Scrape{}
		mux := http.NewServeMux()
		mux.Handle("/metrics", sc)
		srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }() // ends with Close at the run's end
		fmt.Fprintf(stderr, "export: metrics on http://%s/metrics\n", ln.Addr())
		sinks = append(sinks, sc)
	}
	if len(sinks) == 0 {
		return nil, nil
	}
	eo := export.Options{RunID: e.runID}
	if o.Segment.N > 1 {
		eo.Segment = o.Segment.String()
	}
	exp, err := export.New(eo, sinks...)
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		return nil, err
	}
	o.Snapshot, o.SnapshotEvery = exp.Offer, e.every
	// The run label first, so the run can be found while it goes.
	fmt.Fprintf(stderr, "export: run=%q to %s every %v\n", exp.RunID(), exp.Sinks(), e.every)
	return &liveExport{exp: exp, srv: srv}, nil
}

// finishExport pushes the run's result (nil when the run failed), waits
// for the pushes and closes the scrape endpoint. A failed export does not
// fail the run — its figures stand — but is a warning in the summary and
// in --out.
func finishExport(ctx context.Context, le *liveExport, res *results.Load, stderr io.Writer) {
	if le == nil {
		return
	}
	exp := le.exp
	if le.srv != nil {
		defer le.srv.Close()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exportFlushTimeout)
	defer cancel()
	err := exp.Close(ctx, res)
	st := exp.Stats()
	if res == nil {
		return
	}
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	if st.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("export: %d snapshots dropped (the receiver was slower than --export-interval)", st.Dropped))
	}
	fmt.Fprintf(stderr, "export: %d pushes to %s, run=%q, %d failed, %d dropped\n", st.Sent, exp.Sinks(), exp.RunID(), st.Failed, st.Dropped)
}
