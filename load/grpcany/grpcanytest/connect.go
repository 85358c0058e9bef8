package grpcanytest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
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
// (gRPC, gRPC-Web and Connect on one port, over HTTP/1.1 and h2c): UnaryCall
// and StreamingOutputCall calling grpc-go's own implementation,
// StreamingInputCall and FullDuplexCall doing what it does. Counted as
// Start's server.
func StartConnect(t testing.TB) *Server { return startConnect(t, nil) }

// StartConnectTLS is StartConnect over TLS with cfg (HTTP/1.1 and h2 by
// ALPN).
func StartConnectTLS(t testing.TB, cfg *tls.Config) *Server { return startConnect(t, cfg) }

func startConnect(t testing.TB, cfg *tls.Config) *Server {
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
	s.streams(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	if cfg != nil {
		hs.Protocols.SetHTTP2(true)
		hs.TLSConfig = cfg.Clone() // ServeTLS offers h2 and http/1.1 by ALPN
		go hs.ServeTLS(ln, "", "")
	} else {
		hs.Protocols.SetUnencryptedHTTP2(true)
		go hs.Serve(ln)
	}
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

// streams adds the client-streaming and bidi methods, as grpc-go's
// interop server does them: StreamingInputCall answers the sum of the
// payloads' sizes, FullDuplexCall answers each request with a payload of
// each size its response_parameters ask for.
func (s *Server) streams(mux *http.ServeMux) {
	mux.Handle("/grpc.testing.TestService/StreamingInputCall", connect.NewClientStreamHandler("/grpc.testing.TestService/StreamingInputCall",
		func(ctx context.Context, st *connect.ClientStream[testpb.StreamingInputCallRequest]) (*connect.Response[testpb.StreamingInputCallResponse], error) {
			s.Calls.Add(1)
			s.seenMD(incoming(ctx, st.RequestHeader()))
			var size int32
			for st.Receive() {
				s.Messages.Add(1)
				s.seenID(st.Msg())
				size += int32(len(st.Msg().GetPayload().GetBody()))
			}
			if err := st.Err(); err != nil {
				return nil, err
			}
			return connect.NewResponse(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: size}), nil
		}))
	mux.Handle("/grpc.testing.TestService/FullDuplexCall", connect.NewBidiStreamHandler("/grpc.testing.TestService/FullDuplexCall",
		func(ctx context.Context, st *connect.BidiStream[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
			s.Calls.Add(1)
			s.seenMD(incoming(ctx, st.RequestHeader()))
			for {
				req, err := st.Receive()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				s.Messages.Add(1)
				s.seenID(req)
				for _, p := range req.GetResponseParameters() {
					body := make([]byte, p.GetSize())
					if err := st.Send(&testpb.StreamingOutputCallResponse{Payload: &testpb.Payload{Body: body}}); err != nil {
						return err
					}
				}
			}
		}))
}
