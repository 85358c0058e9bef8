// Package study runs experiments end to end: server variants × client
// scenarios × trials, each trial on a fresh server process with the
// deterministic dataset, interleaved in a shuffled order, with the server
// sampled from its own PID, and the results written for package report.
//
// A study is a Definition: a list of cells. New studies (KV vs Redis, bulk
// upsert, streaming) are new Definitions, not new machinery.
package study

import (
	"fmt"
	"sort"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/report"
)

// Definition is a declarative experiment.
type Definition struct {
	Name        string
	Title       string
	Description string
	// Cells are the compared configurations, baseline of each group first.
	Cells []Cell
	// Measure, if set, runs instead of (or besides) the load trials for
	// studies that measure something static, such as payload sizes.
	Measure func(ctx Context) ([]report.Payload, error)
	// SeedUsers and SeedTodos size the dataset (default 100 each).
	SeedUsers, SeedTodos int
}

// Cell is one server variant under one client scenario.
type Cell struct {
	Group, Label string
	// Serve are extra flags for `wirebench serve` (e.g. --json-lib fast).
	Serve []string
	// Load is the load engine configuration; Duration and warm-up come
	// from the study Options.
	Load load.Options
	// Scenario builds the client scenario against a running server.
	Scenario func(httpAddr, grpcAddr string) (load.Scenario, error)
	// Describe is the client configuration recorded in the results.
	Describe map[string]any
}

// ID is the cell's unique name in the results.
func (c Cell) ID() string { return c.Group + "/" + c.Label }

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
	// Binary is the wirebench executable that serves (default: this one).
	Binary string
	// ClientCPUs and ServerCPUs pin the two processes; by default, with two
	// or more CPUs, the client gets CPU 0 and the server the rest.
	ClientCPUs, ServerCPUs []int
	// NoPin turns pinning off.
	NoPin bool
	// ServeArgs are appended to every cell's server flags (e.g. --delay
	// 200us for a deliberately slowed run).
	ServeArgs []string
	// Progress receives one line per trial; nil discards.
	Progress func(string)
}

func (o Options) withDefaults() Options {
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
