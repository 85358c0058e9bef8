// Package h2grpc is a gRPC server transport of our own over cleartext
// HTTP/2 (prior knowledge, as grpc-go's server without TLS). It exists for
// one number: at one call at a time, grpc-go's server hands every unary
// call from its frame reader to a handler goroutine and the reply to its
// writer goroutine, three hand-offs where net/http's HTTP/1.1 connection
// does all in one, and that made gRPC's p50 1.4-1.6x REST's on the same
// store (issue 17). Here a unary call is decoded, handled and answered on
// the connection's own goroutine, and the reply leaves in one write;
// streaming calls run on a goroutine each, as in grpc-go.
//
// It serves what a *grpc.Server serves through the same generated
// registration functions (it is a grpc.ServiceRegistrar): unary and
// streaming methods, a server codec (encoding.CodecV2), compressors
// registered with grpc-go (grpc-encoding), grpc-timeout, incoming
// metadata, status details, tap handles. Not served: TLS, interceptors,
// grpc.SetHeader and friends inside unary handlers (streams have
// SetHeader, SendHeader and SetTrailer), server push.
package h2grpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/tap"
)

// Defaults and bounds; each is an Options field.
const (
	DefaultMaxRecvMsgSize       = 4 << 20 // grpc-go's default
	DefaultMaxConcurrentStreams = 100
	DefaultWindow               = 1 << 20
	MinWindow                   = 64 << 10
	DefaultConnectionTimeout    = 120 * time.Second // grpc-go's default
	DefaultMaxHeaderListSize    = 64 << 10          // as the REST port's request headers
)

// Options are a Server's limits and hooks. Zero values take the defaults.
type Options struct {
	// MaxRecvMsgSize bounds one request message (after decompression);
	// larger is ResourceExhausted.
	MaxRecvMsgSize int
	// MaxConcurrentStreams is advertised in SETTINGS; a client that opens
	// more gets REFUSED_STREAM.
	MaxConcurrentStreams uint32
	// Window is the receive window per stream and per connection, static
	// (no BDP estimation); below MinWindow it is raised to MinWindow.
	Window int32
	// ConnectionTimeout bounds the wait for the client's preface and
	// first SETTINGS frame.
	ConnectionTimeout time.Duration
	// MaxConnectionIdle closes (GOAWAY) a connection without calls for
	// that long; 0 keeps idle connections.
	MaxConnectionIdle time.Duration
	// WriteTimeout bounds a write of replies to the socket: a client that
	// stops reading loses the connection within [0.5, 1] x WriteTimeout.
	// 0: no bound.
	WriteTimeout time.Duration
	// MaxHeaderListSize bounds a request's decoded header block.
	MaxHeaderListSize uint32
	// Codec marshals replies and unmarshals requests; nil is grpc-go's
	// registered proto codec.
	Codec encoding.CodecV2
	// Tap, if set, runs before each call as grpc.InTapHandle does: it may
	// replace the call's context or refuse the call with an error.
	Tap tap.ServerInHandle
}

func (o Options) withDefaults() Options {
	if o.MaxRecvMsgSize <= 0 {
		o.MaxRecvMsgSize = DefaultMaxRecvMsgSize
	}
	if o.MaxConcurrentStreams == 0 {
		o.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	o.Window = max(o.Window, MinWindow)
	if o.ConnectionTimeout <= 0 {
		o.ConnectionTimeout = DefaultConnectionTimeout
	}
	if o.MaxHeaderListSize == 0 {
		o.MaxHeaderListSize = DefaultMaxHeaderListSize
	}
	if o.Codec == nil {
		o.Codec = encoding.GetCodecV2(grpcproto.Name)
	}
	return o
}

// method is one registered RPC.
type method struct {
	impl   any
	unary  func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error)
	stream *grpc.StreamDesc
}

// Server serves registered gRPC services on the listeners given to Serve.
type Server struct {
	opts     Options
	methods  map[string]*method // by path, "/pkg.Service/Method"
	services map[string]grpc.ServiceInfo

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*conn]bool
	draining  bool
	stopped   bool
	connsDone sync.WaitGroup
}

// New returns a Server with opts; register services before Serve.
func New(opts Options) *Server {
	return &Server{
		opts:      opts.withDefaults(),
		methods:   map[string]*method{},
		services:  map[string]grpc.ServiceInfo{},
		listeners: map[net.Listener]bool{},
		conns:     map[*conn]bool{},
	}
}

// RegisterService registers sd's methods on impl (grpc.ServiceRegistrar:
// the generated RegisterXServer functions call it). Registering a service
// twice panics, as on a *grpc.Server.
func (s *Server) RegisterService(sd *grpc.ServiceDesc, impl any) {
	if _, dup := s.services[sd.ServiceName]; dup {
		panic(fmt.Sprintf("h2grpc: service %s registered twice", sd.ServiceName))
	}
	info := grpc.ServiceInfo{Metadata: sd.Metadata}
	for _, m := range sd.Methods {
		s.methods["/"+sd.ServiceName+"/"+m.MethodName] = &method{impl: impl, unary: m.Handler}
		info.Methods = append(info.Methods, grpc.MethodInfo{Name: m.MethodName})
	}
	for i := range sd.Streams {
		st := &sd.Streams[i]
		s.methods["/"+sd.ServiceName+"/"+st.StreamName] = &method{impl: impl, stream: st}
		info.Methods = append(info.Methods, grpc.MethodInfo{Name: st.StreamName, IsClientStream: st.ClientStreams, IsServerStream: st.ServerStreams})
	}
	s.services[sd.ServiceName] = info
}

// GetServiceInfo lists the registered services, as *grpc.Server's does
// (server reflection reads it).
func (s *Server) GetServiceInfo() map[string]grpc.ServiceInfo {
	out := make(map[string]grpc.ServiceInfo, len(s.services))
	for k, v := range s.services {
		out[k] = v
	}
	return out
}

// ErrServerStopped is Serve's answer after Stop or GracefulStop.
var ErrServerStopped = errors.New("h2grpc: the server has been stopped")

// Serve accepts connections on l until l fails or the server stops; it
// returns ErrServerStopped after Stop or GracefulStop, else Accept's error.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.stopped || s.draining {
		s.mu.Unlock()
		l.Close()
		return ErrServerStopped
	}
	s.listeners[l] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			done := s.stopped || s.draining
			s.mu.Unlock()
			if done {
				return ErrServerStopped
			}
			var ne interface{ Temporary() bool }
			if errors.As(err, &ne) && ne.Temporary() { // EMFILE and the like: wait, as net/http does
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := newConn(s, nc)
		s.mu.Lock()
		if s.stopped || s.draining {
			s.mu.Unlock()
			nc.Close()
			return ErrServerStopped
		}
		s.conns[c] = true
		s.connsDone.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.connsDone.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Stop closes the listeners and every connection at once; calls in
// flight see their context cancelled.
func (s *Server) Stop() {
	s.mu.Lock()
	s.stopped = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.connsDone.Wait()
}

// GracefulStop closes the listeners, sends GOAWAY on every connection and
// waits until their calls end.
func (s *Server) GracefulStop() {
	s.mu.Lock()
	s.draining = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.goAway()
	}
	s.mu.Unlock()
	s.connsDone.Wait()
}
