package httpapi

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics is the server's Prometheus registry: requests by route, format and
// status, plus the Go runtime's memory and GC statistics and the process
// collector. A private registry keeps tests and several servers in one
// process apart.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	// runtime registers the Go and process collectors on the first
	// scrape: the Go collector's descriptions of the runtime's metrics
	// are ~0.5 MB of live heap, which a server nobody scrapes would
	// carry, and collect more often for, on every request (issue 17).
	runtime sync.Once
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wirebench_http_requests_total",
		Help: "HTTP requests handled, by route, response format and status code.",
	}, []string{"route", "format", "status"})
	m.reg.MustRegister(m.requests)
	return m
}

// gatherer is the registry with the runtime's collectors registered.
func (m *metrics) gatherer() prometheus.Gatherer {
	m.runtime.Do(func() {
		m.reg.MustRegister(
			collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC, collectors.MetricsMemory)),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	})
	return m.reg
}

// routeCounters are one route's request counters, each resolved from the
// CounterVec once: a copy-on-write list read with one atomic load and a
// scan of the few (format, status) pairs the route has answered, where a
// label lookup hashes three labels and formats the status on every
// request. The list is bounded by formats × statuses.
type routeCounters struct {
	list atomic.Pointer[[]resolvedCounter]
	mu   sync.Mutex // serializes additions
}

type resolvedCounter struct {
	format string
	status int
	c      prometheus.Counter
}

func (rc *routeCounters) find(format string, status int) prometheus.Counter {
	if l := rc.list.Load(); l != nil {
		for i := range *l {
			if e := &(*l)[i]; e.status == status && e.format == format {
				return e.c
			}
		}
	}
	return nil
}

// count adds one request of route rc (labelled route) answered in format
// with status.
func (m *metrics) count(rc *routeCounters, route, format string, status int) {
	c := rc.find(format, status)
	if c == nil {
		c = rc.add(m.requests, route, format, status)
	}
	c.Inc()
}

func (rc *routeCounters) add(vec *prometheus.CounterVec, route, format string, status int) prometheus.Counter {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if c := rc.find(format, status); c != nil {
		return c // added while this call waited
	}
	c := vec.WithLabelValues(route, format, strconv.Itoa(status))
	var l []resolvedCounter
	if old := rc.list.Load(); old != nil {
		l = append(l, *old...)
	}
	l = append(l, resolvedCounter{format, status, c})
	rc.list.Store(&l)
	return c
}
