package study

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// The reference server as a cell: the built-in studies are definitions
// like any study file's; only this file knows `wirebench serve`.

// dataset sizes the reference server's seed data.
type dataset struct{ users, todos int }

var defaultDataset = dataset{users: 100, todos: 100}

// refHTTP and refGRPC are the reference server's addresses in a trial.
const (
	refHTTP = "http://127.0.0.1:{port}"
	refGRPC = "127.0.0.1:{port2}"
)

// referenceServer runs `wirebench serve` on the trial's two ports with the
// dataset and the cell's extra flags, ready when /healthz answers. gRPC is
// on grpc-go's server (what users deploy, DESIGN rule 9), said outright so
// that each cell's command in results.json names the transport that ran; a
// cell's extra flags come after and may choose another (leanGRPC).
func referenceServer(ds dataset, extra []string) *Server {
	cmd := []string{"{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--grpc", refGRPC,
		"--grpc-transport", "grpc-go",
		"--seed-users", strconv.Itoa(ds.users), "--seed-todos", strconv.Itoa(ds.todos)}
	return &Server{Command: append(cmd, extra...), Ready: refHTTP + "/healthz"}
}

// leanGRPC serves gRPC on our own minimal transport (h2grpc): an extra
// cell, labelled as ours, never a study's headline (DESIGN rule 9).
var leanGRPC = []string{"--grpc-transport", "lean"}

// leanLabel labels a cell on leanGRPC.
const leanLabel = "gRPC, a minimal transport of ours: the floor"

// apiCell is a cell driving one reference-API scenario against a fresh
// reference server with the given extra flags.
func apiCell(group, label string, ds dataset, serve []string, lo load.Options, so scenario.Options) Cell {
	so.URL = refHTTP
	if so.Transport == scenario.TransportGRPC {
		so.URL = refGRPC
	}
	return Cell{
		Group: group, Label: label, ServeArgs: serve,
		Server: referenceServer(ds, serve),
		Load:   LoadSpec{Options: lo, Scenario: &so},
		Checks: []Check{datasetCheck(), goMemCheck()},
	}
}

// streamCell drives one stream kind (load/stream.go) against a fresh
// reference server; messages is the bidi or WebSocket exchange's length.
func streamCell(group, label string, ds dataset, lo load.Options, kind string, messages int) Cell {
	return Cell{
		Group: group, Label: label,
		Server: referenceServer(ds, nil),
		Load:   LoadSpec{Options: lo, Stream: &stream.Options{Kind: kind, Options: conn.Options{URL: refHTTP}, GRPC: refGRPC, Messages: messages}},
		Checks: []Check{datasetCheck(), goMemCheck()},
	}
}

// browserCell runs the page's kind in headless chromium against a fresh
// reference server, batch calls per operation (load/browser.go).
func browserCell(group, label string, ds dataset, kind string, batch int) Cell {
	return Cell{
		Group: group, Label: label,
		Server: referenceServer(ds, nil),
		Load:   LoadSpec{Options: load.Options{Options: results.Options{Concurrency: 1}}, Browser: &browser.Options{Kind: kind, URL: refHTTP, Batch: batch}},
		Checks: []Check{datasetCheck(), goMemCheck()},
	}
}

// datasetCheck records the number of users and todos before the warm-up
// and after the measured run (fairness rule 1: the scenarios leave the
// dataset as they found it; the report warns when they did not).
func datasetCheck() Check {
	return Check{
		Name:      "dataset size",
		templates: []string{refHTTP},
		Before: func(ctx context.Context, e *TrialEnv) (err error) {
			e.Trial.UsersBefore, e.Trial.TodosBefore, err = datasetSize(ctx, e.Expand(refHTTP))
			return err
		},
		After: func(ctx context.Context, e *TrialEnv) (err error) {
			e.Trial.UsersAfter, e.Trial.TodosAfter, err = datasetSize(ctx, e.Expand(refHTTP))
			return err
		},
	}
}

// goMemCheck scrapes the server's Go memory and GC figures from /metrics
// right before and after the measured run; the counters at the start are
// kept under their name + "_at_start" (allocations per request are the
// difference: the server's own, apart from the client's).
func goMemCheck() Check {
	var start map[string]float64 // trials of a cell run one at a time
	return Check{
		Name:      "Go memory",
		templates: []string{refHTTP},
		Start: func(ctx context.Context, e *TrialEnv) (err error) {
			start, err = goMem(ctx, e.Expand(refHTTP))
			return err
		},
		After: func(ctx context.Context, e *TrialEnv) (err error) {
			e.Trial.Server.GoMem, err = goMem(ctx, e.Expand(refHTTP))
			for _, k := range []string{"go_memstats_mallocs_total", "go_memstats_alloc_bytes_total"} {
				if v, ok := start[k]; ok && e.Trial.Server.GoMem != nil {
					e.Trial.Server.GoMem[k+"_at_start"] = v
				}
			}
			return err
		},
	}
}

// datasetSize counts the users and todos the server at base holds.
func datasetSize(ctx context.Context, base string) (users, todos int, err error) {
	var ul api.UserList
	var tl api.TodoList
	if err := getJSON(ctx, base+"/users", &ul); err != nil {
		return 0, 0, err
	}
	if err := getJSON(ctx, base+"/todos", &tl); err != nil {
		return 0, 0, err
	}
	return len(ul.Users), len(tl.Todos), nil
}

func getJSON(ctx context.Context, url string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", codec.MediaJSON)
	resp, err := probeClient.Do(req)
	if err != nil {
		return fmt.Errorf("study: GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("study: GET %s: status %d %v", url, resp.StatusCode, err)
	}
	return codec.MustLookup("json").Codec.Unmarshal(body, v)
}

// goMem reads the Go memory and GC figures from base's /metrics.
func goMem(ctx context.Context, base string) (map[string]float64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	resp, err := probeClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("study: GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	want := map[string]bool{
		"go_memstats_heap_alloc_bytes": true, "go_memstats_heap_inuse_bytes": true, "go_memstats_heap_sys_bytes": true,
		"go_memstats_sys_bytes": true, "go_memstats_mallocs_total": true, "go_memstats_alloc_bytes_total": true, "go_gc_duration_seconds_count": true,
		"go_gc_duration_seconds_sum": true, "go_goroutines": true, "process_resident_memory_bytes": true,
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = f
		}
	}
	return out, sc.Err()
}
