package httpapi

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wirebench/wirebench/promtext"
)

// metrics are the server's request counters, by route, response format
// and status, written with the Go runtime's and the process's figures in
// the Prometheus text format (promtext: not client_golang, whose init
// alone keeps ~130 kB live that every GC cycle under load marks again,
// issue 17).
type metrics struct {
	mu  sync.Mutex // serializes additions to all
	all []*series
}

// series is one (route, format, status) counter.
type series struct {
	route, format string
	status        int
	n             atomic.Uint64
}

func newMetrics() *metrics { return &metrics{} }

// routeCounters are one route's request counters, each found with one
// atomic load and a scan of the few (format, status) pairs the route has
// answered: a copy-on-write list, where a map keyed by three labels would
// hash them on every request. The list is bounded by formats × statuses.
type routeCounters struct {
	list atomic.Pointer[[]*series]
	mu   sync.Mutex // serializes additions
}

func (rc *routeCounters) find(format string, status int) *series {
	if l := rc.list.Load(); l != nil {
		for _, c := range *l {
			if c.status == status && c.format == format {
				return c
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
		c = m.add(rc, route, format, status)
	}
	c.n.Add(1)
}

func (m *metrics) add(rc *routeCounters, route, format string, status int) *series {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if c := rc.find(format, status); c != nil {
		return c // added while this call waited
	}
	c := &series{route: route, format: format, status: status}
	var l []*series
	if old := rc.list.Load(); old != nil {
		l = append(l, *old...)
	}
	rc.list.Store(new(append(l, c)))
	m.mu.Lock()
	m.all = append(m.all, c)
	m.mu.Unlock()
	return c
}

const requestsName = "wirebench_http_requests_total"

// appendRequests writes the request counters, ordered as client_golang
// orders them (by label values, labels by name), none before the first
// request.
func (m *metrics) appendRequests(b []byte) []byte {
	m.mu.Lock()
	all := slices.Clone(m.all)
	m.mu.Unlock()
	if len(all) == 0 {
		return b
	}
	slices.SortFunc(all, func(x, y *series) int {
		return cmp.Or(cmp.Compare(x.format, y.format), cmp.Compare(x.route, y.route),
			cmp.Compare(strconv.Itoa(x.status), strconv.Itoa(y.status)))
	})
	b = promtext.AppendHeader(b, requestsName, "HTTP requests handled, by route, response format and status code.", promtext.Counter)
	for _, c := range all {
		b = promtext.AppendUint(b, requestsName, c.n.Load(), "format", c.format, "route", c.route, "status", strconv.Itoa(c.status))
	}
	return b
}
