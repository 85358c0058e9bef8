package load

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

func TestFormatProgress(t *testing.T) {
	p := Progress{Elapsed: 4200 * time.Millisecond, Requests: 420, Failed: 3, RPS: 12345,
		P50: 1200 * time.Microsecond, P99: 3400 * time.Microsecond}
	tests := []struct {
		name string
		o    Options
		p    Progress
		want string
	}{
		{"duration", Options{Options: results.Options{Duration: 10 * time.Second}}, p,
			"[==========>             ]  42%  4.2s/10s  ETA 5.8s  12.3k req/s  3 errors  p50 1.20ms  p99 3.40ms"},
		{"requests", Options{Options: results.Options{Requests: 840}}, Progress{Elapsed: time.Second, Requests: 420, RPS: 420},
			"[============>           ]  50%  1s  ETA 1s  420 req/s  0 errors  p50 0µs  p99 0µs"},
		{"no rate yet", Options{Options: results.Options{Requests: 840}}, Progress{Elapsed: time.Second},
			"[>                       ]   0%  1s  ETA ?  0 req/s  0 errors  p50 0µs  p99 0µs"},
		{"overrun", Options{Options: results.Options{Duration: time.Second}}, Progress{Elapsed: 2 * time.Second, RPS: 2e6},
			"[========================] 100%  2s/1s  ETA 0s  2.00M req/s  0 errors  p50 0µs  p99 0µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatProgress(tt.p, tt.o); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The callback redraws one line: carriage return first, erase to the end.
func TestProgressBarRedraws(t *testing.T) {
	var buf bytes.Buffer
	draw := ProgressBar(&buf, Options{}) // defaults: 10 s
	draw(Progress{Elapsed: 5 * time.Second})
	draw(Progress{Elapsed: 6 * time.Second})
	lines := strings.Split(buf.String(), "\r")
	if len(lines) != 3 || !strings.Contains(lines[1], "50%  5s/10s") || !strings.HasSuffix(lines[2], "\033[K") {
		t.Errorf("output %q", buf.String())
	}
}
