package grpcanytest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc/interop"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

// StartConnect serves the same TestService through connect-go handlers
// (gRPC, gRPC-Web and Connect on one port, over HTTP/1.1 and h2c), each
// calling grpc-go's own implementation: UnaryCall and StreamingOutputCall,
// the kinds a browser's protocols carry. Counted as Start's server.
func StartConnect(t testing.TB) *Server {
	t.Helper()
	s := &Server{ids: map[string]int{}, md: map[string]int{}}
	impl := interop.NewTestServer()
	mux := http.NewServeMux()
	mux.Handle("/grpc.testing.TestService/UnaryCall", connect.NewUnaryHandler("/grpc.testing.TestService/UnaryCall",
		func(ctx context.Context, req *connect.Request[testpb.SimpleRequest]) (*connect.Response[testpb.SimpleResponse], error) {
			s.Calls.Add(1)
			s.Messages.Add(1)
			s.seenID(req.Msg)
			s.seenMD(incoming(ctx, req.Header()))
			r, err := impl.UnaryCall(ctx, req.Msg)
			if err != nil {
				return nil, err
			}
			return connect.NewResponse(r), nil
		}))
	mux.Handle("/grpc.testing.TestService/StreamingOutputCall", connect.NewServerStreamHandler("/grpc.testing.TestService/StreamingOutputCall",
		func(ctx context.Context, req *connect.Request[testpb.StreamingOutputCallRequest], st *connect.ServerStream[testpb.StreamingOutputCallResponse]) error {
			s.Calls.Add(1)
			s.Messages.Add(1)
			s.seenID(req.Msg)
			s.seenMD(incoming(ctx, req.Header()))
			return impl.StreamingOutputCall(req.Msg, &serverStream{ctx: ctx, st: st})
		}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	s.Addr = ln.Addr().String()
	return s
}

// incoming is ctx with the request's headers as gRPC metadata, for seenMD.
func incoming(ctx context.Context, h http.Header) context.Context {
	md := metadata.MD{}
	for k, vs := range h {
		md[strings.ToLower(k)] = vs
	}
	return metadata.NewIncomingContext(ctx, md)
}

// serverStream is grpc-go's server stream interface over connect-go's,
// for the interop implementation's StreamingOutputCall.
type serverStream struct {
	ctx context.Context
	st  *connect.ServerStream[testpb.StreamingOutputCallResponse]
}

func (s *serverStream) Send(m *testpb.StreamingOutputCallResponse) error { return s.st.Send(m) }
func (s *serverStream) Context() context.Context                         { return s.ctx }
func (s *serverStream) SetHeader(metadata.MD) error                      { return nil }
func (s *serverStream) SendHeader(metadata.MD) error                     { return nil }
func (s *serverStream) SetTrailer(metadata.MD)                           {}
func (s *serverStream) SendMsg(m any) error {
	r, ok := m.(*testpb.StreamingOutputCallResponse)
	if !ok {
		return errors.New("not a StreamingOutputCallResponse")
	}
	return s.st.Send(r)
}
func (s *serverStream) RecvMsg(any) error { return errors.New("a server stream receives nothing more") }
