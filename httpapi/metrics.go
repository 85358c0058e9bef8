package httpapi

import (
	"strconv"
	"sync"

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
	// counters caches label lookups so a request costs one sync.Map load,
	// not a label hash and a strconv allocation.
	counters sync.Map // metricKey -> prometheus.Counter
}

type metricKey struct {
	route, format string
	status        int
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wirebench_http_requests_total",
		Help: "HTTP requests handled, by route, response format and status code.",
	}, []string{"route", "format", "status"})
	m.reg.MustRegister(m.requests,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC, collectors.MetricsMemory)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) count(route, format string, status int) {
	k := metricKey{route, format, status}
	c, ok := m.counters.Load(k)
	if !ok {
		c, _ = m.counters.LoadOrStore(k, m.requests.WithLabelValues(route, format, strconv.Itoa(status)))
	}
	c.(prometheus.Counter).Inc()
}
