// Package reporttest builds synthetic study results with fixed numbers, so
// that report renderers and the CLI can be tested against golden files
// without running a study.
package reporttest

import (
	"fmt"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Options shape the synthetic study. The zero value is a clean 6-trial
// study.
type Options struct {
	// Trials per cell; 0 means 6 (the fewest with a 95% median CI).
	Trials int
	// Slowdown multiplies every latency and CPU cost and divides every
	// throughput; 0 means 1.
	Slowdown float64
	// Faults adds one failed trial, a dataset that grew, failed checks,
	// a client warning and the payload table: everything a report must
	// flag.
	Faults bool
	Quick  bool
	// SizesOnly is the payload-size study's shape: payload measurements
	// and no cells or trials.
	SizesOnly bool
	// Question and Answer are the study's (zero: the generic question,
	// answered in req/s).
	Question string
	Answer   results.Answer
	// Browser runs the echo group in a browser: latency as the page
	// timed it, and the same req/s in every trial of both cells (a page's
	// requests complete in whole batches).
	Browser bool
}

// cellSpec is one synthetic cell: its base latency and throughput.
type cellSpec struct {
	group, label string
	lat          time.Duration // median latency
	rps          float64
	body         int64 // response body bytes per request
	rss          int64
	conc         int // VUs
}

var cells = []cellSpec{
	{"crud c=50", "json", 800 * time.Microsecond, 21000, 1850, 24 << 20, 50},
	{"crud c=50", "toon", 950 * time.Microsecond, 18500, 1210, 26 << 20, 50},
	{"crud c=50", "protobuf", 790 * time.Microsecond, 21300, 980, 23 << 20, 50},
	{"echo c=1", "http1", 60 * time.Microsecond, 15000, 40, 12 << 20, 1},
	{"echo c=1", "grpc", 95 * time.Microsecond, 9800, 45, 15 << 20, 1},
}

// Results returns a synthetic study. Every number is a function of the
// cell, the trial index and the options: the same call gives the same
// bytes.
func Results(o Options) *results.Study {
	if o.Trials == 0 {
		o.Trials = 6
	}
	if o.Slowdown == 0 {
		o.Slowdown = 1
	}
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	r := &results.Study{
		Schema: results.StudySchema, Study: "synthetic", Title: "Synthetic study: formats and transports",
		Quick: o.Quick, Seed: 42, Question: o.Question, Answer: o.Answer,
		Options: results.StudyOptions{Trials: o.Trials, Duration: "10s", Warmup: "3s"},
		Env: measure.Env{
			Hostname: "lab", CPUModel: "AMD EPYC 7B13", NumCPU: 8, Affinity: []int{0, 1, 2, 3, 4, 5, 6, 7},
			GOMAXPROCS: 8, Kernel: "Linux 6.8.0", GoVersion: "go1.26.0", GOOS: "linux", GOARCH: "amd64",
			GitCommit: "0123456789abcdef0123456789abcdef01234567",
		},
		Start: start,
	}
	if o.Quick {
		// What the study runner adds, whether or not the study ran trials:
		// reports build their banner from what ran instead.
		r.Warnings = append(r.Warnings, fmt.Sprintf("quick run: %d trials of 1.5s after 500ms warm-up per cell; publish only a full run", o.Trials))
	}
	if o.SizesOnly {
		r.Payloads = payloads()
		r.End = start.Add(15 * time.Second)
		return r
	}
	for _, c := range cells {
		r.Cells = append(r.Cells, results.Cell{
			ID: c.group + "/" + c.label, Group: c.group, Label: c.label,
			ServeArgs: []string{"--format", c.label}, Load: results.CellLoad{Scenario: c.group},
		})
	}
	order := 0
	for i := 0; i < o.Trials; i++ {
		for ci, c := range cells {
			t := trial(c, ci, i, o)
			t.Order = order
			order++
			r.Trials = append(r.Trials, t)
		}
	}
	if o.Faults {
		r.Trials[1].Error = "server exited: signal: killed"
		r.Trials[1].Load = nil
		r.Trials[2].TodosAfter = r.Trials[2].TodosBefore + 12
		r.Trials[2].Load.Failed = 3
		r.Trials[2].Load.Failures = map[string]int64{"status 500, want 200": 3}
		r.Trials[3].Load.Warnings = []string{"client CPU at 97% of its 2 CPUs: the client may be the bottleneck"}
		r.Warnings = []string{"CPU frequency scaling is enabled (governor: powersave)"}
		r.Payloads = payloads()
	}
	r.End = start.Add(time.Duration(order) * 11 * time.Second)
	return r
}

// jitter is a fixed, trial-dependent factor in [0.97, 1.03].
func jitter(cell, trial int) float64 {
	return 1 + 0.015*float64((trial*7+cell*3)%5-2)
}

func trial(c cellSpec, ci, i int, o Options) results.Trial {
	j := jitter(ci, i)
	lat := time.Duration(float64(c.lat) * j * o.Slowdown)
	h := skewed(lat)
	elapsed := 10 * time.Second
	reqs := int64(c.rps * elapsed.Seconds() / j / o.Slowdown)
	if o.Browser && c.group == "echo c=1" {
		reqs = 500 // ten batches of 50, whatever the latency
	}
	start := time.Date(2026, 3, 14, 15, 10, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	res := &results.Load{
		Schema: results.LoadSchema, Scenario: c.group, Start: start, End: start.Add(elapsed),
		Options:  results.Options{Concurrency: c.conc, Duration: elapsed, Timeout: 10 * time.Second, GracefulStop: 2 * time.Second},
		Requests: reqs, Latency: h, Service: h, Lag: measure.NewHistogram(),
		Status: map[string]int64{"200": reqs}, Failures: map[string]int64{},
		Bytes: results.Bytes{
			BodyIn: reqs * c.body, WireIn: reqs * (c.body + 120),
			BodyOut: reqs * c.body / 4, WireOut: reqs * (c.body/4 + 95),
		},
		CPU: results.CPU{User: 3 * time.Second, System: time.Second, CPUs: 2},
	}
	if c.group == "crud c=50" {
		res.Ops = crudOps(c, lat, reqs)
	}
	if o.Browser && c.group == "echo c=1" {
		res.Stream = &results.Stream{Kind: "fetch-json", InBrowser: true}
	}
	cpuPerReq := time.Duration(float64(28*time.Microsecond) * j * o.Slowdown * float64(c.lat) / float64(800*time.Microsecond))
	rss := int64(float64(c.rss) * j)
	var samples []results.ProcSample
	for s := 0; s <= 20; s++ {
		t := time.Duration(s) * 500 * time.Millisecond
		grow := int64(s) * (rss / 80) // warms up, then levels off
		if s > 10 {
			grow = 10 * (rss / 80)
		}
		samples = append(samples, results.ProcSample{T: t, RSS: rss*3/4 + grow, CPU: cpuPerReq * time.Duration(reqs*int64(s)/20)})
	}
	peak := samples[len(samples)-1].RSS
	return results.Trial{
		Cell: c.group + "/" + c.label, Index: i, ServerPID: 1000 + 10*i + ci,
		ServerCPUs: []int{0, 1}, ClientCPUs: []int{2, 3},
		UsersBefore: 100, UsersAfter: 100, TodosBefore: 50, TodosAfter: 50,
		Load:   res,
		Server: results.ServerStats{CPU: cpuPerReq * time.Duration(reqs), PeakRSS: peak, Samples: samples},
	}
}

// payloads are two datasets at two sizes: every format over HTTP/1.1 and
// h2c with and without gzip and zstd, and protobuf alone over gRPC (no
// zstd), as the payload-size study measures them. JSON is not listed
// first, so reports must find their baseline by name.
// skewed is a latency histogram of a right-skewed shape around lat: most
// near it, a tail up to ×12.
func skewed(lat time.Duration) *measure.Histogram {
	h := measure.NewHistogram()
	for k := 0; k < 1000; k++ {
		f := 0.6 + 0.8*float64(k)/1000
		switch {
		case k%100 == 99:
			f *= 12
		case k%10 == 9:
			f *= 3
		}
		h.Record(time.Duration(float64(lat) * f))
	}
	return h
}

// crudOps splits a CRUD trial into its five operations, lists the
// slowest; protobuf lists faster than its other operations suggest, so
// one operation differs from the baseline where the others do not.
func crudOps(c cellSpec, lat time.Duration, reqs int64) []results.Op {
	names := []string{"list users", "create user", "get user", "update user", "delete user"}
	factor := []float64{1.6, 1.2, 0.7, 1.0, 0.8}
	var ops []results.Op
	for i, n := range names {
		f := factor[i]
		if c.label == "protobuf" && i == 0 {
			f *= 0.8
		}
		h := skewed(time.Duration(float64(lat) * f))
		ops = append(ops, results.Op{Name: n, Requests: reqs / 5, Latency: h, Service: h})
	}
	return ops
}

func payloads() []results.Payload {
	var ps []results.Payload
	body := map[string]float64{"json": 1, "toon": 0.62, "protobuf": 0.5, "msgpack": 0.78, "cbor": 0.8}
	for _, ds := range []string{"users", "todos"} {
		for _, n := range []int{10, 1000} {
			for _, f := range []string{"cbor", "json", "toon", "protobuf", "msgpack"} {
				b := int64(float64(n) * 92 * body[f])
				if ds == "todos" {
					b = b * 3 / 4
				}
				for _, tr := range []string{"http1", "h2c", "grpc"} {
					if tr == "grpc" && f != "protobuf" {
						continue
					}
					for _, comp := range []string{"", "gzip", "zstd"} {
						if tr == "grpc" && comp == "zstd" {
							continue
						}
						coded := map[string]int64{"": b, "gzip": b / 4, "zstd": b / 5}[comp]
						frame := map[string]int64{"http1": 130, "h2c": 40, "grpc": 55}[tr]
						p := results.Payload{Dataset: ds, N: n, Format: f, Transport: tr, Compression: comp, Body: b, Wire: coded + frame}
						if comp != "" && tr != "grpc" {
							p.Coded = coded
						}
						ps = append(ps, p)
					}
				}
			}
		}
	}
	return ps
}

// Label names a synthetic result set in test failure messages.
func (o Options) String() string {
	return fmt.Sprintf("trials=%d slowdown=%v faults=%v quick=%v sizes-only=%v", o.Trials, o.Slowdown, o.Faults, o.Quick, o.SizesOnly)
}
