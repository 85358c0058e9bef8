package testkit

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// Metric reads one unlabelled counter of a server's /metrics (Prometheus
// text) at httpAddr; the test fails when it is missing. Tests compare a
// client's counts with the server's own through it.
func Metric(t testing.TB, httpAddr, name string) int64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no %s:\n%s", name, b)
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}
