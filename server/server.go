// Package server runs the reference service: one store shared by the REST
// API (HTTP/1.1 and h2c on one port) and the gRPC API. It composes every
// face — REST, KV (HTTP and RESP), bulk upsert, streams, the web bench,
// gRPC and its WebSocket tunnel — and owns their lifecycle: a listener
// that fails after Start closes Failed and is reported by Err.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/grpcws"
	"github.com/wirebench/wirebench/h2grpc"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/access"
	"github.com/wirebench/wirebench/kv/repl"
	"github.com/wirebench/wirebench/kv/resp"
	"github.com/wirebench/wirebench/kvhttp"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/store"
)

// Defaults for Options.
const (
	DefaultHTTPAddr  = "127.0.0.1:8080"
	DefaultGRPCAddr  = "127.0.0.1:9090"
	DefaultSeedUsers = 100
	DefaultSeedTodos = 100
)

// REST engines.
const (
	EngineNetHTTP  = "nethttp"
	EngineFastHTTP = "fasthttp"
)

// gRPC transports (Options.GRPCTransport).
const (
	GRPCLean   = "lean"    // package h2grpc: unary calls answered on the connection's goroutine
	GRPCGrpcGo = "grpc-go" // grpc-go's own server transport
)

// grpcServer is what Start and Close need of either gRPC transport.
type grpcServer interface {
	Serve(net.Listener) error
	Stop()
	GracefulStop()
}

// Options configures the service. The zero value listens on the default
// addresses with an empty store; NoGRPC or NoHTTP turn a transport off.
type Options struct {
	HTTPAddr, GRPCAddr   string
	NoHTTP, NoGRPC       bool
	SeedUsers, SeedTodos int
	HTTP                 httpapi.Options
	Store                store.Options
	// Engine serves REST: EngineNetHTTP ("" too) or EngineFastHTTP
	// (HTTP/1.1 only, no h2c).
	Engine string
	// GRPCTransport serves gRPC: GRPCLean ("" too) or GRPCGrpcGo. The
	// same services, limits and timeouts either way.
	GRPCTransport string
	// Timeouts bound how long one connection or stream may hold the
	// server's memory and goroutines; the zero value is DefaultTimeouts.
	Timeouts Timeouts
	// MaxStreamDuration bounds every streaming call (gRPC streams, NDJSON,
	// SSE, WebSocket; package streamapi); 0 is
	// grpcapi.DefaultMaxStreamDuration.
	MaxStreamDuration time.Duration
	// KV is the key-value store behind /kv/ (nethttp engine) and RESP;
	// RESPAddr "" serves no RESP.
	KV       kv.Options
	RESPAddr string
	RESP     resp.Options
	// Bulk serves POST /airports (the bulk upsert, package bulkapi) on
	// the net/http engine; with the fasthttp engine Bulk.SQLite must be "".
	Bulk Bulk
	// Listen opens the listeners; nil is net.Listen. Embedders and tests
	// wrap listeners with it.
	Listen func(network, address string) (net.Listener, error)
	// Repl is the KV store's replication role; AuthToken and RateLimit
	// (requests a second per client, 0: none) guard /kv/ and RESP.
	Repl      repl.Options
	AuthToken string
	RateLimit float64
	// Record, if set, logs every REST request (nethttp engine) to it as
	// it arrives (load --replay reads it back; reqlog's format). The
	// caller flushes it after Shutdown.
	Record *reqlog.Writer
	// H3 serves the REST port's routes over HTTP/3 too (h3.go), and
	// HTTPSAddr over HTTP/1.1 and h2 on TLS (tlsfaces.go), both with the
	// certificate of TLS; they need the net/http engine.
	H3        H3
	HTTPSAddr string
	TLS       TLS
}

// Server is a running service.
type Server struct {
	Store    *store.Memory
	KV       *kv.Store
	Repl     *repl.Node
	respSrv  *resp.Server
	httpSrv  *http.Server
	fastSrv  *fasthttp.Server
	grpcSrv  grpcServer
	httpLn   net.Listener
	grpcLn   net.Listener
	tunnel   *grpcws.Listener
	tls      *tlsFaces    // HTTP/3 and HTTPS, nil when neither runs
	bulkDone func() error // closes the bulk database
	*life
}

// Start seeds the store, listens on both addresses and serves until Close
// or ctx is done.
func Start(ctx context.Context, opts Options) (*Server, error) {
	st := store.NewMemory(opts.Store)
	if err := st.Seed(opts.SeedUsers, opts.SeedTodos); err != nil {
		return nil, err
	}
	s := &Server{Store: st, life: newLife()}
	listen := opts.Listen
	if listen == nil {
		listen = net.Listen
	}
	var err error
	s.Repl = repl.New(opts.Repl)
	opts.KV.Tap, opts.KV.Replica = s.Repl.Tap(), s.Repl.ReadOnly()
	if s.KV, err = kv.Open(opts.KV); err != nil {
		return nil, err
	}
	lim := access.NewLimiter(opts.RateLimit, 0)
	opts.RESP.Guard = resp.Guard{Password: opts.AuthToken, Limiter: lim, ReadOnly: s.Repl.ReadOnly, Info: s.Repl.Info}
	kvGuard := kvhttp.Guard{Token: opts.AuthToken, Limiter: lim, ReadOnly: s.Repl.ReadOnly, Repl: s.Repl.Handler(), Metrics: s.Repl.Metrics}
	if opts.RESPAddr != "" {
		if s.respSrv, err = resp.Listen(opts.RESPAddr, s.KV, opts.RESP); err != nil {
			s.KV.Close()
			return nil, err
		}
	}
	if !opts.NoHTTP {
		h, err := httpapi.New(st, opts.HTTP)
		if err != nil {
			s.closeKV()
			return nil, err
		}
		var bulk http.Handler
		switch {
		case opts.Engine == "" || opts.Engine == EngineNetHTTP:
			if bulk, s.bulkDone, err = openBulk(opts.Bulk); err != nil {
				s.closeKV()
				return nil, err
			}
		case opts.Record != nil:
			s.closeKV()
			return nil, fmt.Errorf("server: recording requests needs the %s engine", EngineNetHTTP)
		case opts.Bulk.SQLite != "":
			s.closeKV()
			return nil, fmt.Errorf("server: /airports needs the %s engine", EngineNetHTTP)
		}
		if (opts.H3.Addr != "" || opts.HTTPSAddr != "") && opts.Engine != "" && opts.Engine != EngineNetHTTP {
			s.closeKV()
			s.closeBulk()
			return nil, fmt.Errorf("server: HTTP/3 and HTTPS need the %s engine", EngineNetHTTP)
		}
		addr := cmp.Or(opts.HTTPAddr, DefaultHTTPAddr)
		if s.httpLn, err = listen("tcp", addr); err != nil {
			s.closeKV()
			s.closeBulk()
			return nil, fmt.Errorf("server: HTTP listen: %w", err)
		}
		switch opts.Engine {
		case "", EngineNetHTTP:
			var protos http.Protocols
			protos.SetHTTP1(true)
			protos.SetUnencryptedHTTP2(true) // h2c with prior knowledge on the same port
			// The streams (NDJSON, SSE, WebSocket, Connect/gRPC-Web, the
			// gRPC tunnel) need net/http's flushing and hijacking.
			if !opts.NoGRPC {
				s.tunnel = grpcws.NewListener(s.httpLn.Addr())
			}
			mux := s.routes(st, h, bulk, kvGuard, opts)
			if opts.Record != nil {
				mux = reqlog.Middleware(opts.Record, mux)
			}
			t := opts.Timeouts.withDefaults()
			shares := new(replyShares) // every transport's: one share per source
			if s.tls, err = newTLSFaces(opts, t, listen, shares); err != nil {
				s.httpLn.Close()
				s.closeKV()
				s.closeBulk()
				return nil, err
			}
			if s.tls != nil {
				mux = s.tls.wrap(mux)
			}
			if s.httpSrv, err = newPhasedHTTPServer(mux, &protos, t, shares); err != nil {
				s.httpLn.Close()
				s.closeKV()
				s.closeBulk()
				return nil, err
			}
			s.httpSrv.RegisterOnShutdown(s.Repl.Close) // replication streams never end by themselves
			ln := newHTTPWatchdog(s.httpLn, t)         // timeouts in phases: see netphases.go
			go s.serve("HTTP", func() error { return s.httpSrv.Serve(ln) })
			if s.tls != nil {
				s.tls.serve(s.life, mux, t)
			}
		case EngineFastHTTP:
			s.fastSrv = newFastServer(h, opts)
			mountKVFast(s.fastSrv, s.KV, kvhttp.Options{MaxBody: cmp.Or(opts.HTTP.MaxBody, httpapi.DefaultMaxBody), Guard: kvGuard})
			// Phased timeouts (phases.go): fasthttp arms no deadline itself.
			s.fastSrv.ReadTimeout, s.fastSrv.WriteTimeout, s.fastSrv.IdleTimeout = 0, 0, 0
			s.fastSrv.Handler = phasedHandler(s.fastSrv.Handler)
			ln := newPhasedWatchdog(s.httpLn, opts.Timeouts.withDefaults())
			go s.serve("HTTP", func() error { return s.fastSrv.Serve(ln) })
		default:
			s.httpLn.Close()
			s.closeKV()
			return nil, fmt.Errorf("server: unknown engine %q (want %s or %s)", opts.Engine, EngineNetHTTP, EngineFastHTTP)
		}
	}
	if (opts.H3.Addr != "" || opts.HTTPSAddr != "") && s.tls == nil {
		s.Close()
		return nil, errors.New("server: HTTP/3 and HTTPS serve the REST API: they need HTTP on")
	}
	if !opts.NoGRPC {
		addr := cmp.Or(opts.GRPCAddr, DefaultGRPCAddr)
		ln, err := listen("tcp", addr)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("server: gRPC listen: %w", err)
		}
		s.grpcLn = ln
		to := opts.Timeouts.withDefaults()
		maxMsg := int(cmp.Or(opts.HTTP.MaxBody, httpapi.DefaultMaxBody))
		switch opts.GRPCTransport {
		case GRPCLean, "":
			s.grpcSrv = grpcapi.NewLean(st, h2grpc.Options{
				MaxRecvMsgSize:       maxMsg,
				MaxConcurrentStreams: uint32(to.H2MaxStreams),
				Window:               int32(to.H2StreamBuffer),
				ConnectionTimeout:    to.ReadHeader,
				WriteTimeout:         to.Write,
				MaxConnectionIdle:    to.Idle,
				Tap:                  grpcapi.StreamDeadline(opts.MaxStreamDuration),
			})
		case GRPCGrpcGo:
			s.grpcSrv = grpcapi.NewServer(st, append(grpcapi.TransportOptions(int32(to.H2StreamBuffer)),
				grpc.MaxRecvMsgSize(maxMsg),
				grpc.MaxConcurrentStreams(uint32(to.H2MaxStreams)),
				grpc.ConnectionTimeout(to.ReadHeader),
				grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: to.Idle}),
				grpc.InTapHandle(grpcapi.StreamDeadline(opts.MaxStreamDuration)),
				// No stats handler or interceptor here keeps a sent message.
				grpcapi.ReuseSentMessages())...)
		default:
			ln.Close()
			s.Close()
			return nil, fmt.Errorf("server: unknown gRPC transport %q (want %s or %s)", opts.GRPCTransport, GRPCLean, GRPCGrpcGo)
		}
		if ds, ok := opts.HTTP.Records.(grpcapi.Records); ok { // serve --data (with a schema: Service)
			grpcapi.RegisterRecords(s.grpcSrv.(grpcapi.Registrar), ds)
		}
		go s.serve("gRPC", func() error { return s.grpcSrv.Serve(ln) })
		if s.tunnel != nil { // gRPC over WebSocket on the REST port: the same server
			go s.serve("gRPC tunnel", func() error { return s.grpcSrv.Serve(s.tunnel) })
		}
	}
	if err := s.Repl.Start(s.KV, s.HTTPAddr()); err != nil {
		s.Close()
		return nil, err
	}
	if s.respSrv != nil {
		go s.watchRESP(s.respSrv)
	}
	if ctx.Done() != nil {
		go func() { <-ctx.Done(); s.Close() }()
	}
	return s, nil
}

// HTTPAddr is the REST listener's address ("" when HTTP is off).
func (s *Server) HTTPAddr() string { return addrOf(s.httpLn) }

// RESPAddr is the RESP listener's address ("" when RESP is off).
func (s *Server) RESPAddr() string {
	if s.respSrv == nil {
		return ""
	}
	return s.respSrv.Addr()
}

// GRPCAddr is the gRPC listener's address ("" when gRPC is off).
func (s *Server) GRPCAddr() string { return addrOf(s.grpcLn) }

// Close stops both servers at once, without draining.
func (s *Server) Close() error {
	s.stopping()
	var errs []error
	if s.httpSrv != nil {
		errs = append(errs, s.httpSrv.Close())
	}
	if s.fastSrv != nil {
		// fasthttp has no immediate close: Shutdown closes the listener
		// and, with CloseOnShutdown, idle connections at once.
		errs = append(errs, s.fastSrv.Shutdown())
	}
	if s.grpcSrv != nil {
		s.grpcSrv.Stop()
	}
	if s.tunnel != nil {
		s.tunnel.Close()
	}
	if s.tls != nil {
		errs = append(errs, s.tls.close())
	}
	errs = append(errs, s.closeKV(), s.closeBulk())
	return errors.Join(errs...)
}

// closeBulk closes the bulk database (and removes a temporary one).
func (s *Server) closeBulk() error {
	if s.bulkDone == nil {
		return nil
	}
	return s.bulkDone()
}

// closeKV stops RESP, then closes the store (writing what is pending).
func (s *Server) closeKV() error {
	var errs []error
	if s.respSrv != nil {
		errs = append(errs, s.respSrv.Close())
	}
	if s.Repl != nil {
		s.Repl.Close() // no replicated write after the store closes
	}
	if s.KV != nil {
		errs = append(errs, s.KV.Close())
	}
	return errors.Join(errs...)
}

// Shutdown stops accepting, lets requests in flight finish until ctx ends,
// then closes.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopping()
	var errs []error
	if s.httpSrv != nil {
		errs = append(errs, s.httpSrv.Shutdown(ctx))
	}
	if s.fastSrv != nil {
		errs = append(errs, s.fastSrv.ShutdownWithContext(ctx))
	}
	if s.tls != nil {
		errs = append(errs, s.tls.shutdown(ctx))
	}
	if s.grpcSrv != nil {
		done := make(chan struct{})
		go func() { s.grpcSrv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.grpcSrv.Stop()
		}
	}
	errs = append(errs, s.closeKV(), s.closeBulk())
	return errors.Join(errs...)
}

func addrOf(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, grpc.ErrServerStopped) || errors.Is(err, h2grpc.ErrServerStopped) {
		return nil
	}
	return err
}
