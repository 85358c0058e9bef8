// Package record writes the unary calls a grpc-go server handles as a
// recording of gRPC calls (load/replay's FormatGRPC: a JSON line per call
// with its time, method, request as base64 protobuf, metadata and status),
// which `wirebench replay FILE --target host:port` sends again at its
// recorded times. A user's own service records its traffic with one
// interceptor:
//
//	rec := record.New(f)
//	defer rec.Close()
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(rec.Unary))
//
// Metadata that a replay sets itself or that is the connection's
// (user-agent, content-type, te, grpc-*, :pseudo) is left out; Keep
// filters the rest (by default every other key, secrets included: keep
// the file private or drop them with Keep).
package record

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Recorder writes calls; safe for concurrent use.
type Recorder struct {
	// Keep reports whether a metadata key (lower-case) is written; nil
	// keeps every key but those left out always.
	Keep func(key string) bool

	mu  sync.Mutex
	w   *bufio.Writer
	c   io.Closer
	err error
}

// New records into w (closed by Close when it is an io.Closer).
func New(w io.Writer) *Recorder {
	r := &Recorder{w: bufio.NewWriterSize(w, 64<<10)}
	r.c, _ = w.(io.Closer)
	return r
}

// line is a call as FormatGRPC has it.
type line struct {
	T    int64             `json:"t"`
	GRPC string            `json:"grpc"`
	Bin  string            `json:"bin"`
	MD   map[string]string `json:"md,omitempty"`
	Code string            `json:"code,omitempty"`
}

// Unary is a grpc.UnaryServerInterceptor that records each call after
// its handler returns (the time is when it arrived).
func (r *Recorder) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	at := time.Now()
	resp, err := h(ctx, req)
	m, ok := req.(proto.Message)
	if !ok {
		return resp, err
	}
	b, merr := proto.Marshal(m)
	if merr != nil {
		return resp, err
	}
	l := line{T: at.UnixNano(), GRPC: strings.TrimPrefix(info.FullMethod, "/"), Bin: base64.StdEncoding.EncodeToString(b)}
	if err != nil {
		l.Code = status.Code(err).String()
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for k, vs := range md {
			if len(vs) == 0 || leftOut(k) || r.Keep != nil && !r.Keep(k) {
				continue
			}
			if l.MD == nil {
				l.MD = map[string]string{}
			}
			l.MD[k] = vs[0]
		}
	}
	r.write(&l)
	return resp, err
}

func leftOut(k string) bool {
	switch k {
	case "user-agent", "content-type", "te", "authority":
		return true
	}
	return strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-")
}

func (r *Recorder) write(l *line) {
	b, err := json.Marshal(l)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if err == nil {
		_, err = r.w.Write(append(b, '\n'))
	}
	r.err = err
}

// Close flushes the recording and closes its writer; the first error
// writing it, if any.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	if ferr := r.w.Flush(); err == nil {
		err = ferr
	}
	if r.c != nil {
		if cerr := r.c.Close(); err == nil {
			err = cerr
		}
		r.c = nil
	}
	if r.err == nil {
		r.err = io.ErrClosedPipe // nothing more is written
	}
	return err
}
