package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/server"
)

func init() {
	register("serve", command{
		summary: "run the reference API (REST over HTTP/1.1 and h2c, TLS and HTTP/3 if asked; gRPC)",
		run:     runServe,
	})
}

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "serve", "[flags]")
	var o server.Options
	d := server.DefaultTimeouts
	fs.StringVar(&o.HTTPAddr, "http", server.DefaultHTTPAddr, "`address` of the REST API (HTTP/1.1 and h2c); port 0 picks a free one")
	fs.StringVar(&o.GRPCAddr, "grpc", server.DefaultGRPCAddr, "`address` of the gRPC API; port 0 picks a free one")
	fs.BoolVar(&o.NoGRPC, "no-grpc", false, "do not serve gRPC")
	fs.StringVar(&o.H3.Addr, "http3", "", "UDP `address` of the REST API over HTTP/3 (QUIC, quic-go); port 0 picks a free one; empty: off (docs/http3.md)")
	fs.StringVar(&o.HTTPSAddr, "https", "", "`address` of the REST API over TLS (HTTP/1.1 and h2, Alt-Svc to --http3); port 0 picks a free one; empty: off")
	fs.StringVar(&o.TLS.CertFile, "tls-cert", "", "--https and --http3: PEM certificate `file`; none: a self-signed ECDSA certificate is generated and its fingerprints printed")
	fs.StringVar(&o.TLS.KeyFile, "tls-key", "", "PEM private key `file` of --tls-cert")
	certOut := fs.String("cert-out", "", "--https and --http3: write the certificate served (generated or not) to this PEM `file`, for load --cacert")
	fs.IntVar(&o.H3.MaxStreams, "h3-max-streams", server.DefaultH3MaxStreams, "HTTP/3: concurrent request streams per QUIC connection")
	fs.IntVar(&o.H3.MaxConns, "h3-max-conns", server.DefaultH3MaxConns, "HTTP/3: QUIC connections open at once, handshakes included; past it a handshake is refused at once (CONNECTION_REFUSED)")
	fs.IntVar(&o.H3.HandshakeRate, "h3-handshake-rate", server.DefaultH3HandshakeRate, "HTTP/3: new QUIC connections admitted per second (a burst of --h3-handshake-burst's worth); past it a new connection's Initial packets are dropped without a reply (the client resends them); -1: unbounded")
	fs.DurationVar(&o.H3.HandshakeBurst, "h3-handshake-burst", server.DefaultH3HandshakeBurst, "HTTP/3: how much time's worth of --h3-handshake-rate and --h3-source-rate may start at once (at least one handshake)")
	initialFilter := fs.Bool("h3-initial-filter", true, "HTTP/3: drop Initial packets past the handshake rates at the socket, without a reply, before quic-go reads them; false: quic-go refuses each one (CONNECTION_REFUSED, sealed and sent)")
	fs.IntVar(&o.H3.SourceConns, "h3-source-conns", 0, "HTTP/3: QUIC connections open at once from one source (IPv4 address, IPv6 /64), handshakes included; 0: half of --h3-max-conns; -1: only --h3-max-conns")
	fs.IntVar(&o.H3.SourceRate, "h3-source-rate", 0, "HTTP/3: new QUIC connections per second from one source (IPv4 address, IPv6 /64), past it dropped like --h3-handshake-rate's; 0: half of --h3-handshake-rate; -1: only --h3-handshake-rate")
	fs.Float64Var(&o.H3.HandshakeShare, "h3-handshake-share", server.DefaultH3HandshakeShare, "HTTP/3: share of time the handshakes' cryptography may take, one at a time per lane (a lane per four CPUs), each lane resting after a handshake; waiting handshakes are served in turn by source; 1: no gate")
	fs.DurationVar(&o.H3.IdleTimeout, "h3-idle-timeout", d.Idle, "HTTP/3: time a QUIC connection stays open with no packet")
	fs.BoolVar(&o.H3.Allow0RTT, "h3-0rtt", false, "HTTP/3: accept 0-RTT early data (requests can then be replayed by an attacker; docs/http3.md)")
	fs.StringVar(&o.Engine, "engine", server.EngineNetHTTP, "REST `engine`: nethttp (HTTP/1.1 and h2c) or fasthttp (HTTP/1.1 only); the same API either way")
	fs.StringVar(&o.GRPCTransport, "grpc-transport", server.GRPCGrpcGo, "gRPC `transport`: grpc-go (its server, what users deploy) or lean (a minimal transport of ours, package h2grpc: the floor); the same services either way")
	fs.IntVar(&o.SeedUsers, "seed-users", server.DefaultSeedUsers, "`N` deterministic users to start with")
	fs.IntVar(&o.SeedTodos, "seed-todos", server.DefaultSeedTodos, "`N` deterministic todos to start with")
	fs.StringVar(&o.HTTP.JSONLib, "json-lib", "std", "library serving application/json: std (encoding/json) or fast (goccy/go-json)")
	fs.DurationVar(&o.HTTP.Delay, "delay", 0, "sleep this `duration` in every REST response: known extra latency (costs no CPU) for calibration")
	fs.DurationVar(&o.HTTP.Burn, "burn", 0, "spin the CPU this `duration` in every REST response: known lost capacity for checking that compare detects a slowdown")
	fs.Int64Var(&o.HTTP.MaxBody, "max-body", httpapi.DefaultMaxBody, "request body limit in `bytes`, on the wire and decompressed (413 beyond)")
	fs.Int64Var(&o.HTTP.MaxReplyBytes, "max-reply-memory", httpapi.DefaultMaxReplyBytes, "`bytes` of replies being written at once; beyond, replies are shed with 503 and Retry-After (clients that stop reading large lists)")
	fs.DurationVar(&o.Timeouts.ReadHeader, "read-header-timeout", d.ReadHeader, "time to read a request's headers (and a gRPC handshake)")
	fs.DurationVar(&o.Timeouts.Read, "read-timeout", d.Read, "time to read a whole request, body included (408 beyond; per stream on h2c)")
	fs.DurationVar(&o.Timeouts.Write, "write-timeout", d.Write, "time from a request's headers to the end of its response; a client that does not read loses the connection (h2c: the stream)")
	fs.DurationVar(&o.Timeouts.Idle, "idle-timeout", d.Idle, "time a keep-alive connection waits for its next request (gRPC: with no RPC)")
	fs.IntVar(&o.Timeouts.H2MaxStreams, "h2-max-streams", d.H2MaxStreams, "concurrent streams per h2c or gRPC connection")
	fs.IntVar(&o.Timeouts.H2StreamBuffer, "h2-stream-buffer", d.H2StreamBuffer, "h2c flow-control window per stream and per connection, in `bytes` (64 KiB to under 4 MiB): request data buffered before the handler reads")
	fs.DurationVar(&o.MaxStreamDuration, "max-stream-duration", grpcapi.DefaultMaxStreamDuration, "longest life of a stream: gRPC streaming RPCs, NDJSON/SSE lists, WebSockets, Connect/gRPC-Web streams")
	fs.StringVar(&o.RESPAddr, "resp", "", "`address` of the KV store over RESP (the Redis protocol); port 0 picks a free one; empty: off")
	fs.StringVar(&o.RESP.Engine, "resp-engine", "", "RESP `engine`: loop (an event loop of ours; the default on Linux), own (a goroutine per connection) or redcon (tidwall/redcon)")
	fs.StringVar(&o.KV.Dir, "data-dir", "", "`directory` of the KV store's append-only file; empty: memory only")
	fsync := fs.String("appendfsync", "everysec", "KV AOF fsync `policy`: always (ack after fsync, group commit), everysec, no (Redis's meanings)")
	fs.BoolVar(&o.KV.Repair, "aof-repair", false, "start even when the AOF is damaged (anything but an incomplete final record): truncate it at the bad record and log what was dropped (docs/kv-durability.md)")
	bulkf := addBulkFlags(fs)
	dataf := addDataFlags(fs)
	fs.StringVar(&o.Repl.ReplicaOf, "replica-of", "", "leader's HTTP base `URL` (http://127.0.0.1:8080): this server becomes a read-only KV replica of it")
	fs.Int64Var(&o.Repl.Backlog, "repl-backlog", 0, "replication backlog in `bytes` (default 64 MiB): a follower further behind resyncs from a snapshot")
	fs.StringVar(&o.AuthToken, "auth-token", os.Getenv("WIREBENCH_AUTH_TOKEN"), "`secret` required by /kv/ (Authorization: Bearer) and RESP (AUTH), and sent to the leader by --replica-of (default $WIREBENCH_AUTH_TOKEN)")
	fs.Float64Var(&o.RateLimit, "rate-limit", 0, "KV requests (RESP commands) a `second` per client IP, token bucket with one second of burst; 0: none")
	cpus := fs.String("cpus", "", "pin the server to these `CPUs` (e.g. 1 or 2,3), so a load client on other CPUs measures it fairly")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the server's whole run to `file` (go tool pprof; bench/pgo.sh merges such profiles into cmd/wirebench/default.pgo)")
	var record serveRecordFlags
	record.register(fs) // --record, --force, --record-secrets, --record-bodies: replay.go
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkServeLimits(&o); err != nil { // limits.go
		return err
	}
	if err := measure.PinList(*cpus); errors.Is(err, measure.ErrCPUList) {
		return usagef("-cpus %s", strings.TrimPrefix(err.Error(), measure.ErrCPUList.Error()+": "))
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.Engine != server.EngineNetHTTP && o.Engine != server.EngineFastHTTP {
		return usagef("-engine: want %s or %s, got %q", server.EngineNetHTTP, server.EngineFastHTTP, o.Engine)
	}
	if o.HTTP.JSONLib != "std" && o.HTTP.JSONLib != "fast" {
		return usagef("-json-lib: want std or fast, got %q", o.HTTP.JSONLib)
	}
	if o.SeedUsers < 0 || o.SeedTodos < 0 || o.HTTP.MaxBody <= 0 || o.HTTP.MaxReplyBytes <= 0 {
		return usagef("-seed-users, -seed-todos must be >= 0, -max-body and -max-reply-memory > 0")
	}
	if t := o.Timeouts; t.ReadHeader <= 0 || t.Read <= 0 || t.Write <= 0 || t.Idle <= 0 || t.H2MaxStreams <= 0 {
		return usagef("-read-header-timeout, -read-timeout, -write-timeout, -idle-timeout and -h2-max-streams must be > 0")
	}
	if o.H3.MaxStreams <= 0 || o.H3.MaxConns <= 0 || o.H3.IdleTimeout <= 0 {
		return usagef("-h3-max-streams, -h3-max-conns and -h3-idle-timeout must be > 0")
	}
	if o.H3.HandshakeRate == 0 || o.H3.HandshakeRate < -1 {
		return usagef("-h3-handshake-rate must be > 0, or -1 for unbounded")
	}
	if b := o.H3.HandshakeBurst; b <= 0 || b > time.Minute {
		return usagef("-h3-handshake-burst: want 0 < duration <= 1m, got %v", b)
	}
	o.H3.NoInitialFilter = !*initialFilter
	if s := o.H3.HandshakeShare; !(s > 0 && s <= 1) {
		return usagef("-h3-handshake-share: want 0 < share <= 1 (1: no gate), got %v", s)
	}
	if o.H3.SourceConns < -1 || o.H3.SourceRate < -1 {
		return usagef("-h3-source-conns and -h3-source-rate must be >= 0 (0: half the global bound), or -1 for none of their own")
	}
	if o.MaxStreamDuration <= 0 {
		return usagef("-max-stream-duration must be > 0")
	}
	if b := o.Timeouts.H2StreamBuffer; b < 64<<10 || b >= 4<<20 {
		return usagef("-h2-stream-buffer: want 65536 <= bytes < 4194304, got %d", b)
	}
	pol, err := kv.ParseFsyncPolicy(*fsync)
	if err != nil {
		return usagef("-appendfsync: %v", err)
	}
	o.KV.Fsync = pol
	o.Repl.Token = o.AuthToken
	o.Repl.Logf = func(format string, args ...any) { fmt.Fprintf(env.stderr, format+"\n", args...) }
	if o.RateLimit < 0 || o.Repl.Backlog < 0 {
		return usagef("-rate-limit and -repl-backlog must be >= 0")
	}
	o.KV.Logf = func(format string, args ...any) { fmt.Fprintf(env.stderr, format+"\n", args...) }
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := bulkf.apply(&o); err != nil {
		return err
	}
	if err := dataf.apply(ctx, &o, env.stderr); err != nil {
		return err
	}
	o.Listen, _ = ctx.Value(listenKey{}).(func(network, address string) (net.Listener, error))
	var endRecord func() error
	if o.Record, endRecord, err = record.open(fs, env.stderr); err != nil {
		return err
	}
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		return errors.Join(err, endRecord())
	}
	if err := reportCert(env, srv, *certOut); err != nil {
		srv.Close()
		return err
	}
	// One machine-readable line, so that scripts and the study runner can
	// use port 0 and learn the ports.
	line := fmt.Sprintf("listening http=%s grpc=%s", srv.HTTPAddr(), srv.GRPCAddr())
	if srv.RESPAddr() != "" {
		line += " resp=" + srv.RESPAddr()
	}
	if srv.HTTPSAddr() != "" {
		line += " https=" + srv.HTTPSAddr()
	}
	if srv.H3Addr() != "" {
		line += " h3=" + srv.H3Addr()
	}
	fmt.Fprintln(env.stdout, line)
	// Until a signal, or until a listener fails: then the command exits
	// non-zero with the failure rather than run on with a dead face.
	select {
	case <-ctx.Done():
	case <-srv.Failed():
		fmt.Fprintf(env.stderr, "serve: %v; shutting down\n", srv.Err())
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(srv.Err(), srv.Shutdown(sctx), endRecord())
}

// reportCert prints the TLS faces' certificate's fingerprints on stderr
// (a client pins them) and writes it to path if asked.
func reportCert(env *cliEnv, srv *server.Server, path string) error {
	c := srv.Cert()
	if c.SHA256 == "" {
		if path != "" {
			return usagef("-cert-out needs --https or --http3")
		}
		return nil
	}
	kind := "from --tls-cert"
	if c.Generated {
		kind = "self-signed, generated"
	}
	fmt.Fprintf(env.stderr, "TLS certificate (%s): sha256 %s spki-sha256 %s\n", kind, c.SHA256, c.SPKI)
	if path != "" {
		if err := os.WriteFile(path, c.PEM, 0o644); err != nil {
			return fmt.Errorf("-cert-out: %w", err)
		}
	}
	return nil
}

// listenKey carries, in serve's context, a function that opens serve's
// listeners in place of net.Listen: tests hand it listeners that fail.
type listenKey struct{}

// startCPUProfile profiles the process into path until the returned stop
// runs (after the server has shut down).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
