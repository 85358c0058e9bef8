package study

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Flags are wirebench study's flags: registered on a pflag.FlagSet and
// read (Apply) into Options and into the study's definition (its data,
// twins and cells), with the CLI's messages; their errors for flags that
// cannot be used are flags.UsageError.
type Flags struct {
	Options Options
	// Out is the directory runs are written under; Records and Formats
	// are bulk-upsert's (BulkFormats).
	Out, Formats string
	Records      int

	clientCPUs, serverCPUs, bin, serveArgs, ports string
	data                                          Data
	keyDists, slo, links                          []string
	kvPipelines, cells, oneLink, quota            string
	h3, linkCalibrate, linkCheck                  bool
}

// Register adds study's flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	o := &f.Options
	fs.BoolVar(&o.Quick, "quick", false, "fewer, shorter trials (about a minute; networks "+NetworksQuickTime+" on 3 links; with --slo each trial is a search of 15-25 s, a minute at most, 10% precision: formats about 6 min, 18 at most); the report says so (a study file's own values win)")
	fs.IntVar(&o.Trials, "trials", 0, "trials per cell (default 6, the fewest for a 95% CI of the median; 2 with --quick)")
	fs.DurationVar(&o.Warmup, "warmup", 0, "warm-up before each measured run (default 3s, 500ms with --quick)")
	fs.DurationVar(&o.Duration, "duration", 0, "measured run per trial (default 10s, 1.5s with --quick)")
	fs.Int64Var(&o.Seed, "seed", 0, "seed of the shuffled trial order (default: from the clock; recorded)")
	fs.BoolVar(&o.NoPin, "no-pin", false, "do not pin client and server to separate CPUs")
	fs.StringVar(&f.clientCPUs, "client-cpus", "", "pin the client (this process) to these `CPUs` (default: the first CPU)")
	fs.StringVar(&f.serverCPUs, "server-cpus", "", "pin each server process to these `CPUs` (default: the other CPUs)")
	fs.StringVar(&f.Out, "out", "wirebench-out", "`directory` under which <study>-<timestamp>/ is written (kept apart from the sources: results/ is a Go package)")
	fs.StringVar(&f.bin, "bin", "", "wirebench `binary`, {wirebench} in server commands (default: this executable)")
	fs.StringVar(&f.serveArgs, "serve-args", "", "extra `args` appended to every server command, space-separated (e.g. '--delay 200us')")
	fs.StringVar(&f.ports, "ports", "", "bind the servers' ports ({port}, {port2}, ...) only in this range, `LO-HI` (e.g. 9000-9099); default: free ports the kernel picks")
	fs.IntVar(&f.Records, "records", 0, "bulk-upsert: records per upload (default 1000000; 100000 with --quick)")
	fs.StringVar(&f.Formats, "formats", "", "bulk-upsert: comma-separated `formats` (default: json,ndjson,toon,protobuf,csv); with --data: the formats studied (default: all the data can be served in)")
	fs.StringVar(&f.data.File, "data", "", "formats, payload-size, or a study file's reference-server cells: serve the records of this JSON `file` at /records instead of the built-in users, every reply checked against it (docs/payload.md)")
	fs.StringVar(&f.data.Key, "data-key", "", "--data: the `member` keying each record (default: id, else the first member unique in every record)")
	fs.StringVar(&f.data.Proto, "proto", "", "--data: the records' protobuf schema, a .proto `file` (the protobuf cell needs one)")
	fs.StringVar(&f.data.Protoset, "protoset", "", "--data: the records' protobuf schema as a FileDescriptorSet `file`")
	fs.StringVar(&f.data.Message, "message", "", "--data: the records' message by full name (pkg.Msg); default: the file's only message")
	fs.StringArrayVar(&f.keyDists, "key-dist", nil, "add, beside each KV group (study kv, or a study file's kv-* cells), its twin with keys drawn from this `distribution`: zipf:0.99, zipf, gaussian[:MEDIAN,STDDEV], sequential (repeatable)")
	fs.StringVar(&f.kvPipelines, "kv-pipeline", "1,16", "--key-dist: the skewed twins' pipeline `depths`, comma-separated: 1 is each cell's own; a deeper one adds the RESP cells' twins pipelined that deep (Redis's and ours)")
	fs.StringVar(&f.cells, "cells", "", "run only the cells whose \"group / label\" matches this `regexp` (after --key-dist and --h3 added theirs), e.g. '(everysec|always), zipf.* / (Redis|wirebench RESP)$'")
	fs.BoolVar(&f.h3, "h3", false, "add, beside each REST cell of a built-in study (formats, grpc-vs-rest, json-libs), its twin over HTTP/3 on TLS (docs/http3.md)")
	fs.StringArrayVar(&f.slo, "slo", nil, "measure capacity at this SLO `criterion` (repeatable: p99<20ms, errors<0.1%) instead of throughput: each trial searches the highest open-loop rate that meets it (docs/capacity.md)")
	fs.StringArrayVar(&f.links, "links", nil, "run every cell across each of these emulated networks, interleaved, and answer per link (in p50 latency): presets or link `SPECs`, none for loopback: none,3g,4g or 'none;rtt=50ms,loss=1%' (repeatable; needs root; docs/network.md)")
	fs.StringVar(&f.oneLink, "link", "", "run every cell across this one emulated network `SPEC` (as --links with one link)")
	fs.BoolVar(&f.linkCalibrate, "link-calibrate", true, "--links: measure each link (round trips, rate each way, loss) before the trials and record it beside its spec")
	fs.BoolVar(&f.linkCheck, "link-check", true, "--links: fail when a link measured is off its spec beyond the tolerances")
	fs.StringVar(&f.quota, "server-cpu-quota", "auto", "cap each server the study starts at this many `CPUs` (0.5), off, or auto: a study measuring capacity calibrates and gives the servers the largest quota the client can outrun (docs/capacity.md)")
}

// Check reads the flags that need no study yet into Options: their
// ranges, the quota.
func (f *Flags) Check() error {
	q, err := capacity.ParseQuota(f.quota)
	if err != nil {
		return flags.Usagef("--server-cpu-quota: %v", err)
	}
	f.Options.ServerCPUQuota = q
	o := f.Options
	return flags.First(
		flags.CheckInt("--trials", int64(o.Trials), 0, MaxTrials, ""),
		flags.CheckDuration("--warmup", o.Warmup, 0, MaxPhase),
		flags.CheckDuration("--duration", o.Duration, 0, MaxPhase),
	)
}

// BulkFormats are --formats as a list (none: bulk-upsert's own).
func (f *Flags) BulkFormats() []string {
	if f.Formats == "" {
		return nil
	}
	return strings.Split(f.Formats, ",")
}

// usage marks a study package error as a usage error.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return flags.UsageError{Err: err}
}

// Apply reads the flags given on fs into Options and def: the user's
// data, the HTTP/3 and key-distribution twins, the cells kept, the CPUs,
// ports, SLO and links. It returns the study to run.
func (f *Flags) Apply(ctx context.Context, fs *pflag.FlagSet, def Definition) (Definition, error) {
	o := &f.Options
	var err error
	if d := f.data; d.File != "" {
		if def.Name == BulkUpsertName {
			return def, flags.Usagef("--data: bulk-upsert has its own records (--records)")
		}
		if d.Proto != "" && d.Protoset != "" {
			return def, flags.Usagef("--proto and --protoset: give one schema")
		}
		d.Formats = f.BulkFormats()
		if def, err = WithData(ctx, def, d); err != nil {
			return def, usage(err)
		}
	} else if d.Key != "" || d.Proto != "" || d.Protoset != "" || d.Message != "" {
		return def, flags.Usagef("--data-key, --proto, --protoset and --message need --data FILE")
	}
	if f.h3 {
		if def, err = WithH3(def); err != nil {
			return def, usage(err)
		}
	}
	if def, err = f.applyKeyDists(fs, def); err != nil {
		return def, err
	}
	if f.cells != "" {
		re, err := regexp.Compile(f.cells)
		if err != nil {
			return def, flags.Usagef("--cells: %v", err)
		}
		if def, err = SelectCells(def, re); err != nil {
			return def, usage(err)
		}
	}
	for _, c := range []struct {
		name, v string
		dst     *[]int
	}{{"client-cpus", f.clientCPUs, &o.ClientCPUs}, {"server-cpus", f.serverCPUs, &o.ServerCPUs}} {
		if c.v == "" {
			continue
		}
		if *c.dst, err = measure.ParseCPUList(c.v); err != nil {
			return def, flags.Usagef("-%s %s", c.name, strings.TrimPrefix(err.Error(), measure.ErrCPUList.Error()+": "))
		}
	}
	if f.ports != "" {
		if o.Ports, err = ParsePortRange(f.ports); err != nil {
			return def, flags.Usagef("--ports: %s", strings.TrimPrefix(err.Error(), ErrPorts.Error()+": "))
		}
	}
	if len(f.slo) > 0 {
		co := &capacity.Options{}
		for _, s := range f.slo {
			th, err := results.ParseThreshold(s)
			if err != nil {
				return def, flags.Usagef("--slo: %s", flags.Message(err))
			}
			co.SLO = append(co.SLO, th)
		}
		if err := capacity.Check(*co); err != nil {
			return def, flags.Usagef("--slo: %s", strings.TrimPrefix(err.Error(), capacity.ErrOptions.Error()+": "))
		}
		o.Capacity = co
	}
	links := f.links
	if f.oneLink != "" {
		links = append(links, f.oneLink)
	}
	if len(links) > 0 {
		if o.Links, err = ParseLinks(links); err != nil {
			return def, flags.Usagef("--links: %s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), ErrDefinition.Error()+": "), "links: "))
		}
		if def.Measure != nil || def.Name == BulkUpsertName {
			return def, flags.Usagef("--links: study %s measures no client across a network", def.Name)
		}
	}
	o.LinkNoCalibrate, o.LinkNoCheck = !f.linkCalibrate, !f.linkCheck
	o.ServeArgs = strings.Fields(f.serveArgs)
	if f.bin != "" {
		o.Binary = f.bin
	}
	return def, nil
}

// applyKeyDists adds --key-dist's twins, pipelined as --kv-pipeline says.
func (f *Flags) applyKeyDists(fs *pflag.FlagSet, def Definition) (Definition, error) {
	if len(f.keyDists) == 0 {
		if fs.Changed("kv-pipeline") {
			return def, flags.Usagef("--kv-pipeline: the depths of --key-dist's twins: give --key-dist too")
		}
		return def, nil
	}
	var specs []keydist.Spec
	for _, s := range f.keyDists {
		sp, err := keydist.Parse(s)
		if err != nil {
			return def, flags.Usagef("--key-dist: %s", strings.TrimPrefix(err.Error(), keydist.ErrSpec.Error()+": "))
		}
		specs = append(specs, sp)
	}
	var depths []int
	for _, p := range strings.Split(f.kvPipelines, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return def, flags.Usagef("--kv-pipeline %q: want depths such as 1,16", f.kvPipelines)
		}
		depths = append(depths, n)
	}
	def, err := WithKeyDists(def, specs, depths...)
	return def, usage(err)
}
