package study

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/payload"
)

// Records unlike the reference API's users: nested, with a uniform list.
const dataRecords = `{"shipments": [
{"id":101,"route":{"from":"OSL","to":"LIS","legs":2},"parcels":[{"kg":1.5,"fragile":false},{"kg":12,"fragile":true}]},
{"id":102,"route":{"from":"LIS","to":"OSL","legs":1},"parcels":[{"kg":0.25,"fragile":false}]},
{"id":205,"route":{"from":"AMS","to":"ATH","legs":3},"parcels":[]}
]}`

const dataProto = `syntax = "proto3";
package ship;
message Route { string from = 1; string to = 2; int32 legs = 3; }
message Parcel { double kg = 1; bool fragile = 2; }
message Shipment { int64 id = 1; Route route = 2; repeated Parcel parcels = 3; }
`

func dataFiles(t *testing.T, records string) (data, proto string) {
	t.Helper()
	dir := t.TempDir()
	data, proto = filepath.Join(dir, "ship.json"), filepath.Join(dir, "ship.proto")
	for p, text := range map[string]string{data: records, proto: dataProto} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return data, proto
}

// TestWithData: every REST user-scenario cell of formats runs scenario
// records on the data, its server serving the file in the cell's format.
func TestWithData(t *testing.T) {
	data, proto := dataFiles(t, dataRecords)
	def, _ := Lookup("formats")
	got, err := WithData(t.Context(), def, Data{File: data, Proto: proto, Message: "ship.Shipment"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Cells) != len(def.Cells) {
		t.Fatalf("%d cells, want %d", len(got.Cells), len(def.Cells))
	}
	for _, c := range got.Cells {
		so := c.Load.Scenario
		if so.Name != scenario.Records || so.Records == nil || so.Records.Len() != 3 {
			t.Fatalf("%s: scenario %s", c.ID(), so.Name)
		}
		cmd := strings.Join(c.Server.Command, " ")
		if !strings.Contains(cmd, "--data "+data) || !strings.Contains(cmd, "--data-formats "+so.Format) || !strings.Contains(cmd, "--proto "+proto) {
			t.Errorf("%s: server %s", c.ID(), cmd)
		}
	}
	// Without a schema the protobuf cell is left out, and said so.
	got, err = WithData(t.Context(), def, Data{File: data})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Cells) != len(def.Cells)-1 || !strings.Contains(strings.Join(got.Warnings, " "), "crud/protobuf (no schema") {
		t.Fatalf("%d cells, warnings %q", len(got.Cells), got.Warnings)
	}
	// With a schema, gRPC cells call the server's wirebench.records.Records
	// (protobuf); without one they keep the built-in users.
	grpcDef, _ := Lookup("grpc-vs-rest")
	for _, schema := range []bool{true, false} {
		d := Data{File: data}
		if schema {
			d.Proto, d.Message = proto, "ship.Shipment"
		}
		got, err := WithData(t.Context(), grpcDef, d)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range got.Cells {
			if so := c.Load.Scenario; so != nil && so.Transport == scenario.TransportGRPC {
				n++
				cmd := strings.Join(c.Server.Command, " ")
				switch {
				case schema && (so.Name != scenario.Records || !strings.Contains(cmd, "--data-formats protobuf")):
					t.Errorf("%s: scenario %s, server %s; want records on protobuf", c.ID(), so.Name, cmd)
				case !schema && so.Name == scenario.Records:
					t.Errorf("%s: records over gRPC without a schema", c.ID())
				}
			}
		}
		if n == 0 {
			t.Fatal("grpc-vs-rest has no gRPC cell")
		}
	}
	// A record a studied format cannot carry stops the study, named.
	bad, _ := dataFiles(t, `[{"id":1,"n":2},{"id":2,"n":123456789012345678901234567890}]`)
	_, err = WithData(t.Context(), def, Data{File: bad})
	if !errors.Is(err, payload.ErrData) || !strings.Contains(err.Error(), "record 1: json: $.n: ") {
		t.Fatalf("got %v", err)
	}
	if _, err = WithData(t.Context(), def, Data{File: bad, Formats: []string{"toon"}}); err != nil {
		t.Fatalf("formats that carry the record: %v", err)
	}
}

// TestStudyOnDataEndToEnd runs study formats on the user's records with
// the wirebench binary: every cell's replies decoded and checked, none
// failed.
func TestStudyOnDataEndToEnd(t *testing.T) {
	testkit.NeedPeers(t) // starts three servers: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	data, proto := dataFiles(t, dataRecords)
	def, _ := Lookup("formats")
	def, err := WithData(t.Context(), def, Data{File: data, Proto: proto, Message: "ship.Shipment", Formats: []string{"toon", "protobuf"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Quick: true, Trials: 1, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 3,
		Binary: bin, Ports: testPorts(), Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 3 { // toon, toon + gzip, protobuf
		t.Fatalf("%d trials", len(res.Trials))
	}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("%s: %s", tr.Cell, tr.Error)
		}
		if tr.Load.Failed != 0 || tr.Load.Requests < 5 {
			t.Errorf("%s: %d of %d failed %v", tr.Cell, tr.Load.Failed, tr.Load.Requests, tr.Load.Failures)
		}
		if len(tr.Load.Ops) != 5 {
			t.Errorf("%s: ops %v", tr.Cell, tr.Load.Ops)
		}
	}
}

// TestStudyFileData: data: in a study file serves the records to its
// reference-server cells.
func TestStudyFileData(t *testing.T) {
	data, _ := dataFiles(t, dataRecords)
	dir := filepath.Dir(data)
	path := filepath.Join(dir, "s.yaml")
	text := `name: mine
data: {file: ship.json, formats: [json, cbor]}
load: {scenario: crud, concurrency: 2}
cells:
  - name: json
    server: {command: ["{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--no-grpc"], ready: "http://127.0.0.1:{port}/healthz"}
    load: {url: "http://127.0.0.1:{port}", format: json}
  - name: cbor
    server: {command: ["{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--no-grpc"], ready: "http://127.0.0.1:{port}/healthz"}
    load: {url: "http://127.0.0.1:{port}", format: cbor}
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range def.Cells {
		if so := c.Load.Scenario; so == nil || so.Name != scenario.Records || !strings.Contains(strings.Join(c.Server.Command, " "), "--data "+data) {
			t.Fatalf("%s: %+v %v", c.ID(), c.Load.Scenario, c.Server.Command)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Replace(text, "ship.json", "nothere.json", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(path); err == nil || !strings.Contains(err.Error(), "s.yaml:2: data:") {
		t.Fatalf("a missing data file: %v", err)
	}
}
