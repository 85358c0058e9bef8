package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/payload"
)

// recordsFlags are --scenario records' own flags. Its records file is
// --data and its schema --proto or --protoset: the flags --grpc METHOD
// reads its request template and descriptors from (load_grpc.go), which
// the two never share a run.
type recordsFlags struct{ key, message string }

func (r *recordsFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.key, "data-key", "", "--scenario records: the `member` keying each record, as serve's --data-key (default: id, else the first member unique in every record)")
	fs.StringVar(&r.message, "message", "", "--scenario records: the records' protobuf message by full name (pkg.Msg), as serve's --message; default: the schema's only message")
}

// recordsData reads the file the server serves (serve --data FILE): the
// records scenario checks every reply against it. A file the run's
// format cannot carry unchanged is refused here, naming the record.
func (f *loadFlags) recordsData() error {
	g := f.grpc.o
	switch {
	case f.scenario != scenario.Records:
		return nil
	case g.Data == "":
		return loadUsagef("--scenario records needs --data FILE: the records the server serves (serve --data FILE)")
	case len(g.Protos) > 1 || len(g.Protos) == 1 && g.Protoset != "":
		return loadUsagef("--scenario records: give one schema, --proto FILE or --protoset FILE")
	case len(g.ImportPaths) > 0:
		return loadUsagef("--import-path applies to --grpc pkg.Service/Method")
	}
	schema, protoset := g.Protoset, true
	if len(g.Protos) == 1 {
		schema, protoset = g.Protos[0], false
	}
	formats := []string{f.sc.Format}
	if e, ok := codec.Lookup(f.sc.Format); ok && e.Codec.Name() == "json" {
		formats = append(formats, "json-fast") // the client decodes JSON with it
	}
	if f.raw.Transport == scenario.TransportGRPC {
		formats = []string{"protobuf"} // wirebench.records.Records, from the schema
	}
	ctx := f.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ds, err := payload.LoadDatasetFile(ctx, g.Data, schema, protoset, f.records.message,
		payload.DataOptions{Key: f.records.key, Formats: formats})
	if err != nil {
		return usageError{Err: err}
	}
	f.sc.Data, f.sc.Records = g.Data, ds
	return nil
}
