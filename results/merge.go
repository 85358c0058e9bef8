package results

import (
	"fmt"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// Merge combines results of the segments of one test (or of any runs of
// the same scenario) into one: counts add, histograms merge exactly, the
// run spans the earliest start to the latest end, CPU times add up.
// Options and Env are the first result's, with the segment cleared.
// Results run across different links (or some on loopback) are refused;
// those across one keep it, with each one's calibration (mergeLink).
func Merge(rs ...*Load) (*Load, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrLoad)
	}
	if err := checkLinks(anonymous(rs)); err != nil {
		return nil, err
	}
	first := rs[0]
	m := &Load{
		Schema: LoadSchema, Scenario: first.Scenario, Options: first.Options, Config: first.Config, Env: first.Env,
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
				ErrLoad, r.Scenario, len(r.Ops), first.Scenario, len(first.Ops))
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
		if r.ClientLag != nil {
			if m.ClientLag == nil {
				m.ClientLag = measure.NewHistogram()
			}
			m.ClientLag.Merge(r.ClientLag)
		}
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
	m.Exemplars = mergeLoadExemplars(rs)
	m.Test = first.Test
	if first.Test != nil && CheckSegments(anonymous(rs)) == nil {
		m.Options = *first.Test // the whole test's, exactly (not n shares added up)
	}
	// Rates of the merge are over the segments' measured windows, from the
	// first start to the last window's end: not diluted by graceful stops.
	m.Window = windowEnd.Sub(m.Start)
	m.Ops = make([]Op, len(first.Ops))
	for i, op := range first.Ops {
		m.Ops[i] = Op{Name: op.Name, Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
		for _, r := range rs {
			if r.Ops[i].Name != op.Name {
				return nil, fmt.Errorf("%w: op %d is %q in one result, %q in another", ErrLoad, i, op.Name, r.Ops[i].Name)
			}
			m.Ops[i].Requests += r.Ops[i].Requests
			m.Ops[i].Failed += r.Ops[i].Failed
			m.Ops[i].Latency.Merge(r.Ops[i].Latency)
			m.Ops[i].Service.Merge(r.Ops[i].Service)
		}
	}
	stream, err := mergeStream(rs)
	if err != nil {
		return nil, err
	}
	m.Stream = stream
	if m.Iterations, err = mergeIterations(rs); err != nil {
		return nil, err
	}
	m.Layers = mergeLayers(rs)
	m.KV = mergeKV(rs)
	m.Causes = FailureCauses(m.Failures)
	var linkWarns []string
	m.Link, linkWarns = mergeLink(rs)
	m.Warnings = append(Diagnose(m), linkWarns...)
	return m, nil
}

// mergeStream sums the stream sections of a stream run's segments: every
// segment has one, of the same kind, or none has (a section missing from
// some would be dropped from the sums unseen).
func mergeStream(rs []*Load) (*Stream, error) {
	first := rs[0].Stream
	for i, r := range rs {
		s := r.Stream
		if (s == nil) != (first == nil) {
			return nil, fmt.Errorf("%w: of results 1 and %d, one has a stream section and the other none", ErrLoad, i+1)
		}
		if s != nil && (s.Kind != first.Kind || s.InBrowser != first.InBrowser) {
			return nil, fmt.Errorf("%w: cannot merge stream kind %q (in browser %v) with %q (in browser %v)", ErrLoad, s.Kind, s.InBrowser, first.Kind, first.InBrowser)
		}
	}
	if first == nil {
		return nil, nil
	}
	m := &Stream{Kind: first.Kind, InBrowser: first.InBrowser,
		First: measure.NewHistogram(), Last: measure.NewHistogram(), PerMessage: measure.NewHistogram()}
	for _, r := range rs {
		s := r.Stream
		m.Exchanges += s.Exchanges
		m.Items += s.Items
		for _, h := range []struct{ to, from *measure.Histogram }{{m.First, s.First}, {m.Last, s.Last}, {m.PerMessage, s.PerMessage}} {
			if h.from != nil {
				h.to.Merge(h.from)
			}
		}
		m.In, m.Out = m.In.Add(s.In), m.Out.Add(s.Out)
	}
	return m, nil
}

// mergeLayers sums the segments' splits, if every segment has one (a
// split of some segments only would not add up to the merged wire bytes).
func mergeLayers(rs []*Load) *Split {
	var m Split
	for _, r := range rs {
		if r.Layers == nil {
			return nil
		}
		m.In, m.Out = m.In.Add(r.Layers.In), m.Out.Add(r.Layers.Out)
	}
	return &m
}

// anonymous names results by their place, for checks whose error text is
// not shown.
func anonymous(rs []*Load) []Part {
	ps := make([]Part, len(rs))
	for i, r := range rs {
		ps[i] = Part{Name: fmt.Sprintf("result %d", i+1), Result: r}
	}
	return ps
}
