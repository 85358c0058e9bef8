// Package grpcanytest starts grpc-go's own interop TestService
// (google.golang.org/grpc/interop: a service nobody here wrote, not
// compiled into wirebench) on 127.0.0.1:0 for the any-gRPC tests, with a
// counting interceptor: the server's own count of calls and of the ids
// the requests carried (response_status.message, which the service
// ignores when the code is 0), to compare with the client's.
package grpcanytest

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/proto"
)

// Server is a running TestService.
type Server struct {
	Addr string
	// Calls are the calls the server's handlers were given, Messages the
	// request messages they read.
	Calls, Messages atomic.Int64

	mu  sync.Mutex
	ids map[string]int
	md  map[string]int // metadata key=value seen, per call
}

// Start serves the TestService (and server reflection when reflect) until
// the test ends.
func Start(t testing.TB, reflect bool) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, stop := Serve(ln, reflect)
	t.Cleanup(stop)
	return s
}

// StartTLS is Start over TLS with cfg (NewTLS's Server).
func StartTLS(t testing.TB, reflect bool, cfg *tls.Config) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, stop := Serve(ln, reflect, grpc.Creds(credentials.NewTLS(cfg)))
	t.Cleanup(stop)
	return s
}

// Serve serves the TestService on ln until stop (a test's server process
// calls it), with grpc-go's server options opts.
func Serve(ln net.Listener, reflect bool, opts ...grpc.ServerOption) (s *Server, stop func()) {
	s = &Server{ids: map[string]int{}, md: map[string]int{}}
	gs := grpc.NewServer(append(opts,
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if info.FullMethod != "/grpc.testing.TestService/UnaryCall" && info.FullMethod != "/grpc.testing.TestService/EmptyCall" {
				return h(ctx, req)
			}
			s.Calls.Add(1)
			s.Messages.Add(1)
			s.seenID(req)
			s.seenMD(ctx)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if info.FullMethod == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo" ||
				info.FullMethod == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo" {
				return h(srv, ss)
			}
			s.Calls.Add(1)
			s.seenMD(ss.Context())
			return h(srv, &countingStream{ServerStream: ss, s: s})
		}),
	)...)
	testgrpc.RegisterTestServiceServer(gs, interop.NewTestServer())
	if reflect {
		reflection.Register(gs)
	}
	go gs.Serve(ln)
	s.Addr = ln.Addr().String()
	return s, gs.Stop
}

// seenID records a request's id.
func (s *Server) seenID(req any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id := requestID(req); id != "" {
		s.ids[id]++
	}
}

// seenMD records a call's metadata.
func (s *Server) seenMD(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	for k, vs := range md {
		for _, v := range vs {
			s.md[k+"="+v]++
		}
	}
}

func requestID(req any) string {
	m, ok := req.(proto.Message)
	if !ok {
		return ""
	}
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("response_status")
	if fd == nil || !r.Has(fd) {
		return ""
	}
	st := r.Get(fd).Message()
	return st.Get(st.Descriptor().Fields().ByName("message")).String()
}

// IDs is the number of distinct ids the requests carried, and the most
// times one was seen.
func (s *Server) IDs() (distinct, most int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.ids {
		most = max(most, n)
	}
	return len(s.ids), most
}

// Metadata is how many calls carried key=value.
func (s *Server) Metadata(kv string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.md[kv]
}

type countingStream struct {
	grpc.ServerStream
	s *Server
}

func (c *countingStream) RecvMsg(m any) error {
	err := c.ServerStream.RecvMsg(m)
	if err == nil {
		c.s.Messages.Add(1)
		c.s.seenID(m)
	}
	return err
}
