package flags

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load/flow"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/spec"
	"github.com/wirebench/wirebench/payload"
)

// kvClient is a kv-* client: RESP to redis://host:port, or wirebench's
// /kv over HTTP to http://host:port.
func (f *Load) kvClient(c *spec.Client, url string) error {
	if err := f.KV.Read(f.fs); err != nil {
		return err
	}
	o := &f.KV.Options
	o.Name, o.URL, o.Timeout = f.Scenario, url, f.Options.Timeout
	c.KV = o
	return nil
}

// streamClient is a --stream or --browser client against the REST port
// at url (and --grpc for the native gRPC kinds).
func (f *Load) streamClient(c *spec.Client, url string) error {
	if f.Stream.Kind != "" && f.Browser.Kind != "" {
		return Usagef("--stream and --browser: pick one")
	}
	if f.Stream.Kind != "" {
		f.Stream.Options = f.Raw.Options // h3: rest-list, ndjson, sse
		c.Stream = &f.Stream
		return nil
	}
	if f.Options.Concurrency != 1 {
		return Usagef("--browser runs one page: use -c 1")
	}
	f.Browser.URL = url
	c.Browser = &f.Browser
	return nil
}

// GRPC are the flags of --grpc pkg.Service/Method: any method of any
// gRPC server (package load/grpcany).
type GRPC struct {
	Options grpcany.Options // --grpc's value is Load.Stream.GRPC, shared with --stream
	TLS     bool            // --tls: host:port over TLS, as https://host:port
}

// Register adds --grpc METHOD's flags.
func (g *GRPC) Register(fs *pflag.FlagSet) {
	g.RegisterDescriptors(fs)
	fs.StringVar(&g.Options.Data, "data", "", "--grpc: the request as a JSON `template`: {{.N}} request number, {{.I}} message of a stream, {{newUUID}}, {{randomInt 1 100}}, ghz's names; --scenario records: the records file the server serves (serve --data FILE), every reply checked against it")
	fs.StringArrayVar(&g.Options.Expect, "expect", nil, "--grpc: check every response: `path==value` or path!=value, e.g. 'name==\"x\"', 'items[0].id==3', 'status==ACTIVE' (repeatable)")
}

// RegisterDescriptors adds where a method's descriptors come from and
// --tls: load's --grpc and replay's recordings of gRPC calls.
func (g *GRPC) RegisterDescriptors(fs *pflag.FlagSet) {
	fs.StringArrayVar(&g.Options.Protos, "proto", nil, "--grpc: a .proto `file` defining the method (repeatable), compiled in process; none: --protoset or the server's reflection")
	fs.StringArrayVar(&g.Options.ImportPaths, "import-path", nil, "--grpc: a `dir` to find the .proto files and their imports in (repeatable; default: each file's own)")
	fs.StringVar(&g.Options.Protoset, "protoset", "", "--grpc: the method's descriptors as a FileDescriptorSet `file` (protoc --include_imports -o, buf build -o)")
	fs.BoolVar(&g.TLS, "tls", false, "--grpc: call a host:port target over TLS (as https://host:port); with -k, --cacert, --cert and --key")
}

// IsMethod reports whether --grpc's value names a method (pkg.Service/
// Method) rather than the --stream kinds' gRPC address (host:port).
func IsMethod(v string) bool { return strings.Contains(v, "/") }

// grpcClient is the --grpc METHOD client against host:port: usage errors
// for its options, a failure for a server that cannot be asked.
func (f *Load) grpcClient(c *spec.Client, target string) (func(error) error, error) {
	fs := f.fs
	o := f.GRPC.Options
	o.Options = f.Raw.Options
	o.Method, o.Metadata, o.Protocol = f.Stream.GRPC, f.Headers, f.KV.Options.Protocol
	o.DataFile = f.Flow.Data // --data-file: JSON lines, a request each
	if fs.Changed("messages") {
		o.Messages = f.Stream.Messages
	}
	switch {
	case f.Scenario != "" || f.Stream.Kind != "" || f.Browser.Kind != "" || f.Replay.File != "" || f.Flow.File != "":
		return nil, Usagef("--grpc METHOD runs on its own: drop --scenario, --stream, --browser, --replay, --flow")
	case fs.Changed("transport") && f.Raw.Transport != "grpc":
		return nil, Usagef("--grpc METHOD runs over gRPC's own transport: drop --transport")
	case f.Body != "" || fs.Changed("method"):
		return nil, Usagef("--grpc METHOD takes its request from --data or --data-file, not -b or -m")
	}
	var err error
	if o.URL, err = f.GRPC.tlsURL(strings.TrimPrefix(target, "grpc://")); err != nil {
		return nil, err
	}
	c.GRPC = &o
	return func(err error) error {
		if errors.Is(err, grpcany.ErrOptions) {
			return Usagef("%s", Message(err))
		}
		return errors.New(Message(err))
	}, nil
}

// tlsURL is target over TLS when --tls asks for it.
func (g *GRPC) tlsURL(target string) (string, error) {
	switch {
	case !g.TLS || strings.HasPrefix(target, "https://"):
		return target, nil
	case strings.HasPrefix(target, "http://"):
		return "", Usagef("--tls with an http:// target: give host:port or https://host:port")
	}
	return "https://" + target, nil
}

// grpcReplayClient replays a recording of gRPC calls (replay.FormatGRPC)
// through package grpcany, with --grpc's descriptors.
func (f *Load) grpcReplayClient(c *spec.Client, o replay.Options) (func(error) error, error) {
	switch {
	case o.Record != nil:
		o.Record.Close()
		return nil, Usagef("--record writes HTTP requests: a recording of gRPC calls is replayed without it")
	case o.AsFormat != "" || o.Host != "" || len(o.DropHeaders) > 0 || o.DryRun:
		return nil, Usagef("--as-format, --rewrite-host, --drop-header and --dry-run are HTTP replay's: not for a recording of gRPC calls")
	case f.Raw.Transport != "" && f.Raw.Transport != "grpc":
		return nil, Usagef("a recording of gRPC calls is replayed over gRPC's own transport: drop --transport")
	}
	var err error
	if o.URL, err = f.GRPC.tlsURL(strings.TrimPrefix(o.URL, "grpc://")); err != nil {
		return nil, err
	}
	c.Replay, c.GRPC = &o, &f.GRPC.Options
	return func(err error) error {
		if errors.Is(err, grpcany.ErrOptions) || errors.Is(err, replay.ErrReplay) {
			return Usagef("%s", strings.TrimPrefix(Message(err), "replay: "))
		}
		return errors.New(Message(err))
	}, nil
}

// Flow are --flow and --data-file (load and capacity).
type Flow struct{ File, Data string }

// Register adds --flow and --data-file.
func (f *Flow) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.File, "flow", "", "run the multi-step flow in this YAML `file` (docs/flows.md); URL is the base URL its steps' paths are below")
	fs.StringVar(&f.Data, "data-file", "", "--flow: `file` feeding the flow's variables, a row per iteration: CSV with a header line, or JSON lines; --grpc METHOD: requests as JSON lines, used in turn (each a --data template)")
}

// Check refuses the flags a flow does not take: it names its own
// requests, checks and body.
func (f *Flow) Check(fs *pflag.FlagSet) error {
	if f.File == "" {
		if f.Data != "" && !(fs.Changed("grpc") && IsMethod(fs.Lookup("grpc").Value.String())) {
			return Usagef("--data-file feeds a --flow's variables (or a --grpc method's requests): give --flow")
		}
		return nil
	}
	for _, name := range []string{"scenario", "stream", "browser", "replay", "grpc", "method", "body", "expect-status", "expect-body-contains", "compression", "0rtt", "record"} {
		if fl := fs.Lookup(name); fl != nil && fl.Changed {
			return Usagef("--%s does not apply to --flow: the flow file names its requests, headers, bodies and checks", name)
		}
	}
	return nil
}

// InputError is a file given that cannot be used (a flow, a records
// file): exit 2 as bad usage is, with the file's own message.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// ExitCode is 2: the command was given something it cannot use.
func (InputError) ExitCode() int { return 2 }

// flowError is a flow or data file that cannot run: one line naming the
// file and line, exit 2, before any load.
func flowError(err error) error {
	if errors.Is(err, flow.ErrFlow) {
		return InputError{err}
	}
	return Usagef("%s", Message(err))
}

// flowClient reads --flow (and --data-file) for the base URL.
func (f *Load) flowClient(c *spec.Client, url string) (func(error) error, error) {
	fl, err := flow.Load(f.Flow.File, f.Flow.Data)
	if err != nil {
		return nil, flowError(err)
	}
	if err := fl.AddHeaders(f.Headers); err != nil { // -H: on every step
		return nil, Usagef("-H: %s", Message(err))
	}
	f.Raw.URL, f.Raw.Timeout = url, f.Options.Timeout
	c.Flow, c.FlowConn = fl, flow.Options{Options: f.Raw.Options, Format: f.Ref.Format}
	return flowError, nil
}

// Records are --scenario records' own flags. Its records file is --data
// and its schema --proto or --protoset: the flags --grpc METHOD reads its
// request template and descriptors from, which the two never share a run.
type Records struct{ Key, Message string }

// Register adds --data-key and --message.
func (r *Records) Register(fs *pflag.FlagSet) {
	fs.StringVar(&r.Key, "data-key", "", "--scenario records: the `member` keying each record, as serve's --data-key (default: id, else the first member unique in every record)")
	fs.StringVar(&r.Message, "message", "", "--scenario records: the records' protobuf message by full name (pkg.Msg), as serve's --message; default: the schema's only message")
}

// checkRecords refuses --data-key and --message without --scenario
// records. Check and Made both run it: capacity takes its client through
// Made alone, with the records flags as load has them.
func (f *Load) checkRecords(fs *pflag.FlagSet) error {
	if fs != nil && (fs.Changed("data-key") || fs.Changed("message")) && f.Scenario != scenario.Records {
		return Usagef("--data-key and --message apply to --scenario records")
	}
	return nil
}

// recordsData reads the file the server serves (serve --data FILE): the
// records scenario checks every reply against it. A file the run's
// format cannot carry unchanged is refused here, naming the record.
func (f *Load) recordsData() error {
	g := f.GRPC.Options
	switch {
	case f.Scenario != scenario.Records:
		return nil
	case g.Data == "":
		return Usagef("--scenario records needs --data FILE: the records the server serves (serve --data FILE)")
	case len(g.Protos) > 1 || len(g.Protos) == 1 && g.Protoset != "":
		return Usagef("--scenario records: give one schema, --proto FILE or --protoset FILE")
	case len(g.ImportPaths) > 0:
		return Usagef("--import-path applies to --grpc pkg.Service/Method")
	}
	schema, protoset := g.Protoset, true
	if len(g.Protos) == 1 {
		schema, protoset = g.Protos[0], false
	}
	formats := []string{f.Ref.Format}
	if e, ok := codec.Lookup(f.Ref.Format); ok && e.Codec.Name() == "json" {
		formats = append(formats, "json-fast") // the client decodes JSON with it
	}
	if f.Raw.Transport == scenario.TransportGRPC {
		formats = []string{"protobuf"} // wirebench.records.Records, from the schema
	}
	ctx := f.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ds, err := payload.LoadDatasetFile(ctx, g.Data, schema, protoset, f.Records.Message,
		payload.DataOptions{Key: f.Records.Key, Formats: formats})
	if err != nil {
		return UsageError{Err: err}
	}
	f.Ref.Data, f.Ref.Records = g.Data, ds
	return nil
}
