package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// readmeCommands lists README.md's commands in order: each line of its
// ```sh blocks (comments cut, continuations joined), and each inline code
// span that starts with a command (wirebench, go, scripts/, docker, git).
func readmeCommands(text string) []string {
	var out []string
	inSh, cont := false, ""
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		case !inSh:
			for _, m := range inlineCmd().FindAllStringSubmatch(line, -1) {
				out = append(out, m[1])
			}
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cont += l
			continue
		}
		out = append(out, strings.Join(strings.Fields(cont+line), " "))
		cont = ""
	}
	return out
}

var inlineCmd = func() func() *regexp.Regexp {
	re := regexp.MustCompile("`((?:wirebench|go|docker|git)(?: [^`]*)?|scripts/[^` ]+)`")
	return func() *regexp.Regexp { return re }
}()

// readmeCmd is how TestREADMECommands treats one README command.
type readmeCmd struct {
	how   string   // "name" (-h must work), "serve" (started, then stopped), "run", "e2e" (TestREADMECommandsEndToEnd), "skip"
	extra []string // appended: a run's bound, so that the main suite stays quick
	why   string   // for skip, and for e2e or an added bound
}

// readmeCmds classifies every command of README.md; a command the README
// gains without an entry here fails TestREADMECommands. In the table,
// URL, FILE, OLD and NEW are placeholders: the test gives them the
// reference server started here, a recording and result folders; fixed
// ports become free ones (a test never takes a fixed port).
var readmeCmds = map[string]readmeCmd{
	"git clone https://github.com/wirebench/wirebench && cd wirebench": {how: "skip", why: "network: this test runs in the clone"},
	"go install ./cmd/wirebench":                                       {how: "e2e", why: "a build of its own (GOBIN set to a temporary folder)"},
	"wirebench version":                                                {how: "run"},
	"go install github.com/wirebench/wirebench/cmd/wirebench@latest":   {how: "skip", why: "network, and the module is not published yet (the README says so)"},
	"docker build -t wirebench .":                                      {how: "skip", why: "needs docker and the network (base images)"},
	"go run ./cmd/wirebench":                                           {how: "skip", why: "a prefix standing for `wirebench`, not a command"},
	"go run ./cmd/wirebench study formats --quick":                     {how: "e2e", why: "about a minute, more on a busy machine"},
	"go test ./...":                                                    {how: "skip", why: "the suite this test is part of"},
	"wirebench study formats":                                          {how: "skip", why: "a full study takes about 10 minutes; its --quick form is the code block's and runs end to end"},
	"wirebench study json-libs":                                        {how: "skip", why: "a full study takes minutes; study's tests run its cells"},
	"wirebench study grpc-vs-rest":                                     {how: "skip", why: "a full study takes minutes; study's tests run its cells"},
	"wirebench study kv":                                               {how: "skip", why: "a full study takes minutes beside redis-server; TestKVStudyQuickRedis runs its --quick form"},
	"wirebench study bulk-upsert":                                      {how: "skip", why: "a million records into SQLite takes minutes; study's tests run smaller ones"},
	"wirebench study run my.yaml":                                      {how: "skip", why: "my.yaml is the reader's own study file; TestStudyFileFindsTheSlowerServer runs one"},
	"wirebench load URL":                                               {how: "run", extra: []string{"-n", "200"}, why: "-n bounds it (10 s by default)"},
	"wirebench load --grpc pkg.Service/Method --data '{\"id\": \"{{.N}}\"}' host:port":         {how: "skip", why: "a placeholder method and target; TestLoadGRPCCLI runs it against grpc-go's TestService"},
	"wirebench serve --https 127.0.0.1:8443 --http3 127.0.0.1:8443":                            {how: "serve"},
	"wirebench load --flow examples/flows/users.yaml --data-file examples/flows/users.csv URL": {how: "skip", why: "URL is a base URL here, not a request's; TestFlowExampleAgainstServe runs this flow against the reference server"},
	"wirebench load --transport h3 -k https://127.0.0.1:8443/users/1":                          {how: "run", extra: []string{"-n", "200"}, why: "-n bounds it"},
	"wirebench capacity --slo 'p99<20ms' URL":                                                  {how: "e2e", why: "a search of several steps; bounded by --max-rate there"},
	"wirebench load --link 3g URL":                                                             {how: "skip", why: "needs root and a 3g calibration of ~10 s; TestLinkLoadHTTP1 runs load --link (as root)"},
	"wirebench link 'rtt=50ms,loss=1%' -- COMMAND":                                             {how: "skip", why: "needs root; TestLinkKilledLeavesNothing runs wirebench link (as root)"},
	"wirebench load": {how: "name"},
	"wirebench replay FILE --target URL [--slo 'p99<20ms']":       {how: "run", why: "the recording is 50 requests over 100 ms; the --slo search runs end to end"},
	"wirebench study run examples/catalog/study.yaml":             {how: "skip", why: "a capacity search per trial: minutes; TestCatalogExampleStudyParses reads the file, TestSameAnswersBothWays checks the service, docs/grpc.md quotes a smoke run"},
	"wirebench export --format bmf RESULT…":                       {how: "skip", why: "RESULT… stands for result files; TestExport runs export on a study and two load runs and checks the file against Bencher's schema"},
	"wirebench study formats --data examples/data/shipments.json": {how: "skip", why: "a study of every format on the example's records takes minutes; study's TestStudyOnDataEndToEnd runs it (--quick) with every reply checked"},
	"wirebench study networks --quick":                            {how: "skip", why: "needs root and about 6 minutes of links; study's tests check its definition, TestStudyLinksAxis runs a study on two links (as root)"},
	"wirebench study formats --links none,3g":                     {how: "skip", why: "needs root and a full study on two links; TestStudyLinksAxis runs the links axis (as root)"},
	"scripts/gate.sh":                {how: "skip", why: "builds two revisions and runs a minute of load; CI runs it after the peer step (.ci/run)"},
	"wirebench payload FILE":         {how: "skip", why: "FILE is the reader's samples; TestPayloadCommand runs it on a sample file, TestPayloadCommandProto with --proto"},
	"wirebench merge":                {how: "name"},
	"wirebench serve":                {how: "serve"},
	"wirebench report wirebench-out": {how: "run"},
	"wirebench compare OLD NEW":      {how: "run"},
	"wirebench gate gate-out":        {how: "run"},
	"scripts/server-cost.sh":         {how: "skip", why: "a benchmark of minutes beside wrk, under the load lock"},
	"scripts/mutation.sh":            {how: "skip", why: "mutation testing takes 15-20 minutes per package set; CI gates one package per commit"},
	"wirebench":                      {how: "name"},
	"wirebench load -h":              {how: "run"},
	"wirebench help":                 {how: "run"},
	"wirebench capacity":             {how: "name"},
	"wirebench gate":                 {how: "name"},
	"scripts/figures.sh":             {how: "skip", why: "re-runs every figure of the docs: hours"},
}

// readmeEnv is what the README's placeholders stand for in a test.
type readmeEnv struct {
	bin, dir  string
	url, h3   string // the reference server's REST URL; its HTTP/3 address
	recording string
}

// argv turns a README command into the argv run here: wirebench (and go
// run ./cmd/wirebench) is the test binary, placeholders and fixed ports
// are replaced, an optional [--flag value] is left out.
func (e *readmeEnv) argv(cmd string, serve bool) []string {
	cmd = regexp.MustCompile(`\s*\[[^]]*\]`).ReplaceAllString(cmd, "")
	cmd = strings.Replace(cmd, "go run ./cmd/wirebench", "wirebench", 1)
	var args []string
	for _, f := range shellFields(cmd) {
		switch {
		case f == "wirebench" && len(args) == 0:
			f = e.bin
		case f == "URL":
			f = e.url + "/users/1"
		case f == "FILE":
			f = e.recording
		case f == "OLD" || f == "NEW":
			f = filepath.Join(e.dir, strings.ToLower(f))
		case serve:
			f = strings.ReplaceAll(f, "127.0.0.1:8443", "127.0.0.1:0")
		default:
			f = strings.ReplaceAll(f, "127.0.0.1:8443", e.h3)
		}
		args = append(args, f)
	}
	if serve { // the default ports too: free ones, read back from its listening line
		args = append(args, "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0")
	}
	return args
}

// shellFields splits a command line as sh does for the README's commands:
// on blanks, single quotes kept together.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

var listening = regexp.MustCompile(`^listening http=(\S+).*?(?: h3=(\S+))?$`)

// TestREADMECommands runs README.md's commands: every command named gets
// -h, the servers start and answer until the test ends, the commands that
// need them run against them, and every other one is run end to end
// (TestREADMECommandsEndToEnd) or skipped with its reason in readmeCmds.
// A command that fails fails the test, with its output.
func TestREADMECommands(t *testing.T) {
	cmds := readmeCommands(readme(t))
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in README.md: the parser lost some: %q", len(cmds), cmds)
	}
	e := &readmeEnv{bin: testkit.Binary(t), dir: t.TempDir()}
	for _, c := range cmds {
		if _, ok := readmeCmds[c]; !ok {
			t.Errorf("README command %q: not in readmeCmds (run it here, or skip it with a reason)", c)
		}
	}
	for _, c := range cmds { // the servers first: commands further up use them
		if readmeCmds[c].how != "serve" {
			continue
		}
		_, m := testkit.StartLine(t, exec.Command(e.bin, e.argv(c, true)[1:]...), listening, time.Minute)
		e.url = cmpOr(e.url, "http://"+m[1])
		e.h3 = cmpOr(e.h3, m[2])
	}
	if e.url == "" || e.h3 == "" {
		t.Fatalf("the README's servers gave REST %q and HTTP/3 %q", e.url, e.h3)
	}
	e.recording = filepath.Join(e.dir, "recording.log")
	reqs := make([]reqlog.Request, 50)
	for i := range reqs {
		reqs[i] = reqlog.Request{Method: "GET", Target: "/users/1", Status: 200}
	}
	writeReqlog(t, e.recording, reqs)
	for _, out := range []string{"old", "new", "wirebench-out", "gate-out"} { // study --out folders of one run each
		copyRun(t, filepath.Join(e.dir, out, "gate-20261128T000000Z"), gateStudy(t, 8, 1))
	}
	ran := 0
	for _, c := range cmds {
		rc := readmeCmds[c]
		var args []string
		switch rc.how {
		case "name":
			args = append(e.argv(c, false), "-h")
		case "run":
			args = append(e.argv(c, false), rc.extra...)
		default:
			continue
		}
		runREADME(t, e.dir, c, args)
		ran++
	}
	t.Logf("ran %d of %d README commands; the servers of %d more", ran, len(cmds), 2)
}

// runREADME runs one README command in dir, failing the test if it exits
// non-zero; a minute is a guard against a hang, not a measurement.
func runREADME(t *testing.T, dir, readmeCmd string, args []string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("README command %q (run as %q): %v\n%s", readmeCmd, args, err, out)
	}
	return string(out)
}

func copyRun(t *testing.T, dir, src string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestREADMECommandsEndToEnd runs the README's long commands: the
// install, the quick formats study as the README shows it (its output
// folder and files as described), and a capacity search and a replay
// speed search against the reference server, bounded.
func TestREADMECommandsEndToEnd(t *testing.T) {
	testkit.NeedPeers(t)
	defer loadLock(t)()
	cmds := readmeCommands(readme(t))
	e := &readmeEnv{bin: testkit.Binary(t), dir: t.TempDir()}
	_, m := testkit.StartLine(t, exec.Command(e.bin, "serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"), listening, time.Minute)
	e.url = "http://" + m[1]
	e.recording = filepath.Join(e.dir, "recording.log")
	reqs := make([]reqlog.Request, 50)
	for i := range reqs {
		reqs[i] = reqlog.Request{Method: "GET", Target: "/users/1", Status: 200}
	}
	writeReqlog(t, e.recording, reqs)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range cmds {
		switch {
		case c == "go install ./cmd/wirebench":
			gobin := filepath.Join(e.dir, "bin")
			runREADME(t, root, c, []string{"go", "install", "./cmd/wirebench"}, "GOBIN="+gobin)
			if out := runREADME(t, e.dir, "wirebench version", []string{filepath.Join(gobin, "wirebench"), "version"}); !strings.Contains(out, "go1.") {
				t.Errorf("the installed wirebench's version names no Go: %s", out)
			}
		case strings.HasSuffix(c, "study formats --quick"):
			// The command as written, in one short trial a cell: what is
			// checked is that it runs and what it writes where, and its 16
			// trials of 2 s each were most of CI's peer step.
			runREADME(t, e.dir, c, append(e.argv(c, false), "--trials", "1", "--warmup", "100ms", "--duration", "300ms"))
			runs, _ := filepath.Glob(filepath.Join(e.dir, "wirebench-out", "formats-*"))
			if len(runs) != 1 {
				t.Fatalf("the quick formats study wrote %d folders under wirebench-out/, want 1 as the README says", len(runs))
			}
			for _, f := range []string{"results.json", "report.md", "report.csv", "report.html"} {
				if _, err := os.Stat(filepath.Join(runs[0], f)); err != nil {
					t.Errorf("the README's study output lacks %s: %v", f, err)
				}
			}
		case strings.HasPrefix(c, "wirebench capacity --slo"):
			runREADME(t, e.dir, c, append(e.argv(c, false), "--max-rate", "3200", "--step-duration", "300ms", "--warmup", "100ms"))
		case strings.HasPrefix(c, "wirebench replay FILE"):
			runREADME(t, e.dir, c, append(e.argv(strings.NewReplacer("[", "", "]", "").Replace(c), false), "--max-speed", "16"))
		default:
			continue
		}
		ran++
	}
	if ran != 4 {
		t.Errorf("ran %d of the README's 4 long commands: a command changed in README.md", ran)
	}
}
