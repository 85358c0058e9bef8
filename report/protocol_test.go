package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestCompareNamesProtocol: two single runs that differ only in their
// transport are told apart by it — each side's line names its protocol,
// the difference is warned about, and a run's own report says it too.
func TestCompareNamesProtocol(t *testing.T) {
	t.Parallel()
	run := func(transport string) *results.Load {
		l := capLoad(100, time.Millisecond)
		l.Scenario, l.Options.Rate, l.Options.Open, l.Options.Concurrency = "raw", 0, false, 50
		l.Config = results.Config{Scenario: "raw", Raw: results.NewClientOptions(map[string]string{"url": "https://127.0.0.1:8443/users/1", "transport": transport})}
		return l
	}
	h2, h3 := results.FromLoad(run("h2")), results.FromLoad(run("h3"))
	var b bytes.Buffer
	if err := WriteAB(&b, h2, h3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"old: raw, HTTP/2 over TLS (h2), closed loop, 50 VUs", "new: raw, HTTP/3 over QUIC (h3), closed loop, 50 VUs",
		"runs differ: transport HTTP/2 over TLS (h2) vs HTTP/3 over QUIC (h3)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Build(h3)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Load: HTTP/3 over QUIC (h3), closed loop, 50 VUs") {
		t.Errorf("a run's report does not name its protocol:\n%s", md.String())
	}
}
