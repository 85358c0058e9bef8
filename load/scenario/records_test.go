package scenario_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// Records of a shape unlike the reference API's users: nested objects, a
// uniform list (TOON's tabular form), floats, an integer key.
const shipments = `[
{"id":101,"route":{"from":"OSL","to":"LIS","legs":2},"parcels":[{"kg":1.5,"fragile":false},{"kg":12,"fragile":true}],"note":"door 3"},
{"id":102,"route":{"from":"LIS","to":"OSL","legs":1},"parcels":[{"kg":0.25,"fragile":false}],"note":""},
{"id":205,"route":{"from":"AMS","to":"ATH","legs":3},"parcels":[],"note":"ring twice"}
]`

const shipmentsProto = `syntax = "proto3";
package ship;
message Route { string from = 1; string to = 2; int32 legs = 3; }
message Parcel { double kg = 1; bool fragile = 2; }
message Shipment { int64 id = 1; Route route = 2; repeated Parcel parcels = 3; string note = 4; }
`

func loadShipments(t *testing.T, data string) *payload.Dataset {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"s.json": data, "s.proto": shipmentsProto} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := payload.LoadDatasetFile(t.Context(), filepath.Join(dir, "s.json"), filepath.Join(dir, "s.proto"), false, "ship.Shipment", payload.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func startRecords(t *testing.T, d *payload.Dataset) *server.Server {
	t.Helper()
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, HTTP: httpapi.Options{Records: d}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestRecordsScenario runs CRUD over the user's records in every format
// the server serves them in, over HTTP/1.1 and h2c: every reply decoded
// and compared with the file, none failed, the dataset as it was after.
func TestRecordsScenario(t *testing.T) {
	served := loadShipments(t, shipments)
	srv := startRecords(t, served)
	client := loadShipments(t, shipments) // the client's own reading of the file
	ran := 0
	for _, transport := range []string{conn.HTTP1, conn.H2C} {
		for _, f := range []string{"json", "toon", "cbor", "msgpack", "protobuf"} {
			for _, comp := range []string{"", "gzip"} {
				t.Run(fmt.Sprintf("%s/%s%s", transport, f, comp), func(t *testing.T) {
					ran++
					r := runRecords(t, srv, client, transport, f, comp)
					if r.Requests != 50 || r.Failed != 0 {
						t.Fatalf("%d requests, %d failed: %v", r.Requests, r.Failed, r.Failures)
					}
					if len(r.Ops) != 5 {
						t.Fatalf("ops %v", r.Ops)
					}
					if served.Len() != 3 {
						t.Fatalf("%d records after the run", served.Len())
					}
				})
			}
		}
	}
	if ran != 20 {
		t.Fatalf("%d runs", ran)
	}
	if l, _ := served.List("json"); len(l.(map[string]any)["records"].([]any)) != 3 {
		t.Fatalf("the server holds %d records after the runs, want 3", len(l.(map[string]any)["records"].([]any)))
	}
}

func runRecords(t *testing.T, srv *server.Server, d *payload.Dataset, transport, format, comp string) *results.Load {
	t.Helper()
	sc, err := scenario.New(scenario.Options{Name: scenario.Records, Records: d, Format: format, Compression: comp,
		Options: conn.Options{URL: "http://" + srv.HTTPAddr(), Transport: transport, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: 50}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecordsScenarioFindsWrongReplies: a server whose records differ
// from the client's file in one value fails the list and get checks,
// naming the path.
func TestRecordsScenarioFindsWrongReplies(t *testing.T) {
	srv := startRecords(t, loadShipments(t, strings.Replace(shipments, `"kg":12`, `"kg":12.5`, 1)))
	client := loadShipments(t, shipments)
	for _, f := range []string{"json", "toon", "protobuf"} {
		r := runRecords(t, srv, client, conn.HTTP1, f, "")
		if r.Failed == 0 {
			t.Fatalf("%s: no failure against a server with other data", f)
		}
		for msg := range r.Failures {
			if !strings.Contains(msg, "$.parcels[1].kg") {
				t.Errorf("%s: failure %q does not name the path", f, msg)
			}
		}
	}
}

// TestRecordsCountedAfterTheRun: once the run is over the server must
// hold exactly the file's records; a record left over (here one the
// server's file has and the client's has not: the list checks allow one
// per VU being created) is one failed list request, with its reason.
func TestRecordsCountedAfterTheRun(t *testing.T) {
	extra := strings.Replace(shipments, "\n]", ",\n"+`{"id":300,"route":{"from":"OSL","to":"AMS","legs":1},"parcels":[],"note":"left over"}`+"\n]", 1)
	srv := startRecords(t, loadShipments(t, extra))
	client := loadShipments(t, shipments)
	for _, f := range []string{"json", "protobuf"} {
		r := runRecords(t, srv, client, conn.HTTP1, f, "")
		want := "check: records after the run: the server holds 4, the file 3"
		if r.Requests != 51 || r.Failed != 1 || r.Failures[want] != 1 || r.Ops[0].Failed != 1 {
			t.Errorf("%s: %d requests, %d failed %v, list %+v; want 51, one failed list: %q", f, r.Requests, r.Failed, r.Failures, r.Ops[0], want)
		}
	}
}

// TestRecordsOverH3: a server with the user's records (serve --data) and
// --http3 serves them over HTTP/3 too, and a records run over h3 checks
// every reply: none failed, each request answered over HTTP/3 (the run's,
// the count after it, and the VUs' closing deletes), the dataset as it
// was afterwards.
func TestRecordsOverH3(t *testing.T) {
	served := loadShipments(t, shipments)
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
		H3: server.H3{Addr: "127.0.0.1:0"}, HTTP: httpapi.Options{Records: served}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := loadShipments(t, shipments)
	for _, f := range []string{"json", "toon", "protobuf"} {
		before := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_requests_total")
		sc, err := scenario.New(scenario.Options{Name: scenario.Records, Records: client, Format: f,
			Options: conn.Options{URL: "https://" + srv.H3Addr(), Transport: conn.H3, Connections: 2, Insecure: true, Timeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		const n = 50
		r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != n || r.Failed != 0 {
			t.Fatalf("%s: %d requests, %d failed: %v", f, r.Requests, r.Failed, r.Failures)
		}
		if got := testkit.Metric(t, srv.HTTPAddr(), "wirebench_h3_requests_total") - before; got < n+1 || got > n+1+3 {
			t.Errorf("%s: the server answered %d over HTTP/3, want %d (+1 count, +0..3 cleanup)", f, got, n)
		}
		if served.Len() != 3 {
			t.Errorf("%s: %d records after the run, want 3", f, served.Len())
		}
	}
}

// TestRecordsOverGRPC runs the records scenario over gRPC against the
// server's wirebench.records.Records (serve --data with a schema), with
// our lean client and grpc-go's: every reply checked, none failed; and a
// record left over on the server is the count's one failure, as over REST.
func TestRecordsOverGRPC(t *testing.T) {
	for _, tc := range []struct {
		data   string
		failed int64
	}{
		{shipments, 0},
		{strings.Replace(shipments, "\n]", ",\n"+`{"id":300,"route":{"from":"OSL","to":"AMS","legs":1},"parcels":[],"note":"left over"}`+"\n]", 1), 1},
	} {
		srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", HTTP: httpapi.Options{Records: loadShipments(t, tc.data)}})
		if err != nil {
			t.Fatal(err)
		}
		client := loadShipments(t, shipments)
		for _, cl := range []string{conn.ClientLean, conn.ClientStd} {
			sc, err := scenario.New(scenario.Options{Name: scenario.Records, Records: client,
				Options: conn.Options{URL: srv.GRPCAddr(), Transport: scenario.TransportGRPC, Client: cl, Timeout: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: 50}}, sc)
			if err != nil {
				t.Fatal(err)
			}
			want := "check: records after the run: the server holds 4, the file 3"
			if r.Requests != 50+tc.failed || r.Failed != tc.failed || tc.failed == 1 && r.Failures[want] != 1 || len(r.Ops) != 5 {
				t.Errorf("%s client, %d left over: %d requests, %d failed: %v", cl, tc.failed, r.Requests, r.Failed, r.Failures)
			}
		}
		srv.Close()
	}
	// Without the schema there is no gRPC service to call.
	noSchema, err := payload.LoadDataset(writeTemp(t, shipments), payload.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scenario.New(scenario.Options{Name: scenario.Records, Records: noSchema,
		Options: conn.Options{URL: "127.0.0.1:1", Transport: scenario.TransportGRPC}}); err == nil || !strings.Contains(err.Error(), "needs the records' schema") {
		t.Errorf("records over gRPC without a schema: %v", err)
	}
}

func writeTemp(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runSegment is runRecords for segment seg of a test of 4 VUs (2 each).
func runSegment(t *testing.T, srv *server.Server, d *payload.Dataset, seg results.Segment, run results.Options) *results.Load {
	t.Helper()
	sc, err := scenario.New(scenario.Options{Name: scenario.Records, Records: d, Format: "json", Segment: seg, WholeVUs: 4,
		Options: conn.Options{URL: "http://" + srv.HTTPAddr(), Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	run.Concurrency, run.Segment = 4, seg
	r, err := load.Run(context.Background(), load.Options{Options: run}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecordsSegmentsShareOneServer: the two segments of one test, run at
// once against one server, create their copies under keys of their own
// (never the same record twice), allow in their list checks for the
// other's copies, and check after the run what each owns: none failed,
// and the server holds the file's records again.
func TestRecordsSegmentsShareOneServer(t *testing.T) {
	served := loadShipments(t, shipments)
	srv := startRecords(t, served)
	var rs [2]*results.Load
	done := make(chan struct{})
	for i := range rs {
		go func() {
			defer func() { done <- struct{}{} }()
			rs[i] = runSegment(t, srv, loadShipments(t, shipments), results.Segment{I: i + 1, N: 2}, results.Options{Duration: 500 * time.Millisecond})
		}()
	}
	<-done
	<-done
	for i, r := range rs {
		if r == nil {
			t.Fatalf("segment %d did not run", i+1)
		}
		if r.Requests < 20 || r.Failed != 0 {
			t.Errorf("segment %d/2: %d requests, %d failed: %v", i+1, r.Requests, r.Failed, r.Failures)
		}
	}
	if served.Len() != 3 {
		t.Errorf("%d records after the segments, want 3", served.Len())
	}
}

// TestRecordsSegmentChecksItsOwn: a segment ending while another still
// holds a copy (made here before the run, under the key the other
// segment's first VU uses) does not fail for it; a copy under a key of
// its own left on the server, or a record of the file gone, fails the
// check after the run, naming it.
func TestRecordsSegmentChecksItsOwn(t *testing.T) {
	create := func(d *payload.Dataset, n int) {
		_, v := d.Record(0)
		_, c := d.WithKey(v, n)
		body, err := d.Encode("json", c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Create(body, "json", "json"); err != nil {
			t.Fatal(err)
		}
	}
	one := results.Segment{I: 1, N: 2}
	t.Run("the other segment's copy", func(t *testing.T) {
		served := loadShipments(t, shipments)
		create(served, 2) // segment 2/2's first VU: 0*2 + 2
		r := runSegment(t, startRecords(t, served), loadShipments(t, shipments), one, results.Options{Requests: 50})
		if r.Requests != 25 || r.Failed != 0 {
			t.Errorf("%d requests, %d failed: %v; want 25, none failed", r.Requests, r.Failed, r.Failures)
		}
	})
	t.Run("its own copy", func(t *testing.T) {
		served := loadShipments(t, shipments)
		create(served, 3) // segment 1/2's second VU: 1*2 + 1; its creates are refused
		r := runSegment(t, startRecords(t, served), loadShipments(t, shipments), one, results.Options{Requests: 50})
		if want := "check: records after the run: the copy 208 this segment created is still there"; r.Failures[want] != 1 {
			t.Errorf("failures %v; want one %q", r.Failures, want)
		}
	})
	t.Run("a record gone", func(t *testing.T) {
		served := loadShipments(t, shipments)
		if err := served.Delete("205"); err != nil {
			t.Fatal(err)
		}
		r := runSegment(t, startRecords(t, served), loadShipments(t, shipments), one, results.Options{Requests: 50})
		if want := "check: records after the run: the server holds 2 of the file's 3 records"; r.Failures[want] != 1 {
			t.Errorf("failures %v; want one %q", r.Failures, want)
		}
	})
	t.Run("more copies than the other segment's VUs", func(t *testing.T) {
		served := loadShipments(t, shipments)
		for _, n := range []int{2, 4, 6} { // segment 2/2 has 2 VUs: 2 and 4 are theirs, 6 nobody's
			create(served, n)
		}
		r := runSegment(t, startRecords(t, served), loadShipments(t, shipments), one, results.Options{Requests: 50})
		if want := "check: records after the run: the server holds 3 records beyond the file, more than the other segments' 2 VUs create"; r.Failures[want] != 1 {
			t.Errorf("failures %v; want one %q", r.Failures, want)
		}
	})
}
