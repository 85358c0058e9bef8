// Package spec turns a run's client, written as plain options (the
// engine's options and one scenario's), into the scenario to run, the
// engine options it runs under, and the record of them in a result. It is
// the one mapping from options to a client that wirebench load and
// capacity and the study's cells share, so a library caller gets the same
// client, the same defaults and the same record as the CLI.
package spec

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/flow"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// Client is a run's client: load options and one scenario, the first set
// of Scenario, Stream, Browser, KV, Flow, Replay and GRPC, else raw mode
// (Raw: one request repeated, against any HTTP server).
type Client struct {
	// Options: concurrency, rate, stages, timeout.
	Options load.Options
	// Scenario, if set, drives the reference API; otherwise Raw is used.
	Scenario *scenario.Options
	Raw      *load.RawOptions
	// Stream and Browser, if set, run a stream scenario or the in-browser
	// page instead.
	Stream  *stream.Options
	Browser *browser.Options
	// KV, if set, runs a key-value scenario (kv-set, kv-get, kv-mixed)
	// over RESP or HTTP; with no Protocol, RESP for a redis:// URL and
	// wirebench's /kv over HTTP otherwise. Workers 0 is Concurrency.
	KV *scenario.KVOptions
	// Flow, if set, runs a flow file's steps (load/flow) against
	// FlowConn's URL; Replay sends a recording (load/replay) at its own
	// schedule: a recording of gRPC calls through load/grpcany, over
	// gRPC's own transport, with GRPC's descriptors (Protos, ImportPaths,
	// Protoset) if set, and without Record (an HTTP request log).
	Flow     *flow.Flow
	FlowConn flow.Options
	Replay   *replay.Options
	// GRPC, if set (and Replay not), calls one method of any gRPC server
	// (load/grpcany).
	GRPC *grpcany.Options
	// Record, with Raw, writes every request sent as wirebench's request
	// log (replay's input); Made.Close flushes and closes it.
	Record *Record
}

// Record is raw mode's request log: Create opens it once the scenario is
// made (nothing is created for options that cannot run), Path names it in
// the result, Keep says what it keeps (no secrets by default).
type Record struct {
	Create func() (io.WriteCloser, error)
	Path   string
	Keep   reqlog.Options
}

// Empty reports whether c names no client.
func (c Client) Empty() bool {
	return c.Scenario == nil && c.Raw == nil && c.Stream == nil && c.Browser == nil && c.KV == nil && c.Flow == nil && c.Replay == nil && c.GRPC == nil
}

// Made is a client made: its scenario, the engine's options for it and
// what made it, for the result. Close it after its last run.
type Made struct {
	Scenario load.Scenario
	// Options are the Client's, with a replay's recording as the
	// open-loop schedule (until the recording ends, without a duration or
	// a count).
	Options load.Options
	// Config names the scenario and the options it was made from,
	// defaults and, with --transport auto, the transport as given.
	Config results.Config

	// What the scenario adds beside its result, known when it is made:
	// a replay's schedule (its Stats) and whether it loops, and the
	// request log it writes.
	replay func() replay.Stats
	loop   bool
	record func() (reqlog.WriterStats, bool)
}

// URL is the client's target as given.
func (c Client) URL() string {
	switch {
	case c.Scenario != nil:
		return c.Scenario.URL
	case c.Stream != nil:
		return c.Stream.URL
	case c.Browser != nil:
		return c.Browser.URL
	case c.KV != nil:
		return c.KV.URL
	case c.Flow != nil:
		return c.FlowConn.URL
	case c.Replay != nil:
		return c.Replay.URL
	case c.GRPC != nil:
		return c.GRPC.URL
	case c.Raw != nil:
		return c.Raw.URL
	}
	return ""
}

// Concurrency is the number of workers the load engine will use: the
// option, or its default (10, or the largest target of a closed-loop ramp).
func (c Client) Concurrency() int {
	o := c.Options
	if o.Concurrency > 0 {
		return o.Concurrency
	}
	if len(o.Stages) > 0 && o.Rate == 0 && !o.Open {
		m := o.StartTarget
		for _, st := range o.Stages {
			m = max(m, st.Target)
		}
		return int(math.Ceil(m))
	}
	return 10
}

// IsGRPCReplay reports whether o is a recording of gRPC calls
// (replay.FormatGRPC, given or found in the file).
func IsGRPCReplay(o *replay.Options) bool {
	return o.Format == replay.FormatGRPC || o.Format == "" && replay.IsGRPCRecording(o.File)
}

// New makes c's scenario. Its errors are the scenario packages' own
// (load.ErrOptions and the like for options that cannot run); ctx bounds
// what a scenario does while it is made (a gRPC server's reflection).
func New(ctx context.Context, c Client) (*Made, error) {
	m := &Made{Options: c.Options}
	var err error
	switch {
	case c.Scenario != nil:
		o := *c.Scenario
		o.Segment, o.WholeVUs = c.Options.Segment, c.Concurrency() // records' keys and checks
		if m.Scenario, err = scenario.New(o); err != nil {
			return nil, err
		}
		m.Config = results.Config{Scenario: o.Name, ScenarioOptions: results.NewClientOptions(o)}
	case c.Stream != nil:
		if m.Scenario, err = stream.New(*c.Stream); err != nil {
			return nil, err
		}
		m.Config = results.Config{Scenario: "stream " + c.Stream.Kind, Stream: results.NewClientOptions(*c.Stream)}
	case c.Browser != nil:
		if m.Scenario, err = browser.New(*c.Browser); err != nil {
			return nil, err
		}
		m.Config = results.Config{Scenario: "browser " + c.Browser.Kind, Browser: results.NewClientOptions(*c.Browser)}
	case c.KV != nil:
		o := *c.KV
		if o.Protocol == "" && !strings.HasPrefix(o.URL, "redis://") {
			o.Protocol = scenario.ProtocolHTTPRaw
		}
		if o.Workers == 0 {
			o.Workers = c.Options.Concurrency // parallel keys' slices
		}
		sc, err := scenario.NewKV(o)
		if err != nil {
			return nil, err
		}
		m.Scenario = sc
		m.Config = results.Config{Scenario: o.Name, KVOptions: results.NewClientOptions(sc.Options())} // with the defaults
	case c.Flow != nil:
		sc, err := flow.New(c.Flow, c.FlowConn)
		if err != nil {
			return nil, err
		}
		m.Scenario = sc
		f := c.Flow
		m.Config = results.Config{Scenario: "flow", Flow: f.File, FlowName: f.Name, Steps: len(f.Steps), URL: c.FlowConn.URL}
		if f.Data != nil {
			m.Config.DataFile, m.Config.DataRows = f.Data.File, len(f.Data.Rows)
		}
		m.Config.Transport, _ = sc.Transport() // auto's choice: in the result's conn
	case c.Replay != nil && IsGRPCReplay(c.Replay):
		o := c.Replay
		ro := grpcany.ReplayOptions{File: o.File, Speed: o.Speed, Loop: o.Loop, MaxGap: o.MaxGap}
		if c.GRPC != nil {
			ro.Options = *c.GRPC // where the descriptors come from
		}
		ro.Options.Options = o.Options
		ro.Transport = "" // gRPC's own
		ro.URL = strings.TrimPrefix(ro.URL, "grpc://")
		sc, err := grpcany.NewReplay(ctx, ro)
		if err != nil {
			return nil, err
		}
		m.Scenario, m.replay, m.loop = sc, sc.Stats, o.Loop
		m.schedule(sc.Pacer())
		m.Config = results.Config{Scenario: "replay grpc", Replay: results.NewClientOptions(ro)}
	case c.Replay != nil:
		sc, err := replay.New(*c.Replay)
		if err != nil {
			if c.Replay.Record != nil {
				c.Replay.Record.Close() // no scenario owns it
			}
			return nil, err
		}
		m.Scenario, m.replay, m.loop, m.record = sc, sc.Stats, c.Replay.Loop, sc.RecordStats
		m.schedule(sc.Pacer())
		o := *c.Replay
		o.Record = nil // not data
		m.Config = results.Config{Scenario: "replay", Replay: results.NewClientOptions(o)}
	case c.GRPC != nil:
		o := *c.GRPC
		o.URL = strings.TrimPrefix(o.URL, "grpc://")
		sc, err := grpcany.New(ctx, o)
		if err != nil {
			return nil, err
		}
		m.Scenario = sc
		m.Config = results.Config{Scenario: "grpc " + sc.Method().Name(), GRPC: results.NewClientOptions(sc.Options()), Kind: sc.Method().Kind()}
	case c.Raw != nil:
		sc, err := load.NewRaw(*c.Raw)
		if err != nil {
			return nil, err
		}
		m.Scenario = sc
		m.Config = results.Config{Scenario: "raw", Raw: results.NewClientOptions(sc.Options()), BodyBytes: len(c.Raw.Body)}
		if r := c.Record; r != nil {
			w, err := r.Create()
			if err != nil {
				m.Close()
				return nil, fmt.Errorf("--record: %w", err)
			}
			rec := replay.Record(sc, w, rawRequest(c.Raw), r.Keep)
			m.Scenario, m.Config.Record, m.record = rec, r.Path, rec.RecordStats
		}
	default:
		return nil, fmt.Errorf("%w: no client: set one of Scenario, Raw, Stream, Browser, KV, Flow, Replay, GRPC", load.ErrOptions)
	}
	return m, nil
}

// rawRequest is raw mode's request as a request log writes it.
func rawRequest(o *load.RawOptions) reqlog.Request {
	q := reqlog.Request{Method: o.Method, Target: o.URL, Body: o.Body}
	for _, h := range o.Header {
		if k, v, ok := strings.Cut(h, ":"); ok {
			q.Header = append(q.Header, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	return q
}

// schedule makes a recording the run's open-loop schedule: it sets the
// times, so no rate or stages, and it runs until it ends unless the
// options bound it.
func (m *Made) schedule(p load.Pacer) {
	o := &m.Options
	o.Open, o.Rate, o.Stages, o.Pacer = true, 0, nil, p
	if o.Duration == 0 && o.Requests == 0 {
		o.Duration = load.MaxDuration
	}
}

// Close releases what the scenario holds beyond its VUs: shared
// connections, a request log it writes (whose error says it could not be
// written). Scenarios that hold nothing have no Close.
func (m *Made) Close() error {
	if c, ok := m.Scenario.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
