package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/study"
)

func init() {
	register("study", command{
		summary: "run an experiment end to end and write its report (study list: the built-in ones)",
		run:     runStudy,
	})
}

func runStudy(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 && args[0] == "init" {
		return runStudyInit(env, args[1:])
	}
	fs := newFlagSet(env, "study", "<name> [flags]   (names: "+strings.Join(study.Names(), ", ")+"; 'list' describes them)\n"+
		"       wirebench study run FILE.yaml [flags]   (a study of your own servers)\n"+
		"       wirebench study init [FILE.yaml]        (write a commented example, default study.yaml)\n\n"+
		"Exit status: 0 ok, 1 a cell had no successful trial or the study failed, 2 bad usage or study file.")
	var o study.Options
	fs.BoolVar(&o.Quick, "quick", false, "fewer, shorter trials (about a minute; networks "+study.NetworksQuickTime+" on 3 links; with --slo each trial is a search of 15-25 s, a minute at most, 10% precision: formats about 6 min, 18 at most); the report says so (a study file's own values win)")
	fs.IntVar(&o.Trials, "trials", 0, "trials per cell (default 6, the fewest for a 95% CI of the median; 2 with --quick)")
	fs.DurationVar(&o.Warmup, "warmup", 0, "warm-up before each measured run (default 3s, 500ms with --quick)")
	fs.DurationVar(&o.Duration, "duration", 0, "measured run per trial (default 10s, 1.5s with --quick)")
	fs.Int64Var(&o.Seed, "seed", 0, "seed of the shuffled trial order (default: from the clock; recorded)")
	fs.BoolVar(&o.NoPin, "no-pin", false, "do not pin client and server to separate CPUs")
	clientCPUs := fs.String("client-cpus", "", "pin the client (this process) to these `CPUs` (default: the first CPU)")
	serverCPUs := fs.String("server-cpus", "", "pin each server process to these `CPUs` (default: the other CPUs)")
	out := fs.String("out", "wirebench-out", "`directory` under which <study>-<timestamp>/ is written (kept apart from the sources: results/ is a Go package)")
	bin := fs.String("bin", "", "wirebench `binary`, {wirebench} in server commands (default: this executable)")
	serveArgs := fs.String("serve-args", "", "extra `args` appended to every server command, space-separated (e.g. '--delay 200us')")
	ports := fs.String("ports", "", "bind the servers' ports ({port}, {port2}, ...) only in this range, `LO-HI` (e.g. 9000-9099); default: free ports the kernel picks")
	records := fs.Int("records", 0, "bulk-upsert: records per upload (default 1000000; 100000 with --quick)")
	bulkFormats := fs.String("formats", "", "bulk-upsert: comma-separated `formats` (default: json,ndjson,toon,protobuf,csv); with --data: the formats studied (default: all the data can be served in)")
	var data study.Data
	fs.StringVar(&data.File, "data", "", "formats, payload-size, or a study file's reference-server cells: serve the records of this JSON `file` at /records instead of the built-in users, every reply checked against it (docs/payload.md)")
	fs.StringVar(&data.Key, "data-key", "", "--data: the `member` keying each record (default: id, else the first member unique in every record)")
	fs.StringVar(&data.Proto, "proto", "", "--data: the records' protobuf schema, a .proto `file` (the protobuf cell needs one)")
	fs.StringVar(&data.Protoset, "protoset", "", "--data: the records' protobuf schema as a FileDescriptorSet `file`")
	fs.StringVar(&data.Message, "message", "", "--data: the records' message by full name (pkg.Msg); default: the file's only message")
	keyDists := fs.StringArray("key-dist", nil, "add, beside each KV group (study kv, or a study file's kv-* cells), its twin with keys drawn from this `distribution`: zipf:0.99, zipf, gaussian[:MEDIAN,STDDEV], sequential (repeatable)")
	kvPipelines := fs.String("kv-pipeline", "1,16", "--key-dist: the skewed twins' pipeline `depths`, comma-separated: 1 is each cell's own; a deeper one adds the RESP cells' twins pipelined that deep (Redis's and ours)")
	cellsRe := fs.String("cells", "", "run only the cells whose \"group / label\" matches this `regexp` (after --key-dist and --h3 added theirs), e.g. '(everysec|always), zipf.* / (Redis|wirebench RESP)$'")
	h3 := fs.Bool("h3", false, "add, beside each REST cell of a built-in study (formats, grpc-vs-rest, json-libs), its twin over HTTP/3 on TLS (docs/http3.md)")
	slo := fs.StringArray("slo", nil, "measure capacity at this SLO `criterion` (repeatable: p99<20ms, errors<0.1%) instead of throughput: each trial searches the highest open-loop rate that meets it (docs/capacity.md)")
	links := fs.StringArray("links", nil, "run every cell across each of these emulated networks, interleaved, and answer per link (in p50 latency): presets or link `SPECs`, none for loopback: none,3g,4g or 'none;rtt=50ms,loss=1%' (repeatable; needs root; docs/network.md)")
	oneLink := fs.String("link", "", "run every cell across this one emulated network `SPEC` (as --links with one link)")
	linkCalibrate := fs.Bool("link-calibrate", true, "--links: measure each link (round trips, rate each way, loss) before the trials and record it beside its spec")
	linkCheck := fs.Bool("link-check", true, "--links: fail when a link measured is off its spec beyond the tolerances")
	quota := fs.String("server-cpu-quota", "auto", "cap each server the study starts at this many `CPUs` (0.5), off, or auto: a study measuring capacity calibrates and gives the servers the largest quota the client can outrun (docs/capacity.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q, err := parseQuota(*quota)
	if err != nil {
		return usagef("--server-cpu-quota: %v", err)
	}
	o.ServerCPUQuota = q
	for _, err := range []error{
		flags.CheckInt("--trials", int64(o.Trials), 0, study.MaxTrials, ""),
		flags.CheckDuration("--warmup", o.Warmup, 0, study.MaxPhase),
		flags.CheckDuration("--duration", o.Duration, 0, study.MaxPhase),
	} {
		if err != nil {
			return err
		}
	}
	var def study.Definition
	switch {
	case fs.NArg() == 2 && fs.Arg(0) == "run":
		if def, err = study.ParseFile(fs.Arg(1)); err != nil {
			return usageError{Err: err}
		}
	case fs.NArg() >= 1 && fs.Arg(0) == "run":
		return usagef("study run: want one study file, got %d arguments", fs.NArg()-1)
	case fs.NArg() != 1:
		return usagef("want one study name (%s), list, run FILE or init", strings.Join(study.Names(), ", "))
	case fs.Arg(0) == "list":
		for _, n := range study.Names() {
			def, _ := study.Lookup(n)
			fmt.Fprintf(env.stdout, "%-14s %s\n%14s %s\n", n, def.Title, "", def.Description)
		}
		return nil
	default:
		if def, err = study.Lookup(fs.Arg(0)); err != nil {
			return usageError{Err: err}
		}
	}
	if data.File != "" {
		if def.Name == study.BulkUpsertName {
			return usagef("--data: bulk-upsert has its own records (--records)")
		}
		if data.Proto != "" && data.Protoset != "" {
			return usagef("--proto and --protoset: give one schema")
		}
		if *bulkFormats != "" {
			data.Formats = strings.Split(*bulkFormats, ",")
		}
		if def, err = study.WithData(ctx, def, data); err != nil {
			return usageError{Err: err}
		}
	} else if data.Key != "" || data.Proto != "" || data.Protoset != "" || data.Message != "" {
		return usagef("--data-key, --proto, --protoset and --message need --data FILE")
	}
	if *h3 {
		if def, err = study.WithH3(def); err != nil {
			return usageError{Err: err}
		}
	}
	if len(*keyDists) > 0 {
		var specs []keydist.Spec
		for _, s := range *keyDists {
			sp, err := keydist.Parse(s)
			if err != nil {
				return usagef("--key-dist: %s", strings.TrimPrefix(err.Error(), keydist.ErrSpec.Error()+": "))
			}
			specs = append(specs, sp)
		}
		var depths []int
		for _, p := range strings.Split(*kvPipelines, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return usagef("--kv-pipeline %q: want depths such as 1,16", *kvPipelines)
			}
			depths = append(depths, n)
		}
		if def, err = study.WithKeyDists(def, specs, depths...); err != nil {
			return usageError{Err: err}
		}
	} else if fs.Changed("kv-pipeline") {
		return usagef("--kv-pipeline: the depths of --key-dist's twins: give --key-dist too")
	}
	if *cellsRe != "" {
		re, err := regexp.Compile(*cellsRe)
		if err != nil {
			return usagef("--cells: %v", err)
		}
		if def, err = study.SelectCells(def, re); err != nil {
			return usageError{Err: err}
		}
	}
	for flagName, dst := range map[string]*[]int{"client-cpus": &o.ClientCPUs, "server-cpus": &o.ServerCPUs} {
		v := map[string]string{"client-cpus": *clientCPUs, "server-cpus": *serverCPUs}[flagName]
		if v == "" {
			continue
		}
		if *dst, err = measure.ParseCPUList(v); err != nil {
			return usagef("-%s %s", flagName, strings.TrimPrefix(err.Error(), measure.ErrCPUList.Error()+": "))
		}
	}
	if *ports != "" {
		if o.Ports, err = study.ParsePortRange(*ports); err != nil {
			return usagef("--ports: %s", strings.TrimPrefix(err.Error(), study.ErrPorts.Error()+": "))
		}
	}
	if len(*slo) > 0 {
		co := &capacity.Options{}
		for _, s := range *slo {
			th, err := results.ParseThreshold(s)
			if err != nil {
				return usagef("--slo: %s", cliMessage(err))
			}
			co.SLO = append(co.SLO, th)
		}
		if err := capacity.Check(*co); err != nil {
			return usagef("--slo: %s", strings.TrimPrefix(err.Error(), "capacity: invalid options: "))
		}
		o.Capacity = co
	}
	if *oneLink != "" {
		*links = append(*links, *oneLink)
	}
	if len(*links) > 0 {
		if o.Links, err = study.ParseLinks(*links); err != nil {
			return usagef("--links: %s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), study.ErrDefinition.Error()+": "), "links: "))
		}
		if def.Measure != nil || def.Name == study.BulkUpsertName {
			return usagef("--links: study %s measures no client across a network", def.Name)
		}
	}
	o.LinkNoCalibrate, o.LinkNoCheck = !*linkCalibrate, !*linkCheck
	o.Agent = func() *exec.Cmd {
		exe, err := linkExe()
		if err != nil {
			exe = os.Args[0]
		}
		return exec.Command(exe, append([]string{"study"}, args...)...)
	}
	o.ServeArgs = strings.Fields(*serveArgs)
	if *bin != "" {
		o.Binary = *bin
	}
	o.Progress = func(line string) { fmt.Fprintln(env.stderr, line) }
	if os.Getenv(study.AgentEnv) != "" { // the far side of a link: this study's clients (study/links.go)
		return study.ServeAgent(ctx, def, o, os.NewFile(3, "study-agent-requests"), os.NewFile(4, "study-agent-replies"))
	}
	if err := study.LinksNeedPrivileges(def, o); err != nil {
		return exitError{2, fmt.Errorf("--links: %s: run as root (sudo), or in a container with CAP_NET_ADMIN and CAP_SYS_ADMIN and /dev/net/tun", linkMessage(err))}
	}
	if def.Name == study.BulkUpsertName {
		var fl []string
		if *bulkFormats != "" {
			fl = strings.Split(*bulkFormats, ",")
		}
		return runBulkStudy(ctx, env, o, *out, *records, fl)
	}

	if err := o.Ports.Fits(def); err != nil { // before the results directory is made
		return usageError{Err: err}
	}
	dir, err := results.NewRunDir(*out, def.Name) // exclusive: two runs in one second never share a dir
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "study %s: %s -> %s\n", def.Name, cellsLine(len(def.Cells)), dir)
	res, runErr := study.Run(ctx, def, o)
	sig, cut := interruption(ctx)
	if res == nil {
		if cut {
			return exitError{sig.ExitCode(), fmt.Errorf("%v before the first trial: no results", sig)}
		}
		return runErr
	}
	if err := report.WriteAll(dir, res); err != nil {
		return err
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	_, _ = env.stdout.Write(md)
	fmt.Fprintf(env.stderr, "\nwrote %s/{results.json,report.md,report.csv,report.html}\n", dir)
	if cut && res.Stop != nil {
		return exitError{sig.ExitCode(), fmt.Errorf("%v after %d of %d trials: a partial study in %s", sig, res.Stop.TrialsRun, res.Stop.TrialsPlanned, dir)}
	}
	if runErr != nil {
		return runErr
	}
	if bad := study.Unsuccessful(res); len(bad) > 0 {
		return fmt.Errorf("%d of %d cells had no successful trial:\n  %s", len(bad), len(res.Cells), strings.Join(bad, "\n  "))
	}
	return nil
}

// runStudyInit writes the commented example study file, never over an
// existing file.
func runStudyInit(env *cliEnv, args []string) error {
	fs := newFlagSet(env, "study init", "[FILE.yaml]   (default study.yaml; an existing file is never overwritten)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("study init: want at most one file name")
	}
	path := "study.yaml"
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return fmt.Errorf("%s exists; not overwriting it (choose another name)", path)
		}
		return err
	}
	if _, err := f.Write(study.Example()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "wrote %s; edit it, then: wirebench study run %s\n", path, path)
	return nil
}

// parseQuota reads --server-cpu-quota: auto (0), off (-1) or CPUs.
func parseQuota(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return 0, nil
	case "off", "none", "0":
		return -1, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0 && v <= 1024) {
		return 0, fmt.Errorf("%q: want CPUs such as 0.5, auto or off", s)
	}
	return v, nil
}
