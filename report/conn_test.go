package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestWriteConn: the line under a load summary says which transport auto
// took and why, the handshakes' median and max, and what 0-RTT did.
func TestWriteConn(t *testing.T) {
	var b bytes.Buffer
	WriteConn(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no conn: %q", b.String())
	}
	WriteConn(&b, &results.Conn{Transport: "h3", Auto: "Alt-Svc offered h3",
		Handshakes: []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}})
	for _, want := range []string{"  transport h3 (--transport auto: Alt-Svc offered h3)\n", "  QUIC handshakes 3: median 2ms, max 3ms (not in the latencies above)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteConn(&b, &results.Conn{Transport: "h3", ZeroRTT: &results.ZeroRTT{Used: 2, EarlyRequests: 2, Refused: 1,
		Resumed: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}, Full: []time.Duration{4 * time.Millisecond}}})
	for _, want := range []string{"  0-RTT: 2 of 3 resumed connections used it (2 requests sent early); the server rejected the early data of 1",
		"  QUIC handshakes full 1: median 4ms, max 4ms\n", "  QUIC handshakes resumed 3: median 1ms, max 1ms\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}

// TestSpeedLine: a replay's capacity answer in speed, each way a search
// ends.
func TestSpeedLine(t *testing.T) {
	base := 100.0
	for _, c := range []struct {
		res  results.Capacity
		want string
	}{
		{results.Capacity{Rate: 270, Low: 270, High: 280, SLO: []string{"p99<20ms"}}, "the recording fits 2.7× its own rate (100/s at speed 1) at p99<20ms [2.7×…2.8×)"},
		{results.Capacity{Rate: 0, High: 1, Limit: results.LimitMinRate, SLO: []string{"p99<1ms"}}, "no speed met p99<1ms: even 0.01× its own rate (100/s at speed 1) failed"},
		{results.Capacity{Rate: 500, Limit: results.LimitMaxRate, SLO: []string{"p99<20ms"}}, "the recording fits ≥ 5× its own rate (100/s at speed 1) at p99<20ms: every speed up to --max-speed met it"},
	} {
		if got := SpeedLine(&c.res, base); got != c.want {
			t.Errorf("SpeedLine = %q, want %q", got, c.want)
		}
	}
}
