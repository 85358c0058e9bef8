package study

import (
	"context"
	"io"

	"math"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/flow"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// LoadSpec is a cell's client: load options and one scenario, either a
// reference-API scenario or raw mode (one request repeated, against any
// HTTP server). URLs and headers are templates ({port}, ...).
type LoadSpec struct {
	// Options: concurrency, rate, stages, timeout. Duration 0 (and no
	// Requests) means the study's measured duration; warm-up comes from
	// the study.
	Options load.Options
	// Scenario, if set, drives the reference API; otherwise Raw is used.
	Scenario *scenario.Options
	Raw      *load.RawOptions
	// Stream and Browser, if set, run a stream scenario or the in-browser
	// page instead (built-in studies only; URLs are templates).
	Stream  *stream.Options
	Browser *browser.Options
	// KV, if set, runs a key-value scenario (kv-set, kv-get, kv-mixed)
	// over RESP or HTTP (study kv).
	KV *scenario.KVOptions
	// Flow, if set, runs a flow file's steps (load/flow) against
	// FlowConn's URL; Replay sends a recording (load/replay) at its own
	// schedule.
	Flow     *flow.Flow
	FlowConn flow.Options
	Replay   *replay.Options
	// GRPC, if set, calls one method of any gRPC server (load/grpcany);
	// its descriptors are resolved when each run starts (reflection asks
	// the trial's server).
	GRPC *grpcany.Options
}

// hasLoad reports whether the spec names a client.
func (l LoadSpec) hasLoad() bool {
	return l.Scenario != nil || l.Raw != nil || l.Stream != nil || l.Browser != nil || l.KV != nil || l.Flow != nil || l.Replay != nil || l.GRPC != nil
}

// scenario builds a fresh scenario for one run with the trial's ports.
func (l LoadSpec) scenario(v vars) (load.Scenario, error) {
	if l.Scenario != nil {
		o := *l.Scenario
		o.URL = v.expand(o.URL)
		return scenario.New(o)
	}
	if l.Stream != nil {
		o := *l.Stream
		o.URL, o.GRPC = v.expand(o.URL), v.expand(o.GRPC)
		return stream.New(o)
	}
	if l.Browser != nil {
		o := *l.Browser
		o.URL = v.expand(o.URL)
		return browser.New(o)
	}
	if l.KV != nil {
		o := *l.KV
		o.URL = v.expand(o.URL)
		if o.Workers == 0 {
			o.Workers = l.Options.Concurrency // parallel keys' slices
		}
		return scenario.NewKV(o)
	}
	if l.Flow != nil {
		o := l.FlowConn
		o.URL = v.expand(o.URL)
		return flow.New(l.Flow, o)
	}
	if l.Replay != nil {
		o := *l.Replay
		o.URL = v.expand(o.URL)
		if replay.IsGRPCRecording(o.File) { // calls of a gRPC service, to its host:port
			ro := grpcany.ReplayOptions{File: o.File, Speed: o.Speed, Loop: o.Loop, MaxGap: o.MaxGap}
			ro.Options.Options = o.Options
			ro.Transport = ""
			return grpcany.NewReplay(context.Background(), ro)
		}
		return replay.New(o)
	}
	if l.GRPC != nil {
		o := *l.GRPC
		o.URL, o.Metadata = v.expand(o.URL), v.expandAll(o.Metadata)
		return grpcany.New(context.Background(), o)
	}
	o := *l.Raw
	o.URL, o.Header = v.expand(o.URL), v.expandAll(o.Header)
	return load.NewRaw(o)
}

// url is the load's target as written (a template).
func (l LoadSpec) url() string {
	if l.Scenario != nil {
		return l.Scenario.URL
	}
	if l.Raw != nil {
		return l.Raw.URL
	}
	if l.Stream != nil {
		return l.Stream.URL
	}
	if l.Browser != nil {
		return l.Browser.URL
	}
	if l.KV != nil {
		return l.KV.URL
	}
	if l.Flow != nil {
		return l.FlowConn.URL
	}
	if l.Replay != nil {
		return l.Replay.URL
	}
	if l.GRPC != nil {
		return l.GRPC.URL
	}
	return ""
}

func (l LoadSpec) templates() []string {
	if l.Raw != nil {
		return append([]string{l.Raw.URL}, l.Raw.Header...)
	}
	if l.Stream != nil {
		return []string{l.Stream.URL, l.Stream.GRPC}
	}
	return []string{l.url()}
}

// describe is the client configuration recorded in the results.
func (l LoadSpec) describe() results.CellLoad {
	d := results.CellLoad{Concurrency: l.concurrency()}
	if s := l.Scenario; s != nil {
		d.Scenario, d.Format, d.Transport = s.Name, s.Format, transportName(s.Transport)
		d.Connections, d.NoKeepAlive, d.Compression = s.Connections, s.NoKeepAlive, s.Compression
	} else if st := l.Stream; st != nil {
		d.Scenario, d.Kind, d.Messages = "stream", st.Kind, st.Messages
		if st.Transport != "" {
			d.Transport, d.Connections = st.Transport, st.Connections
		}
	} else if b := l.Browser; b != nil {
		d.Scenario, d.Kind, d.Batch, d.InBrowser = "browser", b.Kind, b.Batch, true
	} else if f := l.Flow; f != nil {
		d.Scenario, d.Flow, d.Steps, d.URL, d.Transport = "flow", f.File, len(f.Steps), l.FlowConn.URL, transportName(l.FlowConn.Transport)
		d.Format = l.FlowConn.Format
		if f.Data != nil {
			d.DataFile, d.DataRows = f.Data.File, len(f.Data.Rows)
		}
	} else if r := l.Replay; r != nil {
		d.Scenario, d.Replay, d.URL, d.Transport = "replay", r.File, r.URL, transportName(r.Transport)
		d.Speed, d.Loop, d.AsFormat = r.Speed, r.Loop, r.AsFormat
	} else if g := l.GRPC; g != nil {
		d.Scenario, d.GRPC, d.URL, d.Protocol = "grpc "+g.Method, g.Method, g.URL, g.Protocol
		d.Client, d.Proto, d.Protoset, d.Data, d.DataFile, d.Expect = g.Client, g.Protos, g.Protoset, g.Data, g.DataFile, g.Expect
	} else if k := l.KV; k != nil {
		d.Scenario, d.Protocol, d.Keys, d.ValueSize, d.Pipeline = k.Name, k.Protocol, k.Keys, k.ValueSize, k.Pipeline
		kvDescribe(&d, k) // kv_dist.go
	} else if r := l.Raw; r != nil {
		d.Scenario, d.URL, d.Method, d.Transport = "raw", r.URL, method(r.Method), transportName(r.Transport)
		d.Headers, d.BodyBytes, d.ExpectStatus, d.ExpectBodyContains = r.Header, len(r.Body), r.ExpectStatus, r.ExpectBodyContains
		d.NoKeepAlive = r.NoKeepAlive
	}
	o := l.Options
	d.Rate, d.Requests = o.Rate, o.Requests
	if len(o.Stages) > 0 {
		d.Stages, d.Open = o.Stages, o.Open
	}
	if o.Timeout > 0 {
		d.Timeout = o.Timeout.String()
	}
	return d
}

// concurrency is the number of workers the load engine will use: the
// option, or its default (10, or the largest target of a closed-loop ramp).
func (l LoadSpec) concurrency() int {
	o := l.Options
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

func method(m string) string {
	if m == "" {
		return "GET"
	}
	return m
}

func transportName(t string) string {
	if t == "" {
		return conn.HTTP1
	}
	return t
}

// closeScenario releases a scenario's shared connections, if it has any.
func closeScenario(sc load.Scenario) {
	if c, ok := sc.(io.Closer); ok {
		_ = c.Close()
	}
}
