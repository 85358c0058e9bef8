package flags

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/kv"
	lflags "github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/server"
)

// Limits of serve's numbers that size work done before it listens:
// --seed-users 9223372036854775807 looped for ever in the seed, deaf to
// SIGTERM (docs/limits.md).
const (
	MaxSeed      = 1_000_000 // --seed-users, --seed-todos: each list is served whole
	MaxRateLimit = 1e9       // --rate-limit, per second per client
)

// Serve are wirebench serve's flags: Options as they set them, and what
// the command does around the server (CPUs, a profile, the certificate
// written out).
type Serve struct {
	Options                   server.Options
	CertOut, CPUs, CPUProfile string
	initialFilter             bool
	fsync                     string
	bulk                      bulkFlags
	data                      dataFlags
	record                    recordFlags
}

// Register adds serve's flags to fs.
func (f *Serve) Register(fs *pflag.FlagSet) {
	o := &f.Options
	d := server.DefaultTimeouts
	fs.StringVar(&o.HTTPAddr, "http", server.DefaultHTTPAddr, "`address` of the REST API (HTTP/1.1 and h2c); port 0 picks a free one")
	fs.StringVar(&o.GRPCAddr, "grpc", server.DefaultGRPCAddr, "`address` of the gRPC API; port 0 picks a free one")
	fs.BoolVar(&o.NoGRPC, "no-grpc", false, "do not serve gRPC")
	fs.StringVar(&o.H3.Addr, "http3", "", "UDP `address` of the REST API over HTTP/3 (QUIC, quic-go); port 0 picks a free one; empty: off (docs/http3.md)")
	fs.StringVar(&o.HTTPSAddr, "https", "", "`address` of the REST API over TLS (HTTP/1.1 and h2, Alt-Svc to --http3); port 0 picks a free one; empty: off")
	fs.StringVar(&o.TLS.CertFile, "tls-cert", "", "--https and --http3: PEM certificate `file`; none: a self-signed ECDSA certificate is generated and its fingerprints printed")
	fs.StringVar(&o.TLS.KeyFile, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.StringVar(&f.CertOut, "cert-out", "", "--https and --http3: write the certificate served (generated or not) to this PEM `file`, for load --cacert")
	fs.IntVar(&o.H3.MaxStreams, "h3-max-streams", server.DefaultH3MaxStreams, "HTTP/3: concurrent request streams per QUIC connection")
	fs.IntVar(&o.H3.MaxConns, "h3-max-conns", server.DefaultH3MaxConns, "HTTP/3: QUIC connections open at once, handshakes included; past it a handshake is refused at once (CONNECTION_REFUSED)")
	fs.IntVar(&o.H3.HandshakeRate, "h3-handshake-rate", server.DefaultH3HandshakeRate, "HTTP/3: new QUIC connections admitted per second (a burst of --h3-handshake-burst's worth); past it a new connection's Initial packets are dropped without a reply (the client resends them); -1: unbounded")
	fs.DurationVar(&o.H3.HandshakeBurst, "h3-handshake-burst", server.DefaultH3HandshakeBurst, "HTTP/3: how much time's worth of --h3-handshake-rate and --h3-source-rate may start at once (at least one handshake)")
	fs.BoolVar(&f.initialFilter, "h3-initial-filter", true, "HTTP/3: drop Initial packets past the handshake rates at the socket, without a reply, before quic-go reads them; false: quic-go refuses each one (CONNECTION_REFUSED, sealed and sent)")
	fs.IntVar(&o.H3.SourceConns, "h3-source-conns", 0, "HTTP/3: QUIC connections open at once from one source (IPv4 address, IPv6 /64), handshakes included; 0: half of --h3-max-conns; -1: only --h3-max-conns")
	fs.IntVar(&o.H3.SourceRate, "h3-source-rate", 0, "HTTP/3: new QUIC connections per second from one source (IPv4 address, IPv6 /64), past it dropped like --h3-handshake-rate's; 0: half of --h3-handshake-rate; -1: only --h3-handshake-rate")
	fs.Float64Var(&o.H3.HandshakeShare, "h3-handshake-share", server.DefaultH3HandshakeShare, "HTTP/3: share of time the handshakes' cryptography may take, one at a time per lane (a lane per four CPUs), each lane resting after a handshake; waiting handshakes are served in turn by source; 1: no gate")
	fs.Float64Var(&o.H3.SourceHandshakeShare, "h3-source-handshake-share", 0, "HTTP/3: share of the handshake gate's time one source's (IPv4 address, IPv6 /64) handshakes may take, the source resting after each while other sources' handshakes go on; 0: half of --h3-handshake-share; -1: --h3-handshake-share")
	fs.IntVar(&o.H3.RetryAfter, "h3-retry-after", server.DefaultH3RetryAfter, "HTTP/3: a source's handshakes left unanswered at once (the server's flight out, nothing back yet) past which its new connections are sent a Retry (QUIC address validation: a client that reads comes back within a round trip, one that never reads gets no handshake); -1: never")
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
	fs.StringVar(&f.fsync, "appendfsync", "everysec", "KV AOF fsync `policy`: always (ack after fsync, group commit), everysec, no (Redis's meanings)")
	fs.BoolVar(&o.KV.Repair, "aof-repair", false, "start even when the AOF is damaged (anything but an incomplete final record): truncate it at the bad record and log what was dropped (docs/kv-durability.md)")
	f.bulk.register(fs)
	f.data.register(fs)
	fs.StringVar(&o.Repl.ReplicaOf, "replica-of", "", "leader's HTTP base `URL` (http://127.0.0.1:8080): this server becomes a read-only KV replica of it")
	fs.Int64Var(&o.Repl.Backlog, "repl-backlog", 0, "replication backlog in `bytes` (default 64 MiB): a follower further behind resyncs from a snapshot")
	fs.StringVar(&o.AuthToken, "auth-token", os.Getenv("WIREBENCH_AUTH_TOKEN"), "`secret` required by /kv/ (Authorization: Bearer) and RESP (AUTH), and sent to the leader by --replica-of (default $WIREBENCH_AUTH_TOKEN)")
	fs.Float64Var(&o.RateLimit, "rate-limit", 0, "KV requests (RESP commands) a `second` per client IP, token bucket with one second of burst; 0: none")
	fs.StringVar(&f.CPUs, "cpus", "", "pin the server to these `CPUs` (e.g. 1 or 2,3), so a load client on other CPUs measures it fairly")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile of the server's whole run to `file` (go tool pprof; bench/pgo.sh merges such profiles into cmd/wirebench/default.pgo)")
	f.record.register(fs)
}

// Check refuses values out of range and flags that contradict each
// other, with one line each naming the flag (lflags.UsageError).
func (f *Serve) Check() error {
	o := &f.Options
	if err := lflags.First(
		lflags.CheckInt("--seed-users", int64(o.SeedUsers), 0, MaxSeed, ""),
		lflags.CheckInt("--seed-todos", int64(o.SeedTodos), 0, MaxSeed, ""),
		lflags.CheckFloat("--rate-limit", o.RateLimit, 0, MaxRateLimit),
	); err != nil {
		return err
	}
	if o.Engine != server.EngineNetHTTP && o.Engine != server.EngineFastHTTP {
		return lflags.Usagef("-engine: want %s or %s, got %q", server.EngineNetHTTP, server.EngineFastHTTP, o.Engine)
	}
	if o.HTTP.JSONLib != "std" && o.HTTP.JSONLib != "fast" {
		return lflags.Usagef("-json-lib: want std or fast, got %q", o.HTTP.JSONLib)
	}
	if o.SeedUsers < 0 || o.SeedTodos < 0 || o.HTTP.MaxBody <= 0 || o.HTTP.MaxReplyBytes <= 0 {
		return lflags.Usagef("-seed-users, -seed-todos must be >= 0, -max-body and -max-reply-memory > 0")
	}
	if t := o.Timeouts; t.ReadHeader <= 0 || t.Read <= 0 || t.Write <= 0 || t.Idle <= 0 || t.H2MaxStreams <= 0 {
		return lflags.Usagef("-read-header-timeout, -read-timeout, -write-timeout, -idle-timeout and -h2-max-streams must be > 0")
	}
	if o.H3.MaxStreams <= 0 || o.H3.MaxConns <= 0 || o.H3.IdleTimeout <= 0 {
		return lflags.Usagef("-h3-max-streams, -h3-max-conns and -h3-idle-timeout must be > 0")
	}
	if o.H3.HandshakeRate == 0 || o.H3.HandshakeRate < -1 {
		return lflags.Usagef("-h3-handshake-rate must be > 0, or -1 for unbounded")
	}
	if b := o.H3.HandshakeBurst; b <= 0 || b > time.Minute {
		return lflags.Usagef("-h3-handshake-burst: want 0 < duration <= 1m, got %v", b)
	}
	o.H3.NoInitialFilter = !f.initialFilter
	if s := o.H3.HandshakeShare; !(s > 0 && s <= 1) {
		return lflags.Usagef("-h3-handshake-share: want 0 < share <= 1 (1: no gate), got %v", s)
	}
	if s := o.H3.SourceHandshakeShare; s != -1 && !(s >= 0 && s <= o.H3.HandshakeShare) {
		return lflags.Usagef("-h3-source-handshake-share: want 0 <= share <= -h3-handshake-share (0: half of it), or -1 for none of its own, got %v", s)
	}
	if o.H3.RetryAfter == 0 || o.H3.RetryAfter < -1 {
		return lflags.Usagef("-h3-retry-after must be > 0, or -1 for never")
	}
	if o.H3.SourceConns < -1 || o.H3.SourceRate < -1 {
		return lflags.Usagef("-h3-source-conns and -h3-source-rate must be >= 0 (0: half the global bound), or -1 for none of their own")
	}
	if o.MaxStreamDuration <= 0 {
		return lflags.Usagef("-max-stream-duration must be > 0")
	}
	if b := o.Timeouts.H2StreamBuffer; b < 64<<10 || b >= 4<<20 {
		return lflags.Usagef("-h2-stream-buffer: want 65536 <= bytes < 4194304, got %d", b)
	}
	pol, err := kv.ParseFsyncPolicy(f.fsync)
	if err != nil {
		return lflags.Usagef("-appendfsync: %v", err)
	}
	o.KV.Fsync = pol
	o.Repl.Token = o.AuthToken
	if o.RateLimit < 0 || o.Repl.Backlog < 0 {
		return lflags.Usagef("-rate-limit and -repl-backlog must be >= 0")
	}
	return f.bulk.apply(o)
}

// Apply loads --data's records and opens --record's log into Options,
// saying on log what it serves; logf gets the KV store's and the
// replication's lines. done flushes and closes the log after the server
// shut down.
func (f *Serve) Apply(ctx context.Context, fs *pflag.FlagSet, log io.Writer) (done func() error, err error) {
	o := &f.Options
	logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	o.Repl.Logf, o.KV.Logf = logf, logf
	if err := f.data.apply(ctx, o, log); err != nil {
		return nil, err
	}
	if o.AuthToken != "" {
		// The server's own credential: redacted wherever a client
		// puts it, a path included.
		f.record.keep.Known = []string{o.AuthToken}
	}
	o.Record, done, err = f.record.open(fs, log)
	return done, err
}
