package flags

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	lflags "github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/server"
)

// dataFlags serve the user's records at /records (docs/payload.md).
type dataFlags struct {
	file, key, formats, proto, protoset, message string
	max                                          int
}

func (d *dataFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.file, "data", "", "serve the records of this `file` (a JSON array, JSON lines, or {\"things\": [...]}) at /records and /records/{key}, in every format that can carry them unchanged; a record one cannot is refused at start (docs/payload.md)")
	fs.StringVar(&d.key, "data-key", "", "--data: the `member` keying each record (default: id, else the first member unique in every record)")
	fs.StringVar(&d.formats, "data-formats", "", "--data: comma-separated `formats` to serve (json,toon,cbor,msgpack,protobuf; default: all, protobuf with --proto)")
	fs.StringVar(&d.proto, "proto", "", "--data: the records' protobuf schema, a .proto `file` compiled at run time")
	fs.StringVar(&d.protoset, "protoset", "", "--data: the records' protobuf schema as a FileDescriptorSet `file`")
	fs.StringVar(&d.message, "message", "", "--data: the records' message, by full name (pkg.Msg); default: the file's only message")
	fs.IntVar(&d.max, "data-max", payload.DefaultMaxRecords, "--data: most `records` held")
}

// apply loads the dataset into o; a dataset that cannot be served is a
// usage error naming the record and why (exit 2).
func (d *dataFlags) apply(ctx context.Context, o *server.Options, stderr io.Writer) error {
	if d.file == "" {
		if d.key != "" || d.formats != "" || d.proto != "" || d.protoset != "" || d.message != "" {
			return lflags.Usagef("--data-key, --data-formats, --proto, --protoset and --message need --data FILE")
		}
		return nil
	}
	if d.proto != "" && d.protoset != "" {
		return lflags.Usagef("--proto and --protoset: give one schema")
	}
	if d.max <= 0 {
		return lflags.Usagef("--data-max must be > 0")
	}
	do := payload.DataOptions{Key: d.key, MaxRecords: d.max}
	if d.formats != "" {
		for _, f := range strings.Split(d.formats, ",") {
			f = strings.TrimSpace(f)
			do.Formats = append(do.Formats, f)
			if f == "json" { // whichever library --json-lib picks
				do.Formats = append(do.Formats, "json-fast")
			}
		}
	}
	schema, protoset := d.proto, false
	if d.protoset != "" {
		schema, protoset = d.protoset, true
	}
	ds, err := payload.LoadDatasetFile(ctx, d.file, schema, protoset, d.message, do)
	if err != nil {
		return lflags.UsageError{Err: err}
	}
	o.HTTP.Records = ds
	fmt.Fprintf(stderr, "serving %d records of %s at /records/{%s} in %s\n", ds.Len(), d.file, ds.Key, strings.Join(ds.Formats(), ", "))
	return nil
}
