package study

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

func init() {
	Register("kv", kvStudy)
}

// The seed's settings (seed 002): 50 connections, 128-byte values, 10,000
// keys, SET then GET.
const (
	kvConns     = 50
	kvKeys      = 10000
	kvValueSize = 128
)

// kvRedisInstall is what to do when redis-server or redis-benchmark is
// missing.
const kvRedisInstall = "apt-get install redis-server redis-tools"

// kvPersistence is one durability setting, as Redis and wirebench serve
// spell it.
type kvPersistence struct {
	key, title string
	redis      []string // redis-server flags
	fsync      string   // wirebench serve --appendfsync; "" is memory only
}

var kvPersistences = []kvPersistence{
	{"none", "no persistence", []string{"--save", "", "--appendonly", "no"}, ""},
	{"everysec", "AOF everysec", []string{"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"}, "everysec"},
	{"always", "AOF always", []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}, "always"},
}

// kvDataDir is where a trial's server keeps its files: one directory per
// trial (named by its port), made by the server's start command and
// removed after the trial (kvDataCheck). Under the system's temporary
// directory, which the report names with its filesystem.
func kvDataDir(label string) string {
	return filepath.Join(os.TempDir(), "wirebench-study-kv", label+"-{port}")
}

// kvOps are the two operations, in the seed's order.
var kvOps = []struct{ op, scenario string }{{"SET", scenario.ScenarioKVSet}, {"GET", scenario.ScenarioKVGet}}

// kvStudy is seed 002 done right: Redis and wirebench's KV store driven
// by one client with the seed's settings, at matched persistence, with
// redis-benchmark run beside every Redis trial as a check of the client.
func kvStudy() Definition {
	def := Definition{
		Name:  "kv",
		Title: "KV: wirebench vs Redis, one client, matched persistence (seed 002, done right)",
		Question: "How fast is wirebench's KV store against redis-server when both are driven by the same client " +
			"at the same persistence setting, and what does HTTP cost beside RESP?",
		Answer: results.Answer{Metric: "rps", Cell: "wirebench RESP"}, // per operation and persistence, against Redis
		Description: "50 connections, 128-byte values, 10,000 keys, SET then GET (GET preloads the keys; every value checked): " +
			"redis-server and wirebench serve --resp at no persistence, AOF everysec and AOF always, wirebench's /kv over HTTP " +
			"(raw and JSON bodies) at AOF everysec; redis-benchmark beside each Redis and wirebench RESP trial.",
		Notes: kvNotes,
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		def.Warnings = append(def.Warnings, "redis-server is not installed: the Redis cells cannot run ("+kvRedisInstall+")")
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		def.Warnings = append(def.Warnings, "redis-benchmark is not installed: no cross-check of the Redis cells ("+kvRedisInstall+")")
	}
	for _, o := range kvOps {
		for _, p := range kvPersistences {
			g := o.op + ", " + p.title
			def.Cells = append(def.Cells, kvRedisCell(g, o.op, o.scenario, p), kvWirebenchRESPCell(g, o.op, o.scenario, p))
			if p.key == "everysec" {
				def.Cells = append(def.Cells,
					kvWirebenchHTTPCell(g, o.scenario, p, scenario.ProtocolHTTPRaw),
					kvWirebenchHTTPCell(g, o.scenario, p, scenario.ProtocolHTTPJSON))
			}
		}
	}
	kvReplAdd(&def) // kv_repl.go: the replication cells (issue 13)
	return def
}

// kvLoad is the seed's client: 50 connections, 10,000 keys, 128 bytes.
func kvLoad(name, protocol, url string) LoadSpec {
	return LoadSpec{
		Options: load.Options{Options: results.Options{Concurrency: kvConns}},
		KV:      &scenario.KVOptions{Name: name, Protocol: protocol, URL: url, Keys: kvKeys, ValueSize: kvValueSize, Pipeline: 1},
	}
}

// kvWithDir starts args through sh with its data directory made first;
// exec keeps the PID, so the sampler measures the server itself.
func kvWithDir(dir string, args ...string) []string {
	return append([]string{"sh", "-c", `mkdir -p "$1" && shift && exec "$@"`, "sh", dir}, args...)
}

// kvRedisCell runs redis-server at one persistence setting.
func kvRedisCell(group, op, name string, p kvPersistence) Cell {
	dir := kvDataDir("redis-" + p.key)
	cmd := append([]string{"redis-server", "--bind", "127.0.0.1", "--port", "{port}", "--dir", dir,
		"--protected-mode", "no", "--daemonize", "no", "--logfile", ""}, p.redis...)
	// The shell names what to install when redis-server is missing: the
	// trial's error quotes it.
	script := `command -v redis-server >/dev/null || { echo "redis-server is not installed: ` + kvRedisInstall + `" >&2; exit 127; }; ` +
		`mkdir -p "$1" && shift && exec "$@"`
	return Cell{
		Group: group, Label: "Redis", Baseline: true,
		Server: &Server{Command: append([]string{"sh", "-c", script, "sh", dir}, cmd...)},
		Load:   kvLoad(name, scenario.ProtocolRESP, "redis://127.0.0.1:{port}"),
		Checks: kvDataChecks(dir, kvRedisBenchCheck(op)),
	}
}

// kvWirebenchRESPCell runs wirebench serve --resp at one persistence
// setting (the HTTP face is there too, on a port of its own, unused).
// redis-benchmark runs after our load here too: its figures against
// Redis and against ours, beside our client's, show a client that
// favours either server.
func kvWirebenchRESPCell(group, op, name string, p kvPersistence) Cell {
	dir := kvDataDir("wirebench-resp-" + p.key)
	args := []string{"--resp", "127.0.0.1:{port}", "--http", "127.0.0.1:{port2}", "--no-grpc", "--seed-users", "0", "--seed-todos", "0"}
	if p.fsync != "" {
		args = append(args, "--data-dir", dir, "--appendfsync", p.fsync)
	}
	return Cell{
		Group: group, Label: "wirebench RESP", ServeArgs: args,
		Server: &Server{Command: kvWithDir(dir, append([]string{"{wirebench}", "serve"}, args...)...)},
		Load:   kvLoad(name, scenario.ProtocolRESP, "redis://127.0.0.1:{port}"),
		Checks: kvDataChecks(dir, kvRedisBenchCheck(op)),
	}
}

// kvWirebenchHTTPCell runs wirebench serve's /kv over HTTP.
func kvWirebenchHTTPCell(group, name string, p kvPersistence, protocol string) Cell {
	dir := kvDataDir("wirebench-" + protocol + "-" + p.key)
	args := []string{"--http", "127.0.0.1:{port}", "--no-grpc", "--seed-users", "0", "--seed-todos", "0"}
	if p.fsync != "" {
		args = append(args, "--data-dir", dir, "--appendfsync", p.fsync)
	}
	label := map[string]string{scenario.ProtocolHTTPRaw: "wirebench HTTP raw", scenario.ProtocolHTTPJSON: "wirebench HTTP JSON"}[protocol]
	return Cell{
		Group: group, Label: label, ServeArgs: args,
		Server: &Server{Command: kvWithDir(dir, append([]string{"{wirebench}", "serve"}, args...)...), Ready: "http://127.0.0.1:{port}/healthz"},
		Load:   kvLoad(name, protocol, "http://127.0.0.1:{port}"),
		Checks: kvDataChecks(dir),
	}
}

// kvDataChecks record how many bytes the server wrote to its data
// directory during our load, run the checks between, and remove the
// directory at the end of the trial.
func kvDataChecks(dir string, between ...Check) []Check {
	size := Check{
		Name:      "data directory size",
		templates: []string{dir},
		After: func(ctx context.Context, e *TrialEnv) error {
			var n int64
			_ = filepath.WalkDir(e.Expand(dir), func(_ string, de fs.DirEntry, err error) error {
				if err == nil && !de.IsDir() {
					if fi, err := de.Info(); err == nil {
						n += fi.Size()
					}
				}
				return nil
			})
			setExternal(e.Trial, "data dir bytes", float64(n))
			return nil
		},
	}
	remove := Check{
		Name:      "data directory removal",
		templates: []string{dir},
		After: func(ctx context.Context, e *TrialEnv) error {
			if err := os.RemoveAll(e.Expand(dir)); err != nil {
				return fmt.Errorf("study: remove the trial's data directory: %w", err)
			}
			return nil
		},
	}
	return append(append([]Check{size}, between...), remove)
}

// kvRedisBenchCheck runs redis-benchmark with the seed's settings against
// the trial's Redis after our load, for as many requests as our client
// completed (so both runs last about as long), and records its rate and
// its own CPU use: redis-benchmark is one thread, and on the client's one
// CPU it is the bottleneck (issue 41: it used ~98% of CPU 0 at 11 µs per
// request where our client used 7.3 µs), which is what the report's
// client ratio measures. A missing redis-benchmark is recorded, not
// fatal: it is a cross-check.
func kvRedisBenchCheck(op string) Check {
	return Check{
		Name:      "redis-benchmark " + op,
		templates: []string{"{port}"},
		After: func(ctx context.Context, e *TrialEnv) error {
			n := int64(100_000) // the seed's -n
			if e.Trial.Load != nil {
				n = min(max(e.Trial.Load.Requests, 1000), 2_000_000)
			}
			c := Command{Args: []string{"redis-benchmark", "-h", "127.0.0.1", "-p", "{port}", "-c", strconv.Itoa(kvConns),
				"-n", strconv.FormatInt(n, 10), "-r", strconv.Itoa(kvKeys), "-d", strconv.Itoa(kvValueSize), "-t", op, "--csv"},
				Timeout: 5 * time.Minute}
			start := time.Now()
			exit, out, cpu, err := kvRunTimed(ctx, c, e.v)
			wall := time.Since(start)
			cr := results.CheckResult{Command: e.v.expandAll(c.Args), OK: err == nil, ExitCode: exit, Output: out, Duration: wall}
			if err != nil {
				cr.Output += "\n(" + kvRedisInstall + ")"
			}
			e.Trial.Checks = append(e.Trial.Checks, cr)
			if rps, ok := scenario.ParseRedisBenchmarkCSV(out)[op]; ok && err == nil {
				setExternal(e.Trial, "redis-benchmark "+op+" rps", rps)
				if cpu > 0 {
					setExternal(e.Trial, kvBenchCPUPerReq(op), float64(cpu)/float64(n))
					setExternal(e.Trial, kvBenchCPUShare(op), float64(cpu)/float64(wall))
				}
			}
			return nil
		},
	}
}

// The external figures of redis-benchmark's own CPU use: nanoseconds of
// user+system time per request, and that time over the run's wall time
// (1 is one CPU busy throughout).
func kvBenchCPUPerReq(op string) string { return "redis-benchmark " + op + " client CPU ns/request" }
func kvBenchCPUShare(op string) string  { return "redis-benchmark " + op + " client CPU share" }

// kvRunTimed is Command.run that also returns the child's CPU time (user
// and system, from its rusage).
func kvRunTimed(ctx context.Context, c Command, v vars) (exit int, output string, cpu time.Duration, err error) {
	args := v.expandAll(c.Args)
	path, err := resolveCommand(args[0], c.Dir)
	if err != nil {
		return -1, "", 0, fmt.Errorf("%s: %w", args[0], err)
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(c.Timeout, DefaultCheckTimeout))
	defer cancel()
	out := tailBuffer{max: logTail}
	cmd := exec.CommandContext(ctx, path, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
		exit = ps.ExitCode()
	}
	if err != nil {
		return exit, out.String(), cpu, fmt.Errorf("%w: %q: %v", ErrCommand, strings.Join(args, " "), err)
	}
	return 0, out.String(), cpu, nil
}

func setExternal(t *results.Trial, name string, v float64) {
	if t.External == nil {
		t.External = map[string]float64{}
	}
	t.External[name] = v
}
