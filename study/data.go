package study

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/results"
)

// Data is the user's records for a study (study --data, or data: in a
// study file): the reference server serves them at /records instead of
// its users, and the load checks every reply against them.
type Data struct {
	File string
	// Key, Proto (or Protoset) and Message are serve's --data-key,
	// --proto (--protoset) and --message.
	Key, Proto, Protoset, Message string
	// Formats, if set, are the only formats studied (codec names; json
	// stands for both JSON libraries).
	Formats []string
}

// ErrData is a study that cannot run on the given data (it wraps
// payload.ErrData when a record is refused).
var ErrData = errors.New("study --data")

// WithData makes def's reference-server REST cells of the user scenarios
// (crud, get, list, create) run scenario records on d's records, each
// server serving only its cell's format, and payload-size measure the
// records' list. The records are read and checked here, once, before any
// server starts: a record a studied format cannot carry unchanged stops
// the study with its index and why.
func WithData(ctx context.Context, def Definition, d Data) (Definition, error) {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	d.File, d.Proto, d.Protoset = abs(d.File), abs(d.Proto), abs(d.Protoset)
	var formats []string // codec names studied
	for _, f := range d.Formats {
		formats = append(formats, f)
		if f == "json" {
			formats = append(formats, "json-fast")
		}
	}
	schema, protoset := d.Proto, false
	if d.Protoset != "" {
		schema, protoset = d.Protoset, true
	}
	if d.Formats == nil && schema == "" {
		formats = slices.DeleteFunc(slices.Clone(payload.DataFormats), func(f string) bool { return f == "protobuf" })
	} else if d.Formats == nil {
		formats = payload.DataFormats
	}
	ds, err := payload.LoadDatasetFile(ctx, d.File, schema, protoset, d.Message, payload.DataOptions{Key: d.Key, Formats: formats})
	if err != nil {
		if errors.Is(err, payload.ErrInput) || !strings.Contains(err.Error(), ": record ") {
			return def, fmt.Errorf("%w: %w", ErrData, err)
		}
		return def, fmt.Errorf("%w: %w (leave a format out with --formats)", ErrData, err)
	}
	serve := []string{"--data", d.File, "--data-key", ds.Key}
	if d.Proto != "" {
		serve = append(serve, "--proto", d.Proto)
	}
	if d.Protoset != "" {
		serve = append(serve, "--protoset", d.Protoset)
	}
	if d.Message != "" {
		serve = append(serve, "--message", d.Message)
	}
	what := fmt.Sprintf("%d records of %s (key %s)", ds.Len(), filepath.Base(d.File), ds.Key)
	if def.Measure != nil && def.Name == "payload-size" {
		def.Measure = func(c Context) ([]results.Payload, error) {
			return measureRecordPayloads(context.Background(), ds)
		}
		def.Description = "GET /records in every format the data can be served in: " + what + "; the body, and the response bytes on the socket per transport on a warm connection."
		def.Warnings = append(slices.Clone(def.Warnings), "the records are measured over REST: the server serves them over gRPC too (wirebench.records.Records, with a schema), where study grpc-vs-rest --data measures them")
		return def, nil
	}
	var cells []Cell
	var left []string
	for _, c := range def.Cells {
		so := c.Load.Scenario
		grpcCell := so != nil && so.Transport == scenario.TransportGRPC
		if c.Server == nil || !isReference(c.Server.Command) || so == nil || grpcCell && ds.Service() == nil ||
			!slices.Contains([]string{scenario.CRUD, scenario.Get, scenario.List, scenario.Create}, so.Name) {
			cells = append(cells, c)
			continue
		}
		format := cmp.Or(so.Format, "json")
		if grpcCell { // wirebench.records.Records, built from the schema
			format = "protobuf"
		}
		if !slices.Contains(ds.Formats(), format) {
			left = append(left, fmt.Sprintf("%s (%s)", c.ID(), ds.NotServed()[format]))
			continue
		}
		rs := *so
		rs.Name, rs.Data, rs.Records = scenario.Records, d.File, ds
		srv := *c.Server
		srv.Command = append(slices.Clone(srv.Command), serve...)
		srv.Command = append(srv.Command, "--data-formats", format)
		c.Server, c.Load.Scenario = &srv, &rs
		c.ServeArgs = append(slices.Clone(c.ServeArgs), "--data", filepath.Base(d.File))
		cells = append(cells, c)
	}
	if countRecords(cells) == 0 {
		return def, fmt.Errorf("%w: study %s has no REST cell of the reference API's user scenarios to run on the data", ErrData, def.Name)
	}
	def.Cells = cells
	def.Warnings = append(slices.Clone(def.Warnings), "on the user's data the server holds each record as a schema-less program would "+
		"(maps for JSON, CBOR and msgpack, TOON's ordered objects, protobuf as dynamicpb messages from the schema read at run time): "+
		"typed structs and generated protobuf code cost less per request, so these figures compare the formats' generic paths")
	if len(left) > 0 {
		def.Warnings = append(slices.Clone(def.Warnings), "left out on the data: "+strings.Join(left, "; "))
	}
	def.Description += " On the user's data: " + what + ", served at /records; each iteration lists them, creates a copy of one under a new key, gets one, replaces the copy and deletes it, every reply decoded and compared with the file."
	return def, nil
}

func countRecords(cells []Cell) int {
	n := 0
	for _, c := range cells {
		if c.Load.Scenario != nil && c.Load.Scenario.Name == scenario.Records {
			n++
		}
	}
	return n
}
