// Package study runs experiments end to end: server variants × client
// scenarios × trials, each trial on a fresh server process with the
// deterministic dataset, interleaved in a shuffled order, with the server
// sampled from its own PID, and the results written for package report.
//
// A study is a Definition: a list of cells, each a server command (any
// server: {port} placeholders get free ports per trial), a load and checks.
// The built-in studies (builtin.go, with the reference server as a cell in
// reference.go) and users' study files (file.go) are Definitions alike, run
// by one runner (run.go).
package study

import (
	"cmp"
	"fmt"
	"os/exec"
	"sort"
	"time"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/results"
)

// Definition is a declarative experiment: built-in (Lookup) or read from a
// study file (ParseFile).
type Definition struct {
	Name        string
	Title       string
	Description string
	// Question is what the study asks, in one sentence; reports open with it.
	Question string
	// Answer says which metric (and, for a yes/no question, which cell)
	// answers the question; the report leads with that answer.
	Answer results.Answer
	// Source is the study file it came from, if any (recorded).
	Source string
	// Cells are the compared configurations, the baseline of each group
	// first.
	Cells []Cell
	// Builds run once, in order, before any trial; a failure stops the
	// study.
	Builds []Command
	// Measure, if set, runs instead of (or besides) the load trials for
	// studies that measure something static, such as payload sizes.
	Measure func(ctx Context) ([]results.Payload, error)
	// Trials, Warmup, Duration and Seed, when set, replace the defaults;
	// Options set explicitly win over them. A negative Warmup is none.
	Trials           int
	Warmup, Duration time.Duration
	Seed             int64
	// Order is how trials interleave: OrderShuffled (each round in a
	// seeded random order) or OrderABBA (the cells forward, then
	// backward: base, change, change, base, …). Default: ABBA when a cell
	// has a Rev, else shuffled.
	Order string
	// Warnings go into the results as they are (e.g. a study file's notes).
	Warnings []string
	// Notes, if set, writes the study's own Markdown sections from its
	// results once the trials are done (study kv: the seed's tables
	// beside this run's).
	Notes func(res *results.Study) []string
	// Links is the study's links axis: every cell runs on each of these
	// emulated networks (link specs or presets; "none" is loopback),
	// interleaved (links.go). Empty: loopback only.
	Links []string
	// QuickLinks, QuickWarmup and QuickDuration, when set, replace Links,
	// Warmup and Duration in a quick run (a study on slow links needs
	// runs of more round trips than quick's default).
	QuickLinks                 []string
	QuickWarmup, QuickDuration time.Duration
}

// Cell is one server variant under one client scenario.
type Cell struct {
	Group, Label string
	// Baseline marks the cell its group is compared with (the first cell
	// of the group when none is marked).
	Baseline bool
	// Server is started fresh for every trial. Nil means the server is
	// already running at External: it is not restarted between trials and
	// not sampled (no server CPU, no RSS), and the results say so.
	Server   *Server
	External string
	// Load is the client.
	Load LoadSpec
	// Checks run around every trial (dataset size, check commands).
	Checks []Check
	// Build runs once before any trial (after Definition.Builds).
	Build *Command
	// Rev is a git revision (main, HEAD~1, a tag or a hash): the cell's
	// build and server run in a temporary worktree of it, and its
	// directories under the study's repository map into that worktree.
	// Empty: the working tree as it is.
	Rev string
	// revLine is the study file's line of rev, for messages.
	revLine int
	// checkout is the rev's worktree while the study runs.
	checkout *checkout
	// Capacity, if set, makes each trial a capacity search (measure:
	// capacity): the highest open-loop rate that meets its SLO, Load's
	// scenario at every step, instead of one run of Load's options.
	Capacity *capacity.Options
	// ServeArgs, for cells of the reference server, are the flags that
	// distinguish it (recorded in the results; they are already in
	// Server.Command).
	ServeArgs []string
	// Link is the link of the links axis the cell's client runs across
	// ("" when the study has none): set by Run, one copy of the cell per
	// link.
	Link string
}

// ID is the cell's unique name in the results.
func (c Cell) ID() string {
	id := c.Label
	if c.Group != "" {
		id = c.Group + "/" + c.Label
	}
	if c.Link != "" {
		id += "@" + c.Link
	}
	return id
}

// ports is how many {port}s the cell's templates use.
func (c Cell) ports() (int, error) {
	var ts []string
	if c.Server != nil {
		ts = append(append(append(ts, c.Server.Command...), c.Server.Env...), c.Server.Ready)
	}
	ts = append(ts, templates(c.Load)...)
	for _, ch := range c.Checks {
		ts = append(ts, ch.templates...)
	}
	return portsUsed(ts...)
}

// Context is what a Measure function gets.
type Context struct {
	Options Options
	Log     func(format string, args ...any)
}

// Options configure a run; the zero value is the publishable default.
type Options struct {
	// Quick runs fewer, shorter trials (about a minute per study); the
	// report says so.
	Quick bool
	// Trials per cell (default 6; 2 when Quick).
	Trials int
	// Warmup and Duration of each trial's load (defaults 3 s and 10 s;
	// 0.5 s and 1.5 s when Quick).
	Warmup, Duration time.Duration
	// Seed shuffles the trial order; 0 picks one from the clock (recorded).
	Seed int64
	// Binary is the wirebench executable, {wirebench} in commands (default:
	// this one).
	Binary string
	// ClientCPUs and ServerCPUs pin the two processes; by default, with two
	// or more CPUs, the client gets CPU 0 and the server the rest.
	ClientCPUs, ServerCPUs []int
	// NoPin turns pinning off.
	NoPin bool
	// ServeArgs are appended to every cell's server command (e.g. --delay
	// 200us for a deliberately slowed reference server).
	ServeArgs []string
	// Ports, if set, keeps the servers' ports ({port}, {port2}, ...) in
	// this range (--ports LO-HI); by default the kernel picks free ones.
	Ports PortRange
	// Capacity, if set, makes every cell that measures throughput (but an
	// in-browser one) measure capacity instead: wirebench study --slo.
	Capacity *capacity.Options
	// ServerCPUQuota caps every server the study starts at this many CPUs
	// (> 0); < 0: no quota. 0 chooses: a study measuring capacity
	// calibrates the client's and the servers' CPU per request and gives
	// the servers the largest quota the client can outrun (none if it
	// outruns them as they are). A server's own CPUQuota wins.
	ServerCPUQuota float64
	// quota is the study's choice (chooseQuota), for its trials.
	quota *results.CPUQuota
	// lowered are the quotas of cells whose search ended on the client's
	// limit under the study's (lowerTrialQuota), by cell ID; nil when the
	// study may not lower them (a quota given, or none possible).
	lowered map[string]*results.CPUQuota
	// Progress receives one line per trial; nil discards.
	Progress func(string)
	// Links, if set, replace the study's links axis (--links).
	Links []string
	// LinkNoCalibrate skips measuring each link before the trials;
	// LinkNoCheck runs on a link measured off its spec (recording it).
	LinkNoCalibrate, LinkNoCheck bool
	// Agent makes the command of the process that runs the study's
	// clients across a link: this same study again (wirebench's own
	// command line), which ServeAgent serves (links.go).
	Agent func() *exec.Cmd
}

func (o Options) withDefaults(def Definition) Options {
	if o.Quick {
		o.Warmup, o.Duration = cmp.Or(o.Warmup, def.QuickWarmup), cmp.Or(o.Duration, def.QuickDuration)
	}
	o.Trials = cmp.Or(o.Trials, def.Trials)
	o.Warmup = cmp.Or(o.Warmup, def.Warmup)
	o.Duration = cmp.Or(o.Duration, def.Duration)
	o.Seed = cmp.Or(o.Seed, def.Seed)
	if o.Trials == 0 {
		o.Trials = 6 // the fewest for a distribution-free 95% CI of the median
		if o.Quick {
			o.Trials = 2
		}
	}
	if o.Warmup == 0 {
		o.Warmup = 3 * time.Second
		if o.Quick {
			o.Warmup = 500 * time.Millisecond
		}
	}
	o.Warmup = max(o.Warmup, 0) // negative: no warm-up, asked for explicitly
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
		if o.Quick {
			o.Duration = 1500 * time.Millisecond
		}
	}
	if o.Seed == 0 {
		o.Seed = time.Now().UnixNano()
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o
}

var registry = map[string]func() Definition{}

// Register adds a built-in study.
func Register(name string, def func() Definition) {
	if _, dup := registry[name]; dup {
		panic("study: duplicate " + name)
	}
	registry[name] = def
}

// Lookup returns the built-in study with the given name.
func Lookup(name string) (Definition, error) {
	def, ok := registry[name]
	if !ok {
		return Definition{}, fmt.Errorf("study: no study %q (have %v)", name, Names())
	}
	return def(), nil
}

// Names lists the built-in studies.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
