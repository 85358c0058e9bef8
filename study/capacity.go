package study

import (
	"context"
	"fmt"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/results"
)

// Quick capacity searches: shorter steps and warm-ups, a coarser
// precision, a tighter budget — about 9 steps of 1.3 s and a 2.3-s
// confirmation, 15-25 s a trial with retries, a minute at most (the
// --quick help says so: formats, 16 trials, about 6 minutes).
const (
	quickStepDuration = time.Second
	quickStepWarmup   = 300 * time.Millisecond
	quickPrecision    = 0.10
	quickMaxTime      = time.Minute
)

// capacity reads measure, slo and capacity: nil options for a study of
// throughput (the default), an error with its line for a bad SLO or a
// load that sets what the search decides.
func (p *parser) capacity(doc *yaml.Node, spec *fileSpec) (*capacity.Options, bool) {
	switch spec.Measure {
	case "", "throughput":
		for _, k := range []string{"slo", "capacity"} {
			if isSet(doc, k) {
				p.errorf(lineOf(doc, k), "%s: applies to measure: capacity", k)
				return nil, false
			}
		}
		return nil, true
	case "capacity":
	default:
		p.errorf(lineOf(doc, "measure"), "measure: %q: want throughput (the load as given) or capacity (the most load within slo)", spec.Measure)
		return nil, false
	}
	if len(spec.SLO) == 0 {
		p.errorf(lineOf(doc, "measure"), "measure: capacity needs slo, e.g. slo: [\"p99<20ms\", \"errors<0.1%%\"]")
		return nil, false
	}
	o := &capacity.Options{}
	for _, s := range spec.SLO {
		th, err := results.ParseThreshold(s)
		if err != nil {
			p.errorf(lineOf(doc, "slo"), "slo: %s", cliText(err))
			return nil, false
		}
		o.SLO = append(o.SLO, th)
	}
	if c := spec.Capacity; c != nil {
		o.MinRate, o.MaxRate, o.StartRate, o.Growth, o.Precision = c.MinRate, c.MaxRate, c.StartRate, c.Growth, c.Precision
		o.StepDuration, o.Warmup, o.ConfirmDuration, o.MaxTime = c.StepDuration, c.StepWarmup, c.ConfirmDuration, c.MaxTime
	}
	if err := capacity.Check(*o); err != nil {
		p.errorf(cmpOr(lineOf(doc, "capacity"), lineOf(doc, "slo")), "%s", cliText(err))
		return nil, false
	}
	if spec.Load != nil {
		o.Concurrency = spec.Load.Concurrency // the cap on requests in flight (0: capacity's default)
	}
	if l := spec.Load; l != nil && (l.Rate > 0 || l.Requests > 0 || len(l.Stages) > 0 || l.Open) {
		p.errorf(lineOf(doc, "load"), "load: rate, requests, stages and open are the search's to set under measure: capacity")
		return nil, false
	}
	if l := spec.Load; l != nil && l.Replay != "" {
		p.errorf(lineOf(doc, "load"), "load.replay: a recording is its own schedule: its capacity is searched in speed by wirebench capacity --replay, not in a study's measure: capacity")
		return nil, false
	}
	for i, c := range spec.Cells {
		if l := c.Load; l != nil && l.Replay != "" {
			p.errorf(lineOf(valueNode(doc, "cells").Content[i], "load"), "cells[%d] (%s).load.replay: a recording is its own schedule: its capacity is searched in speed by wirebench capacity --replay, not in a study's measure: capacity", i, c.Name)
			return nil, false
		}
		if l := c.Load; l != nil && (l.Rate > 0 || l.Requests > 0 || len(l.Stages) > 0 || l.Open) {
			p.errorf(lineOf(valueNode(doc, "cells").Content[i], "load"), "cells[%d] (%s).load: rate, requests, stages and open are the search's to set under measure: capacity", i, c.Name)
			return nil, false
		}
	}
	return o, true
}

// withCapacity gives co to every cell without a capacity search of its
// own (in-browser cells run one page: they keep their load), on a copy.
func withCapacity(cells []Cell, co *capacity.Options) []Cell {
	if co == nil {
		return cells
	}
	out := make([]Cell, len(cells))
	for i, c := range cells {
		if c.Capacity == nil && c.Load.Browser == nil {
			c.Capacity = co
		}
		out[i] = c
	}
	return out
}

// cliText is err without the library's prefixes.
func cliText(err error) string {
	m := err.Error()
	for _, p := range []string{"capacity: invalid options: ", "load: bad threshold: "} {
		if len(m) > len(p) && m[:len(p)] == p {
			return m[len(p):]
		}
	}
	return m
}

// searchCapacity is a capacity trial's measurement: the search, with a
// fresh scenario, the server's CPU sampled over each step's window. The
// trial's load is the answer's run (the confirmation); its server CPU is
// that run's, so per-request figures describe the server at capacity.
func searchCapacity(ctx context.Context, cell Cell, opts Options, v vars, t *results.Trial) error {
	m, err := newClient(cell.Load, v)
	if err != nil {
		return err
	}
	defer m.Close()
	sc := m.Scenario
	co := *cell.Capacity
	if opts.Quick {
		co.StepDuration = min(cmpOr(co.StepDuration, capacity.DefaultStepDuration), quickStepDuration)
		co.Warmup = min(cmpOr(co.Warmup, capacity.DefaultWarmup), quickStepWarmup)
		co.MaxTime = min(cmpOr(co.MaxTime, capacity.DefaultMaxTime), quickMaxTime)
		co.Precision = max(cmpOr(co.Precision, capacity.DefaultPrecision), quickPrecision)
	}
	co.ServerCores = float64(len(t.ServerCPUs))
	if q := t.ServerQuota; q != nil {
		co.ServerCores = q.Cores
	}
	base := cell.Load.Options                       // timeout and arrivals; the search sets rate and workers
	co.Arrivals, co.Seed = base.Arrivals, base.Seed // empty: Poisson, the search's default
	res, err := capacity.Search(ctx, co, capacity.EngineStep(base, sc, co.Warmup, t.ServerPID))
	if err != nil {
		return err
	}
	res.Scenario, res.Config.Scenario, res.ServerQuota = sc.Name(), sc.Name(), t.ServerQuota // the cell's client is in the study's cell
	t.Capacity, t.Load = res, res.TrialLoad()
	if t.Load == nil {
		return fmt.Errorf("capacity: no step ran (%s)", results.CapacityLine(res))
	}
	return nil
}

// answerServerCPU is the server's CPU over the answer's run, which the
// trial reports (the sampler saw the whole search).
func answerServerCPU(c *results.Capacity) time.Duration {
	if a := c.Answer(); a != nil {
		return a.ServerCPUPerRequest * time.Duration(a.Requests)
	}
	return 0
}
