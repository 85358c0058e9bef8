package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// TestStudyLinksAxis runs a study file on two links, loopback and a 20-ms
// round trip: every cell on each, the client across the link (each
// request takes the round trip, a new connection one more for its
// handshake), the servers here; the results record each link with its
// calibration and the relay per trial, and the report answers per link,
// the direction physics says on the link.
func TestStudyLinksAxis(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(`name: links
question: "Does a new connection per request cost a round trip?"
answer: {cell: new-conn, yes: worse}
trials: 1
warmup: 200ms
duration: 700ms
server:
  command: ["{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--no-grpc", "--seed-users", "10"]
  ready: "http://127.0.0.1:{port}/healthz"
load: {url: "http://127.0.0.1:{port}/users/1", concurrency: 2, expect_body_contains: '"id":1,'}
links: [none, "rtt=20ms"]
cells:
  - name: keep-alive
  - name: new-conn
    load: {no_keepalive: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "study", "run", file, "--link-check=false", "--out", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "links-*", "results.json"))
	if len(runs) != 1 {
		t.Fatalf("results: %v\n%s", runs, b)
	}
	res, err := results.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 2 || res.Links[0].Spec != "none" || res.Links[1].Spec != "rtt=20ms" ||
		res.Links[1].Calibration == nil || res.Links[1].Calibration.RTTUDP < 20*time.Millisecond {
		t.Fatalf("links %+v: want none, then rtt=20ms calibrated", res.Links)
	}
	if len(res.Cells) != 4 || len(res.Trials) != 4 {
		t.Fatalf("%d cells, %d trials; want 4 each", len(res.Cells), len(res.Trials))
	}
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Load == nil || tr.Load.Requests == 0 || tr.Load.Failed != 0 {
			t.Fatalf("trial %s: %q, %+v", tr.Cell, tr.Error, tr.Load)
		}
		min := tr.Load.Latency.Min()
		switch tr.Cell {
		case "links/keep-alive@rtt=20ms":
			if min < 20*time.Millisecond || tr.Relay == nil || tr.Relay.UpPackets == 0 {
				t.Errorf("%s: fastest %v, relay %+v: want every request one round trip (20 ms), and the relay's counts", tr.Cell, min, tr.Relay)
			}
		case "links/new-conn@rtt=20ms":
			if min < 40*time.Millisecond {
				t.Errorf("%s: fastest %v, want two round trips (40 ms): the handshake and the request", tr.Cell, min)
			}
		default:
			if tr.Relay != nil || min >= 20*time.Millisecond {
				t.Errorf("%s on loopback: fastest %v, relay %+v", tr.Cell, min, tr.Relay)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(runs[0]), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Answer on none:**", "**Answer on rtt=20ms:** Cannot tell", "## links on rtt=20ms", "## Links", "| rtt=20ms | rtt=20ms | 20"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
