package main

import (
	"context"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	h3qlog "github.com/quic-go/quic-go/http3/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// frameCount is -trace's count of http3's frame events, per direction, as
// load/h3's default bytes-by-layer split takes them: frame headers (and
// whole frames other than HEADERS and DATA), HEADERS payloads (QPACK),
// DATA payloads (body). Written with a bare quic-go client in mind, it
// asks of quic-go what the split asks and does about the same work per
// event, so that a bare client with it costs what the split costs quic-go.
type frameCount struct {
	in, out dirCount
}

type dirCount struct {
	frames, qpack, body atomic.Int64
}

// tracer is the quic.Config.Tracer: one trace per connection.
func (f *frameCount) tracer(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
	return &frameTrace{f: f}
}

type frameTrace struct {
	f         *frameCount
	producers atomic.Int64
}

// AddProducer gives the connection's first producer, quic-go's own (added
// as it is dialed), no recorder: quic-go then builds no packet events.
// The second is http3's client connection.
func (t *frameTrace) AddProducer() qlogwriter.Recorder {
	if t.producers.Add(1) == 1 {
		return nil
	}
	return t
}

func (t *frameTrace) Close() error { return nil }

func (t *frameTrace) RecordEvent(ev qlogwriter.Event) {
	switch e := ev.(type) {
	case h3qlog.FrameParsed:
		t.f.in.add(e.Raw, e.Frame.Frame)
	case h3qlog.FrameCreated:
		t.f.out.add(e.Raw, e.Frame.Frame)
	}
}

func (d *dirCount) add(raw h3qlog.RawInfo, f any) {
	if raw.Length < 0 {
		return
	}
	payload := max(raw.PayloadLength, 0)
	switch f.(type) {
	case h3qlog.HeadersFrame:
		d.qpack.Add(int64(payload))
	case h3qlog.DataFrame:
		d.body.Add(int64(payload))
	default:
		payload = 0
	}
	d.frames.Add(int64(raw.Length - payload))
}
