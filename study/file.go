package study

import (
	"context"
	_ "embed" // the example study file
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/internal/lazy"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

// Limits of a study file.
const (
	MaxFileSize     = 1 << 20   // bytes of YAML
	MaxCells        = 100       // cells in one study
	MaxTrials       = 100       // trials per cell
	MaxBodyFileSize = 64 << 20  // load.body_file
	MaxPhase        = time.Hour // warmup, duration, and the timeouts of a study file
)

// ErrStudyFile marks a study file that cannot be used; the message names
// the file, the line and the field.
var ErrStudyFile = errors.New("bad study file")

var nameRE = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// parser holds one file's state: its name for messages and its directory
// for relative paths.
type parser struct {
	file     string
	dir      string
	readFile func(string) ([]byte, error)
	errs     []posError
}

func (p *parser) errorf(line int, format string, a ...any) {
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, posError{line: line, msg: fmt.Sprintf(format, a...)})
	}
}

func (p *parser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	msgs := make([]string, len(p.errs))
	for i, e := range p.errs {
		msgs[i] = fmt.Sprintf("%s:%d: %s", p.file, e.line, e.msg)
	}
	return fmt.Errorf("%w:\n%s", ErrStudyFile, strings.Join(msgs, "\n"))
}

// Parse reads a study file. file names it in messages, gives the default
// study name, and its directory is where relative paths (dir, body_file,
// ./commands) resolve; readFile reads body_file (os.ReadFile, or a stub).
func Parse(file string, data []byte, readFile func(string) ([]byte, error)) (Definition, error) {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return Definition{}, fmt.Errorf("%w: %s: %v", ErrStudyFile, file, err)
	}
	p := &parser{file: file, dir: dir, readFile: readFile}
	if len(data) > MaxFileSize {
		p.errorf(1, "file is %d bytes, more than the limit of %d", len(data), MaxFileSize)
		return Definition{}, p.err()
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Definition{}, fmt.Errorf("%w: %s: %v", ErrStudyFile, file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		p.errorf(1, "the file is empty (wirebench study init writes an example)")
		return Definition{}, p.err()
	}
	doc := root.Content[0]
	w := &walker{}
	w.walk(doc, reflect.TypeFor[fileSpec](), "")
	if p.errs = w.errs; len(p.errs) > 0 {
		return Definition{}, p.err()
	}
	var spec fileSpec
	if err := doc.Decode(&spec); err != nil { // the walker let through only what decodes
		return Definition{}, fmt.Errorf("%w: %s: %v", ErrStudyFile, file, err)
	}
	def := p.definition(doc, &spec)
	if ds := spec.Data; ds != nil && len(p.errs) == 0 {
		rel := func(f string) string {
			if f == "" {
				return ""
			}
			return p.path(f)
		}
		if ds.File == "" {
			p.errorf(lineOf(doc, "data"), "data.file: missing (a JSON file of records)")
		} else if d, err := WithData(context.Background(), def, Data{File: rel(ds.File), Key: ds.Key, Proto: rel(ds.Proto),
			Protoset: rel(ds.Protoset), Message: ds.Message, Formats: ds.Formats}); err != nil {
			p.errorf(lineOf(doc, "data"), "data: %v", err)
		} else {
			def = d
		}
	}
	return def, p.err()
}

// definition turns the checked spec into a Definition, merging the
// top-level server, load and check into each cell field by field.
func (p *parser) definition(doc *yaml.Node, spec *fileSpec) Definition {
	def := Definition{Name: spec.Name, Title: spec.Title, Description: spec.Description, Question: spec.Question, Source: p.file,
		Trials: spec.Trials, Warmup: spec.Warmup, Duration: spec.Duration, Seed: spec.Seed}
	if def.Name == "" {
		def.Name = strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))
	}
	if !nameRE().MatchString(def.Name) {
		p.errorf(lineOf(doc, "name"), "name %q: want letters, digits, '.', '_' or '-' (it names the results directory), at most 64", def.Name)
	}
	if def.Title == "" {
		def.Title = def.Name
	}
	if _, set := keyNode(doc, "warmup"); set && spec.Warmup == 0 {
		def.Warmup = -1 // warm-up off, asked for
	}
	switch {
	case spec.Trials < 0 || spec.Trials > MaxTrials:
		p.errorf(lineOf(doc, "trials"), "trials: %d is outside 1..%d", spec.Trials, MaxTrials)
	case spec.Warmup < 0 || spec.Warmup > MaxPhase:
		p.errorf(lineOf(doc, "warmup"), "warmup: %v is outside 0s..%v", spec.Warmup, MaxPhase)
	case spec.Duration < 0 || spec.Duration > MaxPhase:
		p.errorf(lineOf(doc, "duration"), "duration: %v is outside 0s..%v", spec.Duration, MaxPhase)
	}
	if b := spec.Build; b != nil {
		if c, ok := p.command(b, valueNode(doc, "build"), "build"); ok {
			def.Builds = append(def.Builds, c)
		}
	}
	cellsNode := valueNode(doc, "cells")
	switch {
	case len(spec.Cells) == 0:
		p.errorf(lineOf(doc, "cells"), "cells: at least one cell is needed")
	case len(spec.Cells) > MaxCells:
		p.errorf(lineOf(doc, "cells"), "cells: %d, more than the limit of %d", len(spec.Cells), MaxCells)
		return def
	}
	names := map[string]int{}
	for i, cs := range spec.Cells {
		cn := cellsNode.Content[i]
		path := fmt.Sprintf("cells[%d]", i)
		if cs.Name == "" {
			p.errorf(cn.Line, "%s: name is missing", path)
			continue
		}
		path = fmt.Sprintf("cells[%d] (%s)", i, cs.Name)
		if j, dup := names[cs.Name]; dup {
			p.errorf(lineOf(cn, "name"), "%s: the name is already used by cells[%d]", path, j)
			continue
		}
		names[cs.Name] = i
		if strings.Contains(cs.Name, "/") {
			p.errorf(lineOf(cn, "name"), "%s: a cell name cannot contain '/'", path)
			continue
		}
		if c, ok := p.cell(doc, cn, &cs, path, def.Name); ok {
			def.Cells = append(def.Cells, c)
		}
	}
	if co, ok := p.capacity(doc, spec); ok && co != nil {
		for i := range def.Cells {
			def.Cells[i].Capacity = co
		}
	}
	if spec.Baseline != "" {
		if _, ok := names[spec.Baseline]; !ok {
			p.errorf(lineOf(doc, "baseline"), "baseline: no cell is named %q", spec.Baseline)
		}
		for i := range def.Cells {
			def.Cells[i].Baseline = def.Cells[i].Label == spec.Baseline
		}
		def.Cells = baselineFirst(def.Cells)
	}
	if err := checkLinks(spec.Links); err != nil {
		p.errorf(lineOf(doc, "links"), "%s", strings.TrimPrefix(err.Error(), ErrDefinition.Error()+": "))
	}
	def.Links = spec.Links
	def.Answer = p.answer(doc, spec.Answer, names)
	p.revDefaults(doc, spec, &def)
	return def
}

// baselineFirst moves each group's marked baseline to the place of the
// group's first cell: the report compares every cell with that one.
func baselineFirst(cells []Cell) []Cell {
	for i, c := range cells {
		if !c.Baseline {
			continue
		}
		first := slices.IndexFunc(cells, func(x Cell) bool { return x.Group == c.Group })
		if first < i {
			b := cells[i]
			copy(cells[first+1:i+1], cells[first:i])
			cells[first] = b
		}
	}
	return cells
}

// cell builds one cell: the top-level server, load and check merged with
// the cell's own, key by key.
func (p *parser) cell(doc, cn *yaml.Node, cs *cellSpec, path, study string) (Cell, bool) {
	c := Cell{Group: cmpOr(cs.Group, study), Label: cs.Name}
	before := len(p.errs)
	if cs.Rev != "" {
		p.rev(cn, cs, &c, path)
	}
	if cs.Build != nil {
		if b, ok := p.command(cs.Build, valueNode(cn, "build"), path+".build"); ok {
			c.Build = &b
		}
	}
	loadN := merge(valueNode(doc, "load"), valueNode(cn, "load"))
	if cs.URL != "" {
		if cs.Server != nil {
			p.errorf(lineOf(cn, "url"), "%s: url (a server already running) and server (one started per trial) exclude each other", path)
			return c, false
		}
		c.External = cs.URL
		loadN = merge(loadN, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "url", Line: lineOf(cn, "url")}, valueNode(cn, "url")}})
	} else {
		srvN := merge(valueNode(doc, "server"), valueNode(cn, "server"))
		var ss serverSpec
		if srvN != nil {
			_ = srvN.Decode(&ss) // both halves passed the walker
		}
		if len(ss.Command) == 0 {
			p.errorf(cn.Line, "%s: no server: give server.command (a process started per trial) or url (a server already running)", path)
			return c, false
		}
		c.Server = p.server(&ss, srvN, path+".server")
	}
	c.Load = p.load(loadN, path+".load", cn.Line)
	checkN := merge(valueNode(doc, "check"), valueNode(cn, "check"))
	if checkN != nil {
		var cs commandSpec
		_ = checkN.Decode(&cs)
		if cmd, ok := p.command(&cs, checkN, path+".check"); ok {
			c.Checks = append(c.Checks, CommandCheck(cmd))
		}
	}
	if len(p.errs) > before {
		return c, false
	}
	n, err := c.ports()
	switch {
	case err != nil:
		p.errorf(cn.Line, "%s: %v", path, err)
	case n > 0 && c.Server == nil:
		p.errorf(lineOf(cn, "url"), "%s: {port} is chosen per trial for a server the study starts; this cell's server is already running at %s", path, c.External)
	}
	return c, len(p.errs) == before
}

// loadLimits checks a load's numbers against the engine's limits
// (docs/limits.md), each error on its own line: concurrency 9223372036854775807
// panicked in makeslice at the first trial.
func (p *parser) loadLimits(ls *loadSpec, n *yaml.Node, path string, line func(string) int) {
	ints := []struct {
		key    string
		v, max int64
	}{
		{"concurrency", int64(ls.Concurrency), load.MaxConcurrency},
		{"requests", ls.Requests, load.MaxRequests},
		{"connections", int64(ls.Connections), load.MaxConnections},
	}
	for _, c := range ints {
		if c.v < 0 || c.v > c.max {
			p.errorf(line(c.key), "%s.%s: %d is outside 0..%d (0: the default)", path, c.key, c.v, c.max)
		}
	}
	if math.IsNaN(ls.Rate) || ls.Rate < 0 || ls.Rate > load.MaxRate {
		p.errorf(line("rate"), "%s.rate: %g is outside 0..%d requests/s", path, ls.Rate, load.MaxRate)
	}
	if ls.Timeout < 0 || ls.Timeout > load.MaxTimeout {
		p.errorf(line("timeout"), "%s.timeout: %v is outside 0s..%v", path, ls.Timeout, load.MaxTimeout)
	}
	hi, unit := float64(load.MaxConcurrency), "VUs"
	if ls.Open || ls.Rate > 0 {
		hi, unit = load.MaxRate, "requests/s"
	}
	var total time.Duration
	stages := valueNode(n, "stages")
	for i, st := range ls.Stages {
		l := line("stages")
		if stages != nil && i < len(stages.Content) {
			l = stages.Content[i].Line
		}
		if math.IsNaN(st.Target) || st.Target < 0 || st.Target > hi {
			p.errorf(l, "%s.stages[%d].target: %g is outside 0..%g %s", path, i, st.Target, hi, unit)
		}
		if st.Duration < 0 || st.Duration > MaxPhase {
			p.errorf(l, "%s.stages[%d].duration: %v is outside 0s..%v", path, i, st.Duration, MaxPhase)
		}
		total += max(st.Duration, 0)
	}
	if total > MaxPhase {
		p.errorf(line("stages"), "%s.stages: %v in all, more than %v", path, total, MaxPhase)
	}
}

// checkWait refuses a negative or over-long wait of a server or command.
func (p *parser) checkWait(n *yaml.Node, key, path string, d time.Duration) {
	if d < 0 || d > MaxPhase {
		p.errorf(lineOf(n, key), "%s.%s: %v is outside 0s..%v", path, key, d, MaxPhase)
	}
}

// maxCPUQuota bounds a server's cpu_quota (CPUs).
const maxCPUQuota = 1024

func (p *parser) server(ss *serverSpec, n *yaml.Node, path string) *Server {
	s := &Server{Command: ss.Command, Dir: p.path(ss.Dir), Env: envList(ss.Env), Ready: ss.Ready,
		ReadyTimeout: ss.ReadyTimeout, StopGrace: ss.StopGrace, CPUQuota: ss.CPUQuota}
	if q := ss.CPUQuota; q < 0 || q > maxCPUQuota || math.IsNaN(q) {
		p.errorf(lineOf(n, "cpu_quota"), "%s.cpu_quota: %g: want CPUs such as 0.5 (at most %d)", path, q, maxCPUQuota)
	}
	if ss.Command[0] == "" {
		p.errorf(lineOf(n, "command"), "%s.command: the program name is empty", path)
	}
	p.checkWait(n, "ready_timeout", path, ss.ReadyTimeout)
	p.checkWait(n, "stop_grace", path, ss.StopGrace)
	if r := ss.Ready; r != "" && !strings.HasPrefix(r, "http://") && !strings.HasPrefix(r, "tcp://") {
		p.errorf(lineOf(n, "ready"), "%s.ready: want http://host:port/path or tcp://host:port, got %q", path, r)
	}
	if ss.StopSignal != "" {
		sig, err := parseSignal(ss.StopSignal)
		if err != nil {
			p.errorf(lineOf(n, "stop_signal"), "%s.stop_signal: %v", path, err)
		}
		s.StopSignal = sig
	}
	return s
}

// command builds a build or check command.
func (p *parser) command(cs *commandSpec, n *yaml.Node, path string) (Command, bool) {
	if len(cs.Command) == 0 || cs.Command[0] == "" {
		line := 0
		if n != nil {
			line = n.Line
		}
		p.errorf(cmpOr(lineOf(n, "command"), line), "%s.command: missing (a list such as [\"go\", \"build\", \"-o\", \"srv\", \".\"])", path)
		return Command{}, false
	}
	p.checkWait(n, "timeout", path, cs.Timeout)
	return Command{Args: cs.Command, Dir: p.path(cs.Dir), Env: envList(cs.Env), Timeout: cs.Timeout}, true
}

// path resolves a relative directory against the study file's.
func (p *parser) path(dir string) string {
	if dir == "" {
		return p.dir
	}
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(p.dir, dir)
}

// connOptions are a load's connection settings (load/conn), its files
// resolved against the study file's directory.
func (p *parser) connOptions(ls *loadSpec) conn.Options {
	file := func(f string) string {
		if f == "" {
			return ""
		}
		return p.path(f)
	}
	return conn.Options{URL: ls.URL, Transport: ls.Transport, Connections: ls.Connections, NoKeepAlive: ls.NoKeepAlive, Timeout: ls.Timeout,
		Insecure: ls.Insecure, CAFile: file(ls.CAFile), CertFile: file(ls.CertFile), KeyFile: file(ls.KeyFile)}
}

// load builds a cell's load spec and checks it by building its scenario
// once with stand-in ports.
func (p *parser) load(n *yaml.Node, path string, cellLine int) LoadSpec {
	var ls loadSpec
	if n != nil {
		_ = n.Decode(&ls)
	}
	line := func(key string) int { return cmpOr(lineOf(n, key), cellLine) }
	if ls.URL == "" {
		p.errorf(line("url"), "%s.url: missing (e.g. http://127.0.0.1:{port}/)", path)
		return LoadSpec{}
	}
	o := load.Options{Options: results.Options{Concurrency: ls.Concurrency, Requests: ls.Requests, Rate: ls.Rate, Open: ls.Open, Timeout: ls.Timeout}}
	for _, st := range ls.Stages {
		o.Stages = append(o.Stages, results.Stage{Duration: st.Duration, Target: st.Target})
	}
	p.loadLimits(&ls, n, path, line)
	if (ls.CertFile == "") != (ls.KeyFile == "") {
		k := "cert_file" // the one given
		if ls.KeyFile != "" {
			k = "key_file"
		}
		p.errorf(line(k), "%s: cert_file and key_file go together (a client certificate and its key)", path)
	}
	if ls.Open && ls.Rate == 0 && len(ls.Stages) == 0 {
		p.errorf(line("open"), "%s.open: an open loop needs a rate or stages", path)
	}
	if ls.Arrivals != "" {
		a, err := results.ParseArrivals(ls.Arrivals)
		if err != nil {
			p.errorf(line("arrivals"), "%s.%v", path, err)
		}
		o.Arrivals = a
	}
	switch {
	case ls.ArrivalsSeed < 0:
		p.errorf(line("arrivals_seed"), "%s.arrivals_seed: %d is negative", path, ls.ArrivalsSeed)
	case ls.ArrivalsSeed != 0 && o.Arrivals == results.Uniform:
		p.errorf(line("arrivals_seed"), "%s.arrivals_seed: applies to arrivals: poisson", path)
	}
	o.Seed = uint64(max(ls.ArrivalsSeed, 0))
	l := LoadSpec{Options: o}
	if ls.GRPC != "" {
		if p.grpcLoad(&ls, &l, n, path, line); l.GRPC == nil { // loadgrpc.go
			return l // its error is reported
		}
	} else if ls.Flow != "" || ls.Replay != "" {
		if p.flowOrReplay(&ls, &l, n, path, line); l.Flow == nil && l.Replay == nil {
			return l // its error is reported
		}
	} else if strings.HasPrefix(ls.Scenario, "kv-") {
		for _, k := range []string{"method", "headers", "body", "body_file", "expect_status", "expect_body_contains", "format", "compression", "transport", "connections", "no_keepalive"} {
			if isSet(n, k) {
				p.errorf(line(k), "%s.%s: does not apply to the %s scenario", path, k, ls.Scenario)
			}
		}
		l.KV = p.kvLoad(&ls, path, line) // kv_dist.go
		if isSet(n, "key_maximum") && ls.KeyMaximum == 0 {
			// KeyMax 0 is "not given" to the scenario: key 0 alone is one key.
			switch {
			case ls.KeyMinimum > 0:
				p.errorf(line("key_maximum"), "%s.key_maximum: 0 is below key_minimum %d", path, ls.KeyMinimum)
			case ls.Keys != 0 && ls.Keys != 1:
				p.errorf(line("keys"), "%s.keys: %d, and key_minimum..key_maximum 0..0 is 1 key: give one", path, ls.Keys)
			}
			l.KV.Keys = 1
		}
	} else if ls.Scenario != "" {
		for _, k := range []string{"method", "headers", "body", "body_file", "expect_status", "expect_body_contains"} {
			if isSet(n, k) {
				p.errorf(line(k), "%s.%s: applies to raw requests; the %s scenario makes and checks its own", path, k, ls.Scenario)
			}
		}
		l.Scenario = &scenario.Options{
			Name:        ls.Scenario,
			Options:     p.connOptions(&ls),
			Format:      ls.Format,
			Compression: ls.Compression,
		}
	} else {
		for _, k := range []string{"format", "compression"} {
			if isSet(n, k) {
				p.errorf(line(k), "%s.%s: applies to a reference-API scenario (set scenario: crud, echo, get, list or create)", path, k)
			}
		}
		raw := &load.RawOptions{
			Options:            p.connOptions(&ls),
			Method:             ls.Method,
			Header:             headerList(ls.Headers),
			ExpectStatus:       ls.ExpectStatus,
			ExpectBodyContains: ls.ExpectBodyContains,
		}
		switch {
		case ls.Body != "" && ls.BodyFile != "":
			p.errorf(line("body_file"), "%s: body and body_file exclude each other", path)
		case ls.Body != "":
			raw.Body = []byte(ls.Body)
		case ls.BodyFile != "":
			b, err := p.readFile(p.path(ls.BodyFile))
			switch {
			case err != nil:
				p.errorf(line("body_file"), "%s.body_file: %v", path, err)
			case len(b) > MaxBodyFileSize:
				p.errorf(line("body_file"), "%s.body_file: %d bytes, more than the limit of %d", path, len(b), MaxBodyFileSize)
			}
			raw.Body = b
		}
		l.Raw = raw
	}
	if !strings.HasPrefix(ls.Scenario, "kv-") {
		for _, k := range kvLoadKeys {
			if isSet(n, k) && !(k == "protocol" && ls.GRPC != "") { // a grpc: method's protocol
				p.errorf(line(k), "%s.%s: applies to the key-value scenarios (scenario: kv-set, kv-get or kv-mixed)", path, k)
			}
		}
	}
	if _, err := portsUsed(templates(l)...); err != nil {
		p.errorf(n.Line, "%s: %v", path, err)
		return l
	}
	// Build it once with stand-in ports: a bad format, transport, status
	// or URL is reported here, with its line, not in every trial.
	// A grpc: method by reflection needs its server: checked at the run.
	stand := vars{ports: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, wirebench: "wirebench"}
	if g := l.GRPC; g != nil && len(g.Protos) == 0 && g.Protoset == "" {
		return l
	}
	if m, err := newClient(l, stand); err != nil {
		p.errorf(n.Line, "%s: %s", path, strings.TrimPrefix(err.Error(), load.ErrOptions.Error()+": "))
	} else {
		m.Close()
	}
	return l
}

func envList(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

func headerList(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+": "+m[k])
	}
	return out
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// ParseFile reads and parses the study file at path.
func ParseFile(path string) (Definition, error) {
	data, err := readLimited(path, MaxFileSize)
	if err != nil {
		return Definition{}, fmt.Errorf("%w: %v", ErrStudyFile, err)
	}
	return Parse(path, data, func(name string) ([]byte, error) { return readLimited(name, MaxBodyFileSize) })
}

// readLimited reads a file, refusing one over limit bytes without reading
// it all.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than the limit of %d bytes", path, limit)
	}
	return b, nil
}

//go:embed example.yaml
var exampleFile []byte

// Example is the commented study file `wirebench study init` writes.
func Example() []byte { return slices.Clone(exampleFile) }
