package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// TestAPIScenariosOverTLS: the reference scenarios connect as raw mode
// does (package conn), so https:// runs over HTTP/1.1 on TLS and h2 too,
// "" and auto picking h2 by ALPN and the absent Alt-Svc: every response
// checked, TLS framing counted on the wire.
func TestAPIScenariosOverTLS(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
		HTTPSAddr: "127.0.0.1:0", SeedUsers: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for tr, want := range map[string]string{conn.HTTP1: conn.HTTP1, conn.H2: conn.H2, "": conn.H2, conn.Auto: conn.H2} {
		t.Run(want+"/"+tr, func(t *testing.T) {
			o := scenario.Options{Name: scenario.CRUD, Options: conn.Options{URL: "https://" + srv.HTTPSAddr(), Transport: tr,
				Connections: 2, Insecure: true, Timeout: 5 * time.Second}}
			sc, err := scenario.New(o)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := sc.(interface{ Transport() (string, string) }).Transport(); got != want {
				t.Errorf("transport %s, want %s", got, want)
			}
			const n = 50
			r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != n || r.Failed != 0 {
				t.Fatalf("%d requests, %d failed: %v", r.Requests, r.Failed, r.Failures)
			}
			if r.Bytes.BodyIn == 0 || r.Bytes.WireIn < r.Bytes.BodyIn+n*21 {
				t.Errorf("bytes %+v: TLS framing not counted", r.Bytes)
			}
		})
	}
}
