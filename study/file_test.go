package study

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// core is the core schema of issue 11, valid as it is; the bad files below
// are small edits of it.
const core = `name: my-ab
trials: 4
warmup: 1s
duration: 2s
load: {url: "http://127.0.0.1:{port}/", method: GET, concurrency: 20}
cells:
  - name: fast
    server: {command: ["./srv", "-addr", "127.0.0.1:{port}"], ready: "http://127.0.0.1:{port}/"}
  - name: slow
    server: {command: ["./srv", "-addr", "127.0.0.1:{port}", "-slow"], ready: "http://127.0.0.1:{port}/"}
`

func TestParseCoreSchema(t *testing.T) {
	def, err := Parse("/x/my.yaml", []byte(core), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != "my-ab" || def.Trials != 4 || def.Warmup != time.Second || def.Duration != 2*time.Second || len(def.Cells) != 2 {
		t.Fatalf("definition: %+v", def)
	}
	fast, slow := def.Cells[0], def.Cells[1]
	if fast.ID() != "my-ab/fast" || slow.Label != "slow" || fast.Server.Dir != "/x" || slow.Server.Command[3] != "-slow" ||
		fast.Server.Ready != "http://127.0.0.1:{port}/" || fast.Load.Raw.URL != "http://127.0.0.1:{port}/" ||
		fast.Load.Raw.Method != "GET" || fast.Load.Options.Concurrency != 20 {
		t.Fatalf("cells: %+v %+v %+v", fast, fast.Server, fast.Load.Raw)
	}
	if c := describeLoad(fast.Load).Concurrency; c != 20 {
		t.Fatalf("recorded concurrency %v", c)
	}
	if n, err := fast.ports(); n != 1 || err != nil {
		t.Fatalf("ports %d %v", n, err)
	}
}

// TestParseMergesDefaultsAndBaseline: the top-level server, load and check
// are defaults a cell replaces key by key; baseline moves its cell first.
func TestParseMergesDefaultsAndBaseline(t *testing.T) {
	def, err := Parse("s.yaml", []byte(`
server: {command: ["./srv", "{port}", "{port2}"], env: {A: "1"}, stop_signal: INT, stop_grace: 2s}
load: {url: "http://127.0.0.1:{port}/x", headers: {X-A: b}, expect_status: 201, rate: 100}
check: {command: ["./count", "{port2}"]}
baseline: b
warmup: 0s
cells:
  - name: a
    load: {concurrency: 3}
  - name: b
    server: {env: {B: "2"}}
    load: {scenario: crud, format: toon, headers: null, expect_status: ~}
  - name: c
    url: http://127.0.0.1:8080
    check: {command: [echo]}
`), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != "s" || def.Warmup >= 0 {
		t.Fatalf("name %q warmup %v", def.Name, def.Warmup)
	}
	b, a, c := def.Cells[0], def.Cells[1], def.Cells[2]
	if b.Label != "b" || !b.Baseline || a.Baseline {
		t.Fatalf("baseline not first: %s %s", b.Label, a.Label)
	}
	if a.Load.Options.Concurrency != 3 || a.Load.Options.Rate != 100 || a.Load.Raw.ExpectStatus[0] != 201 ||
		a.Load.Raw.Header[0] != "X-A: b" || a.Server.StopSignal.String() != "interrupt" || a.Server.StopGrace != 2*time.Second ||
		a.Server.Env[0] != "A=1" || len(a.Checks) != 1 {
		t.Fatalf("a: %+v %+v %+v", a.Load, a.Load.Raw, a.Server)
	}
	if b.Server.Env[0] != "B=2" || b.Load.Scenario == nil || b.Load.Scenario.Format != "toon" || b.Load.Raw != nil {
		t.Fatalf("b: %+v %+v", b.Server, b.Load)
	}
	if c := describeLoad(b.Load).Concurrency; c != 10 {
		t.Fatalf("b: recorded concurrency %v, want the default 10", c)
	}
	if n, _ := b.ports(); n != 2 {
		t.Fatalf("b uses %d ports, want 2", n)
	}
	if c.Server != nil || c.External != "http://127.0.0.1:8080" || c.Load.Raw.URL != "http://127.0.0.1:8080" || c.Checks[0].Name != "echo" {
		t.Fatalf("c: %+v %+v", c, c.Load.Raw)
	}
}

// TestParseErrors is the golden table: each bad file and the exact
// message, which names the file, the line and the field.
func TestParseErrors(t *testing.T) {
	cell := "cells:\n  - name: a\n    server: {command: [./srv]}\n"
	for _, tc := range []struct{ name, file, want string }{
		{"misspelt top-level field", "name: x\ntirals: 4\n" + "load: {url: http://h/}\n" + cell,
			`s.yaml:2: unknown field "tirals" in the study; did you mean "trials"?`},
		{"misspelt server field", core[:strings.Index(core, "  - name: slow")] + "  - name: slow\n    server: {comand: [./srv]}\n",
			`s.yaml:10: unknown field "comand" in cells[1].server; did you mean "command"?`},
		{"unknown field, nothing close", "load: {url: http://h/, zzzzzz: 1}\n" + cell,
			`s.yaml:1: unknown field "zzzzzz" in load (known: arrivals, arrivals_seed, as_format, body, body_file, ca_file, cert_file, compression, concurrency, connections, data, data_file, data_size_list, data_size_range, expect, expect_body_contains, expect_status, expiry_range, flow, format, grpc, headers, import_paths, insecure, key_dist, key_file, key_maximum, key_minimum, keys, loop, messages, method, miss_ratio, no_keepalive, no_preload, open, pipeline, proto, protocol, protoset, rate, ratio, replay, requests, scenario, seed, speed, stages, timeout, transport, url, value_size)`},
		{"kv key on a raw load", "load: {url: http://h/, key_dist: zipf}\n" + cell,
			`s.yaml:1: cells[0] (a).load.key_dist: applies to the key-value scenarios (scenario: kv-set, kv-get or kv-mixed)`},
		{"bad key distribution", "load: {url: \"redis://127.0.0.1:{port}\", scenario: kv-get, key_dist: pareto}\n" + cell,
			`s.yaml:1: cells[0] (a).load.key_dist: key distribution "pareto": want uniform, sequential, parallel, gaussian[:MEDIAN,STDDEV] or zipf[:EXP] (memtier's R, S, P, G, Z)`},
		{"kv scenario with a format", "load: {url: \"redis://127.0.0.1:{port}\", scenario: kv-get, format: toon}\n" + cell,
			`s.yaml:1: cells[0] (a).load.format: does not apply to the kv-get scenario`},
		{"kv options checked", "load: {url: \"redis://127.0.0.1:{port}\", scenario: kv-get, ratio: \"1:1\"}\n" + cell,
			`s.yaml:1: cells[0] (a).load: --ratio 1:1: kv-get sends only GET; use --scenario kv-mixed for a mix`},
		{"misspelt cell field", "load: {url: http://h/}\ncells:\n  - name: a\n    sever: {command: [x]}\n",
			`s.yaml:4: unknown field "sever" in cells[0]; did you mean "server"?`},
		{"misspelt answer metric", "answer: {metric: server_cpu_per_rq}\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: answer: metric "server_cpu_per_rq" is not a report metric; did you mean "server_cpu_per_req"?`},
		{"answer cell missing", "answer: {metric: rps, cell: b}\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: answer: no cell is named "b"; did you mean "a"?`},
		{"answer yes neither better nor worse", "answer: {cell: a, yes: slower}\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: answer: yes: want better or worse (the verdict of the cell against its baseline that answers yes), got "slower"`},
		{"bad duration", "warmup: 1x\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: warmup: want a duration such as 500ms or 2s, got "1x"`},
		{"number as duration", "duration: 5\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: duration: want a duration such as 500ms or 2s, got "5"`},
		{"trials not a number", "trials: four\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: trials: want a whole number, got "four"`},
		{"duration too long", "duration: 2h\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: duration: 2h0m0s is outside 0s..1h0m0s`},
		{"warmup too long", "warmup: 61m\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: warmup: 1h1m0s is outside 0s..1h0m0s`},
		{"negative duration", "duration: -1s\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: duration: want a duration such as 500ms or 2s, got "-1s"`},
		{"trials too many", "trials: 1000\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: trials: 1000 is outside 1..100`},
		{"command not a list", "load: {url: http://h/}\ncells:\n  - name: a\n    server: {command: ./srv -x}\n",
			`s.yaml:4: cells[0].server.command: want a list of strings, such as ["./srv", "-addr", "127.0.0.1:{port}"], got "./srv -x"`},
		{"no cells", "name: x\nload: {url: http://h/}\n",
			`s.yaml:0: cells: at least one cell is needed`},
		{"cell without name", "load: {url: http://h/}\ncells:\n  - server: {command: [x]}\n",
			`s.yaml:3: cells[0]: name is missing`},
		{"duplicate cell", "load: {url: http://h/}\ncells:\n  - name: a\n    server: {command: [x]}\n  - name: a\n    server: {command: [y]}\n",
			`s.yaml:5: cells[1] (a): the name is already used by cells[0]`},
		{"no server", "load: {url: http://h/}\ncells:\n  - name: a\n",
			`s.yaml:3: cells[0] (a): no server: give server.command (a process started per trial) or url (a server already running)`},
		{"url and server", "load: {url: http://h/}\ncells:\n  - name: a\n    url: http://127.0.0.1:1/\n    server: {command: [x]}\n",
			`s.yaml:4: cells[0] (a): url (a server already running) and server (one started per trial) exclude each other`},
		{"no load url", cell,
			`s.yaml:2: cells[0] (a).load.url: missing (e.g. http://127.0.0.1:{port}/)`},
		{"bad placeholder", "load: {url: \"http://127.0.0.1:{prot}/\"}\n" + cell,
			`s.yaml:1: cells[0] (a).load: unknown placeholder {prot} (have {port}, {port2} ... {port9}, {wirebench}, {worktree})`},
		{"port10", "load: {url: \"http://127.0.0.1:{port10}/\"}\n" + cell,
			`s.yaml:1: cells[0] (a).load: unknown placeholder {port10} (have {port}, {port2} ... {port9}, {wirebench}, {worktree})`},
		{"port with external", "load: {url: \"http://127.0.0.1:{port}/\"}\ncells:\n  - name: a\n    url: http://127.0.0.1:80/\n    check: {command: [c, \"{port}\"]}\n",
			`s.yaml:4: cells[0] (a): {port} is chosen per trial for a server the study starts; this cell's server is already running at http://127.0.0.1:80/`},
		{"bad ready", "load: {url: http://h/}\ncells:\n  - name: a\n    server: {command: [x], ready: \"127.0.0.1:{port}\"}\n",
			`s.yaml:4: cells[0] (a).server.ready: want http://host:port/path or tcp://host:port, got "127.0.0.1:{port}"`},
		{"bad signal", "server: {command: [x], stop_signal: STOP}\nload: {url: http://h/}\ncells:\n  - name: a\n",
			`s.yaml:1: cells[0] (a).server.stop_signal: unknown signal "STOP" (want TERM, INT, QUIT, HUP, KILL, USR1 or USR2)`},
		{"bad scenario", "load: {url: http://h:1, scenario: crudd}\n" + cell,
			`s.yaml:1: cells[0] (a).load: scenario "crudd" (want crud, echo, get, list, create, records)`},
		{"bad format", "load: {url: http://h:1, scenario: crud, format: yaml}\n" + cell,
			`s.yaml:1: cells[0] (a).load: format "yaml" (have cbor, json, msgpack, protobuf, toon)`},
		{"headers with scenario", "load: {url: http://h:1, scenario: get, headers: {A: b}}\n" + cell,
			`s.yaml:1: cells[0] (a).load.headers: applies to raw requests; the get scenario makes and checks its own`},
		{"format without scenario", "load: {url: http://h:1, format: toon}\n" + cell,
			`s.yaml:1: cells[0] (a).load.format: applies to a reference-API scenario (set scenario: crud, echo, get, list or create)`},
		{"bad status", "load: {url: http://h:1, expect_status: [200, 999]}\n" + cell,
			`s.yaml:1: cells[0] (a).load: expected status 999`},
		{"body and body_file", "load: {url: http://h:1, body: x, body_file: y}\n" + cell,
			`s.yaml:1: cells[0] (a).load: body and body_file exclude each other`},
		{"body_file missing", "load: {url: http://h:1, body_file: req.json}\n" + cell,
			`s.yaml:1: cells[0] (a).load.body_file: no such file (test)`},
		{"open without rate", "load: {url: http://h:1, open: true}\n" + cell,
			`s.yaml:1: cells[0] (a).load.open: an open loop needs a rate or stages`},
		{"bad baseline", "baseline: c\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: baseline: no cell is named "c"`},
		{"bad name", "name: my study\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: name "my study": want letters, digits, '.', '_' or '-' (it names the results directory), at most 64`},
		{"build without command", "build: {dir: x}\nload: {url: http://h/}\n" + cell,
			`s.yaml:1: build.command: missing (a list such as ["go", "build", "-o", "srv", "."])`},
		{"alias", "load: &l {url: http://h/}\n" + cell,
			`s.yaml:1: load: YAML anchors and aliases are not supported (use the top-level server, load and check defaults)`},
		{"duplicate key", "trials: 1\ntrials: 2\nload: {url: http://h/}\n" + cell,
			`s.yaml:2: the study: field "trials" given twice`},
		{"not a mapping", "- a\n- b\n",
			`s.yaml:1: the study: want a mapping (name: value lines), got a list`},
		{"empty", "",
			`s.yaml:1: the file is empty (wirebench study init writes an example)`},
		{"two errors", "tirals: 4\nwarmup: x\n" + cell,
			"s.yaml:1: unknown field \"tirals\" in the study; did you mean \"trials\"?\ns.yaml:2: warmup: want a duration such as 500ms or 2s, got \"x\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.file), noFiles)
			if err == nil {
				t.Fatalf("no error; want %s", tc.want)
			}
			if !errors.Is(err, ErrStudyFile) {
				t.Errorf("error does not wrap ErrStudyFile: %v", err)
			}
			if got := strings.TrimPrefix(err.Error(), ErrStudyFile.Error()+":\n"); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestParseNumberLimits: every number of a study file has a range;
// huge, negative and NaN values are refused with the line and the field
// (concurrency: 9223372036854775807 panicked in makeslice at the first trial).
func TestParseNumberLimits(t *testing.T) {
	srv := "server: {command: [x]}\n"
	for _, tc := range []struct{ name, file, want string }{
		{"huge concurrency", srv + "load:\n  url: http://h/\n  concurrency: 9223372036854775807\ncells: [{name: a}]\n",
			"s.yaml:4: cells[0] (a).load.concurrency: 9223372036854775807 is outside 0..10000 (0: the default)"},
		{"concurrency over the limit", srv + "load: {url: http://h/, concurrency: 10001}\ncells: [{name: a}]\n",
			"s.yaml:2: cells[0] (a).load.concurrency: 10001 is outside 0..10000"},
		{"negative concurrency", srv + "load: {url: http://h/, concurrency: -1}\ncells: [{name: a}]\n",
			"s.yaml:2: cells[0] (a).load.concurrency: -1 is outside 0..10000"},
		{"huge requests", srv + "load: {url: http://h/, requests: 9223372036854775807}\ncells: [{name: a}]\n",
			"load.requests: 9223372036854775807 is outside 0..1000000000000"},
		{"huge connections", srv + "load: {url: http://h/, connections: 100000000}\ncells: [{name: a}]\n",
			"load.connections: 100000000 is outside 0..10000"},
		{"negative rate", srv + "load: {url: http://h/, rate: -5}\ncells: [{name: a}]\n",
			"load.rate: -5 is outside 0..10000000 requests/s"},
		{"NaN rate", srv + "load: {url: http://h/, rate: .nan}\ncells: [{name: a}]\n",
			`s.yaml:2: load.rate: want a number, got ".nan"`},
		{"infinite rate", srv + "load: {url: http://h/, rate: .inf}\ncells: [{name: a}]\n",
			`s.yaml:2: load.rate: want a number, got ".inf"`},
		{"huge timeout", srv + "load: {url: http://h/, timeout: 1000h}\ncells: [{name: a}]\n",
			"load.timeout: 1000h0m0s is outside 0s..1h0m0s"},
		{"stage target", srv + "load:\n  url: http://h/\n  stages:\n    - {duration: 1s, target: 1}\n    - {duration: 1s, target: 1e9}\ncells: [{name: a}]\n",
			"s.yaml:6: cells[0] (a).load.stages[1].target: 1e+09 is outside 0..10000 VUs"},
		{"open stage target", srv + "load:\n  url: http://h/\n  open: true\n  stages: [{duration: 1s, target: .inf}]\ncells: [{name: a}]\n",
			`load.stages[0].target: want a number, got ".inf"`},
		{"open stage target over the rate limit", srv + "load:\n  url: http://h/\n  open: true\n  stages: [{duration: 1s, target: 1e9}]\ncells: [{name: a}]\n",
			"load.stages[0].target: 1e+09 is outside 0..1e+07 requests/s"},
		{"stage duration", srv + "load:\n  url: http://h/\n  stages: [{duration: 100h, target: 1}]\ncells: [{name: a}]\n",
			"load.stages[0].duration: 100h0m0s is outside 0s..1h0m0s"},
		{"ready timeout", "server: {command: [x], ready_timeout: 100h}\nload: {url: http://h/}\ncells: [{name: a}]\n",
			"s.yaml:1: cells[0] (a).server.ready_timeout: 100h0m0s is outside 0s..1h0m0s"},
		{"check timeout", srv + "load: {url: http://h/}\ncheck: {command: [c], timeout: 100h}\ncells: [{name: a}]\n",
			"s.yaml:3: cells[0] (a).check.timeout: 100h0m0s is outside 0s..1h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.file), noFiles)
			if !errors.Is(err, ErrStudyFile) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParseSyntaxErrorHasLine(t *testing.T) {
	_, err := Parse("s.yaml", []byte("name: x\ncells: [\n"), noFiles)
	if err == nil || !strings.Contains(err.Error(), "s.yaml: line") {
		t.Fatalf("got %v", err)
	}
}

func TestParseLimits(t *testing.T) {
	big := make([]byte, MaxFileSize+1)
	if _, err := Parse("s.yaml", big, noFiles); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("file over the limit: %v", err)
	}
	var b strings.Builder
	b.WriteString("server: {command: [x]}\nload: {url: http://h/}\ncells:\n")
	for i := range MaxCells + 1 {
		b.WriteString("  - name: c" + strings.Repeat("x", i) + "\n")
	}
	if _, err := Parse("s.yaml", []byte(b.String()), noFiles); err == nil || !strings.Contains(err.Error(), "cells: 101, more than the limit of 100") {
		t.Errorf("cells over the limit: %v", err)
	}
	body := func(string) ([]byte, error) { return make([]byte, MaxBodyFileSize+1), nil }
	if _, err := Parse("s.yaml", []byte("server: {command: [x]}\nload: {url: http://h/, body_file: b}\ncells: [{name: a}]\n"), body); err == nil ||
		!strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("body file over the limit: %v", err)
	}
}

// FuzzParse: any input either parses into a definition the runner accepts
// or fails with ErrStudyFile; it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(core))
	f.Add(Example())
	f.Add([]byte("server: {command: [x, \"{port2}\"], env: {A: 1}}\nload: {url: http://h/, stages: [{duration: 1s, target: 2}], expect_status: 200}\nbaseline: b\ncells: [{name: a}, {name: b, url: \"http://127.0.0.1:1\"}]\n"))
	f.Add([]byte("load: {url: \"http://h:1\", scenario: crud, transport: grpc}\ncells: [{name: a, server: {command: [x]}, check: {command: [y]}}]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte(revStudy))
	f.Fuzz(func(t *testing.T, data []byte) {
		def, err := Parse("f.yaml", data, noFiles)
		if err != nil {
			if !errors.Is(err, ErrStudyFile) {
				t.Fatalf("error without ErrStudyFile: %v", err)
			}
			return
		}
		if len(def.Cells) == 0 || len(def.Cells) > MaxCells {
			t.Fatalf("%d cells accepted", len(def.Cells))
		}
		if err := validate(def); err != nil {
			t.Fatalf("parsed definition rejected by the runner: %v", err)
		}
	})
}

func TestExampleParses(t *testing.T) {
	def, err := Parse("dir/study.yaml", Example(), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Builds) != 1 || len(def.Cells) != 2 || def.Cells[0].Label != "old" || !def.Cells[0].Baseline {
		t.Fatalf("example: %+v", def)
	}
	if def.Question != "Is the new build slower than the old one?" {
		t.Fatalf("question %q: the report opens with it", def.Question)
	}
	if def.Answer != (results.Answer{Metric: "rps", Cell: "new", Yes: "worse"}) {
		t.Fatalf("answer %+v", def.Answer)
	}
}

func TestPlaceholders(t *testing.T) {
	v := vars{ports: []int{1000, 2000}, wirebench: "/bin/wb"}
	if got := v.expand(`{wirebench} -a 127.0.0.1:{port} -b :{port2} {"x": {port3}} {print}`); got != `/bin/wb -a 127.0.0.1:1000 -b :2000 {"x": {port3}} {print}` {
		t.Errorf("expand = %q", got)
	}
	for s, want := range map[string]int{"x": 0, "{port}": 1, "{port9} {port}": 9, "{wirebench} {print} ${HOME}": 0} {
		if n, err := portsUsed(s); n != want || err != nil {
			t.Errorf("portsUsed(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"{port1}", "{port10}", "{prot}", "{Port}", "{wirebnch}", "{port02}"} {
		if _, err := portsUsed(s); err == nil {
			t.Errorf("portsUsed(%q): no error", s)
		}
	}
}

// TestParseArrivals reads a cell's arrival process (empty: the engine's
// default, uniform for a load, Poisson for a capacity search) and refuses
// an unknown one on its line.
func TestParseArrivals(t *testing.T) {
	f := strings.Replace(core, "concurrency: 20}", "concurrency: 20, rate: 500, arrivals: poisson, arrivals_seed: 9}", 1)
	def, err := Parse("/x/my.yaml", []byte(f), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if o := def.Cells[0].Load.Options; o.Arrivals != results.Poisson || o.Seed != 9 {
		t.Fatalf("arrivals %q seed %d, want poisson 9", o.Arrivals, o.Seed)
	}
	bad := strings.Replace(core, "concurrency: 20}", "concurrency: 20, rate: 500, arrivals: bursty}", 1)
	if _, err := Parse("/x/my.yaml", []byte(bad), noFiles); err == nil || !strings.Contains(err.Error(), `my.yaml:5: cells[0] (fast).load.arrivals "bursty": want uniform or poisson`) {
		t.Fatalf("bad arrivals: %v", err)
	}
}
