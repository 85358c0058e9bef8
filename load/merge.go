package load

import (
	"fmt"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// Merge combines results of the segments of one test (or of any runs of
// the same scenario) into one: counts add, histograms merge exactly, the
// run spans the earliest start to the latest end, CPU times add up.
// Options and Env are the first result's, with the segment cleared.
func Merge(rs ...*Result) (*Result, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrResult)
	}
	first := rs[0]
	m := &Result{
		Schema: Schema, Scenario: first.Scenario, Options: first.Options, Config: first.Config, Env: first.Env,
		Start: first.Start, End: first.End,
		Latency: measure.NewHistogram(), Service: measure.NewHistogram(), Lag: measure.NewHistogram(),
		Status: map[string]int64{}, Failures: map[string]int64{},
	}
	m.Options.Segment = Segment{}
	var conc int
	var rate float64
	var windowEnd time.Time // the latest end of a segment's measured window
	for _, r := range rs {
		if r.Scenario != first.Scenario || len(r.Ops) != len(first.Ops) {
			return nil, fmt.Errorf("%w: cannot merge scenario %q (%d ops) with %q (%d ops)",
				ErrResult, r.Scenario, len(r.Ops), first.Scenario, len(first.Ops))
		}
		if r.Start.Before(m.Start) {
			m.Start = r.Start
		}
		if r.End.After(m.End) {
			m.End = r.End
		}
		if e := r.Start.Add(r.Measured()); e.After(windowEnd) {
			windowEnd = e
		}
		m.Requests += r.Requests
		m.Failed += r.Failed
		m.Interrupted += r.Interrupted
		m.Latency.Merge(r.Latency)
		m.Service.Merge(r.Service)
		m.Lag.Merge(r.Lag)
		for k, n := range r.Status {
			m.Status[k] += n
		}
		for k, n := range r.Failures {
			m.Failures[k] += n
		}
		m.Bytes.WireIn += r.Bytes.WireIn
		m.Bytes.WireOut += r.Bytes.WireOut
		m.Bytes.BodyIn += r.Bytes.BodyIn
		m.Bytes.BodyOut += r.Bytes.BodyOut
		m.CPU.User += r.CPU.User
		m.CPU.System += r.CPU.System
		m.CPU.CPUs += r.CPU.CPUs
		m.CPU.Allocs += r.CPU.Allocs
		m.CPU.AllocBytes += r.CPU.AllocBytes
		conc += r.Options.Concurrency
		rate += r.Options.Rate
		if len(r.Segments) > 0 {
			m.Segments = append(m.Segments, r.Segments...)
		} else {
			m.Segments = append(m.Segments, r.Options.Segment.String())
		}
	}
	m.Options.Concurrency, m.Options.Rate = conc, rate
	m.Test = first.Test
	if first.Test != nil && CheckSegments(anonymous(rs)) == nil {
		m.Options = *first.Test // the whole test's, exactly (not n shares added up)
	}
	// Rates of the merge are over the segments' measured windows, from the
	// first start to the last window's end: not diluted by graceful stops.
	m.Window = windowEnd.Sub(m.Start)
	m.Ops = make([]OpResult, len(first.Ops))
	for i, op := range first.Ops {
		m.Ops[i] = OpResult{Name: op.Name, Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
		for _, r := range rs {
			if r.Ops[i].Name != op.Name {
				return nil, fmt.Errorf("%w: op %d is %q in one result, %q in another", ErrResult, i, op.Name, r.Ops[i].Name)
			}
			m.Ops[i].Requests += r.Ops[i].Requests
			m.Ops[i].Failed += r.Ops[i].Failed
			m.Ops[i].Latency.Merge(r.Ops[i].Latency)
			m.Ops[i].Service.Merge(r.Ops[i].Service)
		}
	}
	m.Warnings = Diagnose(m)
	return m, nil
}

// anonymous names results by their place, for checks whose error text is
// not shown.
func anonymous(rs []*Result) []Part {
	ps := make([]Part, len(rs))
	for i, r := range rs {
		ps[i] = Part{Name: fmt.Sprintf("result %d", i+1), Result: r}
	}
	return ps
}
