package study

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

// TestWithH3 (study formats --h3, grpc-vs-rest --h3): every REST cell of
// the reference server is followed by its twin over HTTP/3 — the same
// scenario and VUs, one QUIC connection per VU, on the server's --http3
// port — and only those; the study stays valid and says the twins are on
// TLS.
func TestWithH3(t *testing.T) {
	for _, name := range []string{"formats", "grpc-vs-rest"} {
		def, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		h3, err := WithH3(def)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(h3); err != nil {
			t.Fatalf("%s --h3: %v", name, err)
		}
		want, streams := 0, 0
		for _, c := range def.Cells {
			if so := c.Load.Scenario; so != nil && so.Transport == "" && !so.NoKeepAlive && so.Client == "" {
				want++
			}
			if st := c.Load.Stream; st != nil && (st.Kind == stream.RESTList || st.Kind == stream.NDJSON || st.Kind == stream.SSE) {
				want++
				streams++
			}
		}
		if name == "grpc-vs-rest" && streams != 3 {
			t.Errorf("grpc-vs-rest: %d REST list stream cells, want 3", streams)
		}
		if want == 0 || len(h3.Cells) != len(def.Cells)+want {
			t.Fatalf("%s: %d cells with --h3, want %d + %d", name, len(h3.Cells), len(def.Cells), want)
		}
		twins := 0
		for i, c := range h3.Cells {
			if !strings.HasSuffix(c.Label, " over h3 (TLS)") {
				continue
			}
			twins++
			orig, so := h3.Cells[i-1], c.Load.Scenario
			if c.Label != h3Label(orig.Label) || c.Group != orig.Group || c.Baseline {
				t.Errorf("%s: %q follows %q", name, c.ID(), orig.ID())
			}
			if st := c.Load.Stream; st != nil {
				if st.Transport != conn.H3 || st.URL != refH3 || !st.Insecure || st.Kind != orig.Load.Stream.Kind ||
					st.Connections != orig.Load.Concurrency() || orig.Load.Stream.Transport != "" {
					t.Errorf("%s: %s: stream %+v", name, c.ID(), st)
				}
			} else if so == nil || so.Transport != conn.H3 || so.URL != refH3 || !so.Insecure ||
				so.Name != orig.Load.Scenario.Name || so.Format != orig.Load.Scenario.Format ||
				so.Compression != orig.Load.Scenario.Compression || so.Connections != orig.Load.Concurrency() {
				t.Errorf("%s: %s: scenario %+v", name, c.ID(), so)
			}
			argv := c.Server.Command
			if !slices.Equal(argv[:len(orig.Server.Command)], orig.Server.Command) || !slices.Equal(argv[len(orig.Server.Command):], h3Serve) {
				t.Errorf("%s: %s: server %q", name, c.ID(), argv)
			}
			if orig.Server == c.Server || slices.Contains(orig.Server.Command, "--http3") {
				t.Errorf("%s: %s: the twin changed its original's server", name, c.ID())
			}
			if n, err := c.ports(); err != nil || n != 3 {
				t.Errorf("%s: %s: %d ports, %v", name, c.ID(), n, err)
			}
		}
		if twins != want {
			t.Errorf("%s: %d twins, want %d", name, twins, want)
		}
		if !strings.Contains(strings.Join(h3.Warnings, "\n"), "TLS") {
			t.Errorf("%s: no warning that the h3 cells run on TLS: %q", name, h3.Warnings)
		}
	}
	def, _ := Lookup("payload-size")
	if _, err := WithH3(def); !errors.Is(err, ErrNoH3Cells) {
		t.Errorf("payload-size --h3: %v, want ErrNoH3Cells", err)
	}
}

// TestTransportsStudyIsTheFile: the built-in transports study and
// bench/transports-tls.yaml (docs/http3.md's figures) run the same load.
func TestTransportsStudyIsTheFile(t *testing.T) {
	file, err := ParseFile("../bench/transports-tls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def, err := Lookup("transports")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(def); err != nil {
		t.Fatal(err)
	}
	if len(def.Cells) != len(file.Cells) {
		t.Fatalf("%d cells, the file has %d", len(def.Cells), len(file.Cells))
	}
	for i, c := range def.Cells {
		f := file.Cells[i]
		a, b := c.Load.Raw, f.Load.Raw
		path := func(u string) string { return u[strings.LastIndex(u, "}")+1:] }
		if c.Label != f.Label || a.Transport != b.Transport || a.Connections != b.Connections || a.Insecure != b.Insecure ||
			path(a.URL) != path(b.URL) || a.ExpectBodyContains != b.ExpectBodyContains || !slices.Equal(a.Header, b.Header) ||
			c.Load.Concurrency() != f.Load.Concurrency() {
			t.Errorf("cell %d: built in %s %+v, file %s %+v", i, c.Label, a, f.Label, b)
		}
		if (a.Transport == conn.H3) != strings.Contains(a.URL, "{port3}") {
			t.Errorf("%s: %s is not the --http3 port", c.Label, a.URL)
		}
	}
}

// TestH3CellsEndToEnd renders a quick study with HTTP/3 cells: GET
// /users/1 over HTTP/1.1 and its twin over HTTP/3 (--h3) against a fresh
// `wirebench serve --http3` per trial, and the transports study, one
// short trial each; every request answered and checked, the report names
// the h3 cells.
func TestH3CellsEndToEnd(t *testing.T) {
	testkit.NeedPeers(t) // starts servers: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	lo := load.Options{Options: results.Options{Concurrency: 2}}
	def, err := WithH3(Definition{Name: "tiny-h3", Title: "tiny", Cells: []Cell{
		apiCell("get", "REST json", dataset{users: 10, todos: 1}, nil, lo, scenario.Options{Name: scenario.Get, Format: "json"}),
		streamCell("list", "REST NDJSON", dataset{users: 10, todos: 1}, lo, stream.NDJSON, 0),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Lookup("transports")
	if err != nil {
		t.Fatal(err)
	}
	def.Cells = append(def.Cells, tr.Cells...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Trials: 1, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 3,
		Binary: bin, Ports: testPorts(), NoPin: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 7 {
		t.Fatalf("%d trials, want 7", len(res.Trials))
	}
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Load == nil || tr.Load.Requests == 0 || tr.Load.Failed != 0 {
			t.Fatalf("%s: %s (load %+v)", tr.Cell, tr.Error, tr.Load)
		}
	}
	if bad := Unsuccessful(res); len(bad) > 0 {
		t.Fatal(bad)
	}
	dir := t.TempDir()
	if err := report.WriteAll(dir, res); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if strings.HasSuffix(tr.Cell, "REST NDJSON over h3 (TLS)") {
			if st := tr.Load.Stream; st == nil || st.Items != 10*tr.Load.Requests || st.In.QUIC == 0 || st.In.Envelope == 0 {
				t.Errorf("%s: stream %+v", tr.Cell, st)
			}
		}
	}
	for _, s := range []string{"REST json over h3 (TLS)", "REST NDJSON over h3 (TLS)", "| h3 ", "run on TLS"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q:\n%s", s, md)
		}
	}
}
