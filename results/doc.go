// Package results is the one model of wirebench results, apart from the
// statistics (results/stats) and the rendering (package report), as
// benchstat splits benchfmt, benchmath and its tables.
//
// Three files are read, told apart by their "schema" field:
//
//	wirebench.study/v2   a study's results.json: cells × trials
//	┌────────────────────────────────────────────────────────────┐
//	│ schema, study, title, question, quick, seed, options, env  │
//	│ cells[]  {id, group, label, baseline, serve_args, load}    │
//	│ trials[] {cell, index, order, server_pid, …,               │
//	│           load: <a wirebench.load/v1 result>, server}      │
//	│ payloads[] (sizes-only studies), warnings[]                │
//	└────────────────────────────────────────────────────────────┘
//
//	wirebench.load/v2    one `wirebench load --out` run (Load)
//	┌────────────────────────────────────────────────────────────┐
//	│ schema, scenario, options, config, env, start, end,        │
//	│ requests, failed, latency/service/lag histograms, ops[],   │
//	│ status, failures, bytes, client_cpu, segments, warnings,   │
//	│ rps, error_rate, client_cpu_util, per_request (derived)    │
//	└────────────────────────────────────────────────────────────┘
//
//	a histogram (latency, service, lag, ops[].latency, …)
//	┌────────────────────────────────────────────────────────────┐
//	│ count, {min,mean,p50,p90,p99,p999,max}_ms and _ns,         │
//	│ hdr: HdrHistogram V2 compressed, base64, in µs             │
//	└────────────────────────────────────────────────────────────┘
//
//	wirebench.capacity/v2  one `wirebench capacity --out` search (Capacity)
//	┌────────────────────────────────────────────────────────────┐
//	│ schema, scenario, config, env, start, end, slo[], search,  │
//	│ rate, low, high, limit, client_limit, server_cpu_per_req,  │
//	│ steps[] {offered, achieved, p50…max, service/lag p99,      │
//	│          client_cpu, verdict, why, load: <a load result>}, │
//	│ confirm, warnings                                          │
//	└────────────────────────────────────────────────────────────┘
//
// The load result (Load, Op, Stream, Layers, Options, Segment) is plain
// data: package load fills it, and everything after a run works on it
// here without the engine or any client — Merge (merge.go) and
// CheckSegments (segments.go) for the segments of one test, Threshold
// (threshold.go), Diagnose (diagnose.go), the end-of-run text summary
// (summary.go, streamsummary.go, distribution.go) and JSON Lines streams
// of results (loadlines.go). TestResultsImportsNoEngine keeps it so: the
// package imports only the standard library, measure (the histogram) and
// internal/lazy.
//
// Version 1 files (histograms as bare encoded strings) are read still
// (schema.go). Read gives a Study for all three: a load run or a capacity search
// becomes a study of one cell and one trial marked SingleRun, so every
// renderer and compare take any of them. A study's trial carries a
// Capacity when its cell measured capacity (measure: capacity).
//
// Files are written whole or not at all (WriteFile: a temporary file in
// the same directory, renamed), never over an existing file unless asked
// to, and a study's directory is created exclusively (NewRunDir).
package results
