package stream

import (
	"fmt"
	"io"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// The REST kinds over HTTP/3 (Options.Transport h3): the VUs share
// Connections QUIC connections (load/h3's pool, VU i on connection
// i mod n), requests go to the https:// URL, and the bytes by layer are
// the pool's (QUIC, HTTP/3 frames, QPACK, body), the body split further
// into message and envelope (NDJSON newlines, SSE framing) by the same
// line rules as over HTTP/1.1, fed with the DATA payloads as read.

// setupH3 validates the h3 options and makes the pool.
func (s *streamScenario) setupH3() error {
	switch s.o.Transport {
	case "", conn.HTTP1:
		return nil
	case conn.H3:
	default:
		return fmt.Errorf("%w: stream transport %q (want http1 or h3)", load.ErrOptions, s.o.Transport)
	}
	if s.o.NoLayers {
		return fmt.Errorf("%w: --no-layers with a stream kind: its result splits the body by layer", load.ErrOptions)
	}
	switch s.o.Kind {
	case RESTList, NDJSON, SSE:
	default:
		return fmt.Errorf("%w: stream kind %s over h3: only rest-list, ndjson and sse run over HTTP/3", load.ErrOptions, s.o.Kind)
	}
	c, err := conn.New(s.o.Options, conn.Speaks{Transports: []string{conn.H3}})
	if err != nil {
		return err
	}
	s.h3 = c.H3
	return nil
}

// h3Finish closes the pool and puts its bytes and layers into the stream
// section: the body layer is split into message and envelope as the
// client parsed it; a body byte the line parser did not see (none when
// every body is read to its end) is left in Other.
func (s *streamScenario) h3Finish(res *results.Load) (in, out int64) {
	s.h3.Close()
	s.h3.Finish(res) // res.Layers and a warning if they do not add up
	split := *res.Layers
	res.Layers = nil // the stream section carries them, split further
	body := s.layers.In()
	split.In.Other += split.In.Message - body.Message - body.Envelope
	split.In.Message, split.In.Envelope = body.Message, body.Envelope
	s.mu.Lock()
	s.final = &[2]results.Layers{split.In, split.Out}
	s.mu.Unlock()
	res.Stream = s.streamResult()
	return s.h3.Bytes.In.Load(), s.h3.Bytes.Out.Load()
}

// bodyFeed passes what a body reader reads to feed.
type bodyFeed struct {
	io.ReadCloser
	feed func([]byte)
}

func (b bodyFeed) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.feed(p[:n])
	}
	return n, err
}
