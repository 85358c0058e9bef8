package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/idleread"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/server"
	serveflags "github.com/wirebench/wirebench/server/flags"
)

func init() {
	register("serve", command{
		summary: "run the reference API (REST over HTTP/1.1 and h2c, TLS and HTTP/3 if asked; gRPC)",
		run:     runServe,
	})
}

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "serve", "[flags]")
	var f serveflags.Serve
	f.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := f.Check(); err != nil {
		return err
	}
	if err := measure.PinList(f.CPUs); errors.Is(err, measure.ErrCPUList) {
		return usagef("-cpus %s", strings.TrimPrefix(err.Error(), measure.ErrCPUList.Error()+": "))
	} else if err != nil {
		return err
	}
	atLeastTwoProcs()
	if f.CPUProfile != "" {
		stop, err := startCPUProfile(f.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	endRecord, err := f.Apply(ctx, fs, env.stderr)
	if err != nil {
		return err
	}
	o := f.Options
	o.Listen, _ = ctx.Value(listenKey{}).(func(network, address string) (net.Listener, error))
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		return errors.Join(err, endRecord())
	}
	if err := reportCert(env, srv, f.CertOut); err != nil {
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

// atLeastTwoProcs gives the server two Ps on one CPU, unless GOMAXPROCS
// is set. A large list's encoding holds its P for tens
// of milliseconds, and with one P nothing else runs meanwhile: the Go
// scheduler polls the network only when no goroutine is runnable, or
// every 10 ms (sysmon), and preempts the encoding about as often (an
// execution trace of HTTP/3 never-read streams on one CPU: encodings ran
// 15-60 ms between preemptions, a victim's stream goroutine waited up to
// 71 ms to run). With two Ps the big slots (httpapi) leave one to the
// network, and the kernel shares the CPU between the two threads, running
// the one woken by a packet soon: the victim's p99 under those attacks
// went from 25-94x its quiet p99 to 0.8-1.0x (docs/limits.md). A small
// GET's and a list's throughput over HTTP/1.1 moved within the shared
// VM's noise, HTTP/3's small GETs were faster (4,336-4,925/s against
// 3,025-3,258/s). RESP's event loop (one per CPU) waits in epoll_wait
// itself when a P is spare, and the second P is that spare one: with one
// P the loop parked in the netpoller instead, its epoll set nested in the
// runtime's (kv/resp/loop_linux.go, docs/kv.md).
//
// The CPUs are the runtime's choice, which follows a container's CPU
// quota: idleread counts those, not the two Ps (with a quota of one CPU on
// a larger host, NumCPU is the host's and its yield would never fire).
func atLeastTwoProcs() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 2 {
		idleread.CapProcessors(runtime.GOMAXPROCS(0))
		runtime.GOMAXPROCS(2)
	}
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
