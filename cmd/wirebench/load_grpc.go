package main

import (
	"errors"
	"strings"

	"github.com/wirebench/wirebench/results"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/replay"
)

// grpcFlags are the flags of --grpc pkg.Service/Method: any method of
// any gRPC server (package load/grpcany).
type grpcFlags struct {
	o   grpcany.Options // --grpc's value is f.stream.GRPC, shared with --stream
	tls bool            // --tls: host:port over TLS, as https://host:port
}

func (g *grpcFlags) register(fs *pflag.FlagSet) {
	g.registerDescriptors(fs)
	fs.StringVar(&g.o.Data, "data", "", "--grpc: the request as a JSON `template`: {{.N}} request number, {{.I}} message of a stream, {{newUUID}}, {{randomInt 1 100}}, ghz's names")
	fs.StringArrayVar(&g.o.Expect, "expect", nil, "--grpc: check every response: `path==value` or path!=value, e.g. 'name==\"x\"', 'items[0].id==3', 'status==ACTIVE' (repeatable)")
}

// registerDescriptors registers where a method's descriptors come from
// and --tls: load's --grpc and replay's recordings of gRPC calls.
func (g *grpcFlags) registerDescriptors(fs *pflag.FlagSet) {
	fs.StringArrayVar(&g.o.Protos, "proto", nil, "--grpc: a .proto `file` defining the method (repeatable), compiled in process; none: --protoset or the server's reflection")
	fs.StringArrayVar(&g.o.ImportPaths, "import-path", nil, "--grpc: a `dir` to find the .proto files and their imports in (repeatable; default: each file's own)")
	fs.StringVar(&g.o.Protoset, "protoset", "", "--grpc: the method's descriptors as a FileDescriptorSet `file` (protoc --include_imports -o, buf build -o)")
	fs.BoolVar(&g.tls, "tls", false, "--grpc: call a host:port target over TLS (as https://host:port); with -k, --cacert, --cert and --key")
}

// isMethod reports whether --grpc's value names a method (pkg.Service/
// Method) rather than the --stream kinds' gRPC address (host:port).
func isMethod(v string) bool { return strings.Contains(v, "/") }

// grpcScenario builds the --grpc scenario against host:port.
func (f *loadFlags) grpcScenario(fs *pflag.FlagSet, target string) (load.Scenario, results.Config, error) {
	o := f.grpc.o
	o.Options = f.raw.Options
	o.Method, o.Metadata, o.Protocol = f.stream.GRPC, f.hdrs, f.kv.Protocol
	o.DataFile = f.flow.data // --data-file: JSON lines, a request each
	if fs.Changed("messages") {
		o.Messages = f.stream.Messages
	}
	switch {
	case f.scenario != "" || f.stream.Kind != "" || f.browser.Kind != "" || f.replay.file != "" || f.flow.file != "":
		return nil, results.Config{}, loadUsagef("--grpc METHOD runs on its own: drop --scenario, --stream, --browser, --replay, --flow")
	case fs.Changed("transport") && f.raw.Transport != "grpc":
		return nil, results.Config{}, loadUsagef("--grpc METHOD runs over gRPC's own transport: drop --transport")
	case f.body != "" || fs.Changed("method"):
		return nil, results.Config{}, loadUsagef("--grpc METHOD takes its request from --data or --data-file, not -b or -m")
	}
	var err error
	if o.URL, err = f.grpc.tlsURL(strings.TrimPrefix(target, "grpc://")); err != nil {
		return nil, results.Config{}, err
	}
	sc, err := grpcany.New(f.ctx, o)
	switch {
	case errors.Is(err, grpcany.ErrOptions):
		return nil, results.Config{}, loadUsagef("%s", cliMessage(err))
	case err != nil:
		return nil, results.Config{}, errors.New(cliMessage(err))
	}
	return sc, results.Config{Scenario: "grpc " + sc.Method().Name(), GRPC: results.NewClientOptions(sc.Options()), Kind: sc.Method().Kind()}, nil
}

// tlsURL is target over TLS when --tls asks for it.
func (g *grpcFlags) tlsURL(target string) (string, error) {
	switch {
	case !g.tls || strings.HasPrefix(target, "https://"):
		return target, nil
	case strings.HasPrefix(target, "http://"):
		return "", loadUsagef("--tls with an http:// target: give host:port or https://host:port")
	}
	return "https://" + target, nil
}

// grpcReplayScenario replays a recording of gRPC calls (replay.FormatGRPC)
// through package grpcany, and sets the run's open-loop schedule to it.
func (f *loadFlags) grpcReplayScenario(o replay.Options) (load.Scenario, results.Config, error) {
	switch {
	case o.Record != nil:
		o.Record.Close()
		return nil, results.Config{}, loadUsagef("--record writes HTTP requests: a recording of gRPC calls is replayed without it")
	case o.AsFormat != "" || o.Host != "" || len(o.DropHeaders) > 0 || o.DryRun:
		return nil, results.Config{}, loadUsagef("--as-format, --rewrite-host, --drop-header and --dry-run are HTTP replay's: not for a recording of gRPC calls")
	case f.raw.Transport != "" && f.raw.Transport != "grpc":
		return nil, results.Config{}, loadUsagef("a recording of gRPC calls is replayed over gRPC's own transport: drop --transport")
	}
	ro := grpcany.ReplayOptions{Options: f.grpc.o, File: o.File, Speed: o.Speed, Loop: o.Loop, MaxGap: o.MaxGap}
	ro.Options.Options = o.Options
	ro.Transport = ""
	var err error
	if ro.URL, err = f.grpc.tlsURL(strings.TrimPrefix(o.URL, "grpc://")); err != nil {
		return nil, results.Config{}, err
	}
	sc, err := grpcany.NewReplay(f.ctx, ro)
	switch {
	case errors.Is(err, grpcany.ErrOptions) || errors.Is(err, replay.ErrReplay):
		return nil, results.Config{}, loadUsagef("%s", strings.TrimPrefix(cliMessage(err), "replay: "))
	case err != nil:
		return nil, results.Config{}, errors.New(cliMessage(err))
	}
	f.o.Open, f.o.Pacer = true, sc.Pacer()
	if f.o.Duration == 0 {
		f.o.Duration = load.MaxDuration // until the recording ends
	}
	return sc, results.Config{Scenario: "replay grpc", Replay: results.NewClientOptions(ro)}, nil
}
