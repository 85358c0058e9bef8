package scenario_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

func startAPI(t *testing.T, users int) *server.Server {
	t.Helper()
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: users, SeedTodos: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func scenarioURL(srv *server.Server, transport string) string {
	if transport == scenario.TransportGRPC {
		return srv.GRPCAddr()
	}
	return "http://" + srv.HTTPAddr()
}

// TestAPIScenarios runs every scenario in every format over every
// transport against the real server: exactly -n requests, none failed,
// every operation counted, and the dataset the same size afterwards.
func TestAPIScenarios(t *testing.T) {
	srv := startAPI(t, 20)
	type combo struct{ transport, format, compression string }
	var combos []combo
	for _, f := range codec.Formats() {
		combos = append(combos, combo{conn.HTTP1, f, ""}, combo{conn.H2C, f, ""})
	}
	combos = append(combos, combo{scenario.TransportGRPC, "protobuf", ""},
		combo{conn.HTTP1, "json", "gzip"}, combo{conn.H2C, "toon", "gzip"})
	ran := 0
	for _, c := range combos {
		for _, name := range []string{scenario.CRUD, scenario.Echo, scenario.Get, scenario.List, scenario.Create} {
			t.Run(fmt.Sprintf("%s/%s/%s%s", c.transport, c.format, name, c.compression), func(t *testing.T) {
				ran++
				sc, err := scenario.New(scenario.Options{
					Name:        name,
					Options:     conn.Options{URL: scenarioURL(srv, c.transport), Transport: c.transport, Timeout: 5 * time.Second},
					Format:      c.format,
					Compression: c.compression,
				})
				if err != nil {
					t.Fatal(err)
				}
				const n = 60
				r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, sc)
				if err != nil {
					t.Fatal(err)
				}
				if r.Requests != n || r.Failed != 0 {
					t.Fatalf("%d requests, %d failed: %v", r.Requests, r.Failed, r.Failures)
				}
				var opSum int64
				for _, op := range r.Ops {
					opSum += op.Requests
				}
				if opSum != n || len(r.Ops) != len(sc.Ops()) {
					t.Fatalf("ops %v sum to %d", r.Ops, opSum)
				}
				if r.Bytes.BodyIn == 0 || r.Bytes.WireIn <= r.Bytes.BodyIn {
					t.Fatalf("bytes %+v: wire must exceed body", r.Bytes)
				}
				if u, _ := srv.Store.Len(); u != 20 {
					t.Fatalf("dataset has %d users after the run, want 20", u)
				}
			})
		}
	}
	if ran != len(combos)*5 {
		t.Fatalf("ran %d cases", ran)
	}
}

// TestCompressionShrinksTheList checks that gzip reaches the wire: the
// same list costs fewer bytes compressed, and is still decoded and checked.
func TestCompressionShrinksTheList(t *testing.T) {
	srv := startAPI(t, 100)
	wire := map[string]int64{}
	for _, comp := range []string{"", "gzip"} {
		sc, err := scenario.New(scenario.Options{Name: scenario.List, Options: conn.Options{URL: scenarioURL(srv, "http1")}, Format: "json", Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 20}}, sc)
		if err != nil || r.Failed != 0 {
			t.Fatalf("%q: %v %v", comp, err, r.Failures)
		}
		wire[comp] = r.Bytes.WireIn
	}
	if wire["gzip"]*3 > wire[""] {
		t.Fatalf("gzip wire %d vs plain %d: expected at least 3x smaller", wire["gzip"], wire[""])
	}
	if _, err := scenario.New(scenario.Options{Name: scenario.List, Options: conn.Options{URL: "127.0.0.1:1", Transport: scenario.TransportGRPC}, Compression: "gzip"}); err == nil {
		t.Error("gzip over gRPC accepted")
	}
}

// TestChecksCatchWrongData changes the dataset behind the scenario's back:
// the get scenario must count the 404s as failed checks, not succeed.
func TestChecksCatchWrongData(t *testing.T) {
	srv := startAPI(t, 4)
	sc, err := scenario.New(scenario.Options{Name: scenario.Get, Options: conn.Options{URL: scenarioURL(srv, "http1")}, Format: "msgpack"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 4}}, sc)
	if err != nil || r.Failed != 0 {
		t.Fatalf("baseline run: %v %v", err, r.Failures)
	}
	if err := srv.Store.DeleteUser(2); err != nil {
		t.Fatal(err)
	}
	r, err = load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 40}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed == 0 || r.Failures["status 404"] != r.Failed {
		t.Fatalf("failed %d, failures %v: the deleted user must fail its checks", r.Failed, r.Failures)
	}
}
