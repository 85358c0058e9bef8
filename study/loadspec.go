package study

import (
	"context"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/spec"
	"github.com/wirebench/wirebench/results"
)

// LoadSpec is a cell's client: load options and one scenario, either a
// reference-API scenario or raw mode (one request repeated, against any
// HTTP server), as the CLI's (load/spec). URLs and headers are templates
// ({port}, ...). Options.Duration 0 (and no Requests) means the study's
// measured duration; warm-up comes from the study.
type LoadSpec = spec.Client

// newClient makes a fresh client for one run with the trial's ports.
func newClient(l LoadSpec, v vars) (*spec.Made, error) {
	c := l
	switch {
	case l.Scenario != nil:
		o := *l.Scenario
		o.URL = v.expand(o.URL)
		c.Scenario = &o
	case l.Stream != nil:
		o := *l.Stream
		o.URL, o.GRPC = v.expand(o.URL), v.expand(o.GRPC)
		c.Stream = &o
	case l.Browser != nil:
		o := *l.Browser
		o.URL = v.expand(o.URL)
		c.Browser = &o
	case l.KV != nil:
		o := *l.KV
		o.URL = v.expand(o.URL)
		c.KV = &o
	case l.Flow != nil:
		c.FlowConn.URL = v.expand(c.FlowConn.URL)
	case l.Replay != nil:
		o := *l.Replay
		o.URL = v.expand(o.URL)
		c.Replay = &o
	case l.GRPC != nil:
		o := *l.GRPC
		o.URL, o.Metadata = v.expand(o.URL), v.expandAll(o.Metadata)
		c.GRPC = &o
	case l.Raw != nil:
		o := *l.Raw
		o.URL, o.Header = v.expand(o.URL), v.expandAll(o.Header)
		c.Raw = &o
	}
	return spec.New(context.Background(), c)
}

func templates(l LoadSpec) []string {
	if l.Raw != nil {
		return append([]string{l.Raw.URL}, l.Raw.Header...)
	}
	if l.Stream != nil {
		return []string{l.Stream.URL, l.Stream.GRPC}
	}
	return []string{l.URL()}
}

// describeLoad is the client configuration recorded in the results.
func describeLoad(l LoadSpec) results.CellLoad {
	d := results.CellLoad{Concurrency: l.Concurrency()}
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
