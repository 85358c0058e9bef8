// Package record writes the calls a grpc-go server handles as a
// recording of gRPC calls (load/replay's FormatGRPC: a JSON line per call
// with its time, method, request message(s) as base64 protobuf, metadata
// and status), which `wirebench replay FILE --target host:port` sends
// again at its recorded times. A user's own service records its traffic
// with two interceptors, one for unary calls and one for streams:
//
//	rec := record.New(f)
//	defer rec.Close()
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(rec.Unary), grpc.ChainStreamInterceptor(rec.Stream))
//
// A stream's line holds the messages its handler read: a server stream's
// one ("bin"), a client or bidi stream's in order ("bins"); when in the
// call each came is not kept. Server reflection's own streams are not
// recorded.
//
// Metadata that a replay sets itself or that is the connection's
// (user-agent, content-type, te, grpc-*, :pseudo) is left out; Keep
// filters the rest (by default every other key), and the values of keys
// named like secrets (authorization, cookie, x-api-key, …) are written
// REDACTED unless Secrets.
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
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// Recorder writes calls; safe for concurrent use.
type Recorder struct {
	// Keep reports whether a metadata key (lower-case) is written; nil
	// keeps every key but those left out always.
	Keep func(key string) bool
	// Secrets keeps the values of metadata keys named like secrets
	// (reqlog.IsSecret: authorization, cookie, x-api-key, …); by default
	// they are written reqlog.Redacted, as in HTTP recordings.
	Secrets bool

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
	Bin  *string           `json:"bin,omitempty"`
	Bins *[]string         `json:"bins,omitempty"` // a client or bidi stream's ([] when it sent none)
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
	b, merr := r.marshal(m)
	if merr != nil {
		return resp, err
	}
	bin := base64.StdEncoding.EncodeToString(b)
	l := line{T: at.UnixNano(), GRPC: strings.TrimPrefix(info.FullMethod, "/"), Bin: &bin}
	r.finish(ctx, &l, err)
	return resp, err
}

// Stream is a grpc.StreamServerInterceptor that records each streaming
// call after its handler returns, with the request messages the handler
// read (the time is when it arrived).
func (r *Recorder) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if strings.HasPrefix(info.FullMethod, "/grpc.reflection.") {
		return h(srv, ss)
	}
	at := time.Now()
	rs := &recvStream{ServerStream: ss, bins: []string{}, marshal: r.marshal}
	err := h(srv, rs)
	l := line{T: at.UnixNano(), GRPC: strings.TrimPrefix(info.FullMethod, "/")}
	switch {
	case info.IsClientStream:
		l.Bins = &rs.bins
	case len(rs.bins) == 1:
		l.Bin = &rs.bins[0]
	default: // a server stream whose handler failed before its request
		return err
	}
	r.finish(ss.Context(), &l, err)
	return err
}

// recvStream keeps the messages a handler reads, as base64 protobuf.
type recvStream struct {
	grpc.ServerStream
	bins    []string
	marshal func(proto.Message) ([]byte, error)
}

func (s *recvStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if pm, ok := m.(proto.Message); ok && err == nil {
		if b, merr := s.marshal(pm); merr == nil {
			s.bins = append(s.bins, base64.StdEncoding.EncodeToString(b))
		}
	}
	return err
}

// finish adds a call's status and metadata to l and writes it.
func (r *Recorder) finish(ctx context.Context, l *line, err error) {
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
			switch {
			case r.Secrets:
			case reqlog.IsSecret(k) || reqlog.IsSecretValue(vs[0]):
				l.MD[k] = reqlog.Redacted
			default:
				// A URL or path (a gateway's x-original-uri, a
				// referer) loses its credentials as an HTTP
				// recording's target does.
				l.MD[k], _ = reqlog.RedactTarget(vs[0])
			}
		}
	}
	r.write(l)
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

// marshal is a request message as the log keeps it: without Secrets, a
// copy whose string and bytes fields named like secrets
// (reqlog.IsSecret, by the field's name or its JSON name), and whose
// strings that are credentials (reqlog.IsSecretValue), read
// reqlog.Redacted, at any depth — as the JSON bodies of HTTP recordings.
func (r *Recorder) marshal(m proto.Message) ([]byte, error) {
	if !r.Secrets {
		m = proto.Clone(m)
		redactMessage(m.ProtoReflect(), false)
	}
	return proto.Marshal(m)
}

// redactMessage redacts m in place; all: every string and bytes value in
// it (a message under a secret name).
func redactMessage(m protoreflect.Message, all bool) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		named := all || reqlog.IsSecret(string(fd.Name())) || reqlog.IsSecret(fd.JSONName())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if nv, ok := redactValue(fd, l.Get(i), named); ok {
					l.Set(i, nv)
				}
			}
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if nv, ok := redactValue(fd.MapValue(), mv, named || reqlog.IsSecret(k.String())); ok {
					mp.Set(k, nv)
				}
				return true
			})
		default:
			if nv, ok := redactValue(fd, v, named); ok {
				m.Set(fd, nv)
			}
		}
		return true
	})
}

// redactValue is v redacted (ok) when it is a secret: a string or bytes
// value under a secret name, or a credential string; a message is
// redacted in place.
func redactValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, named bool) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if named || reqlog.IsSecretValue(v.String()) {
			return protoreflect.ValueOfString(reqlog.Redacted), true
		}
	case protoreflect.BytesKind:
		if named || reqlog.IsSecretValue(string(v.Bytes())) {
			return protoreflect.ValueOfBytes([]byte(reqlog.Redacted)), true
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		redactMessage(v.Message(), named)
	}
	return v, false
}
