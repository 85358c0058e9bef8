package main

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/spec"
)

// grpcFlags are the flags of --grpc pkg.Service/Method: any method of
// any gRPC server (package load/grpcany).
type grpcFlags struct {
	o   grpcany.Options // --grpc's value is f.stream.GRPC, shared with --stream
	tls bool            // --tls: host:port over TLS, as https://host:port
}

func (g *grpcFlags) register(fs *pflag.FlagSet) {
	g.registerDescriptors(fs)
	fs.StringVar(&g.o.Data, "data", "", "--grpc: the request as a JSON `template`: {{.N}} request number, {{.I}} message of a stream, {{newUUID}}, {{randomInt 1 100}}, ghz's names; --scenario records: the records file the server serves (serve --data FILE), every reply checked against it")
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

// grpcClient is the --grpc METHOD client against host:port: usage errors
// for its options, a failure (exit 1) for a server that cannot be asked.
func (f *loadFlags) grpcClient(c *spec.Client, fs *pflag.FlagSet, target string) (func(error) error, error) {
	o := f.grpc.o
	o.Options = f.raw.Options
	o.Method, o.Metadata, o.Protocol = f.stream.GRPC, f.hdrs, f.kv.Options.Protocol
	o.DataFile = f.flow.data // --data-file: JSON lines, a request each
	if fs.Changed("messages") {
		o.Messages = f.stream.Messages
	}
	switch {
	case f.scenario != "" || f.stream.Kind != "" || f.browser.Kind != "" || f.replay.file != "" || f.flow.file != "":
		return nil, loadUsagef("--grpc METHOD runs on its own: drop --scenario, --stream, --browser, --replay, --flow")
	case fs.Changed("transport") && f.raw.Transport != "grpc":
		return nil, loadUsagef("--grpc METHOD runs over gRPC's own transport: drop --transport")
	case f.body != "" || fs.Changed("method"):
		return nil, loadUsagef("--grpc METHOD takes its request from --data or --data-file, not -b or -m")
	}
	var err error
	if o.URL, err = f.grpc.tlsURL(strings.TrimPrefix(target, "grpc://")); err != nil {
		return nil, err
	}
	c.GRPC = &o
	return func(err error) error {
		if errors.Is(err, grpcany.ErrOptions) {
			return loadUsagef("%s", cliMessage(err))
		}
		return errors.New(cliMessage(err))
	}, nil
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

// grpcReplayClient replays a recording of gRPC calls (replay.FormatGRPC)
// through package grpcany, with --grpc's descriptors.
func (f *loadFlags) grpcReplayClient(c *spec.Client, o replay.Options) (func(error) error, error) {
	switch {
	case o.Record != nil:
		o.Record.Close()
		return nil, loadUsagef("--record writes HTTP requests: a recording of gRPC calls is replayed without it")
	case o.AsFormat != "" || o.Host != "" || len(o.DropHeaders) > 0 || o.DryRun:
		return nil, loadUsagef("--as-format, --rewrite-host, --drop-header and --dry-run are HTTP replay's: not for a recording of gRPC calls")
	case f.raw.Transport != "" && f.raw.Transport != "grpc":
		return nil, loadUsagef("a recording of gRPC calls is replayed over gRPC's own transport: drop --transport")
	}
	var err error
	if o.URL, err = f.grpc.tlsURL(strings.TrimPrefix(o.URL, "grpc://")); err != nil {
		return nil, err
	}
	c.Replay, c.GRPC = &o, &f.grpc.o
	return func(err error) error {
		if errors.Is(err, grpcany.ErrOptions) || errors.Is(err, replay.ErrReplay) {
			return loadUsagef("%s", strings.TrimPrefix(cliMessage(err), "replay: "))
		}
		return errors.New(cliMessage(err))
	}, nil
}
