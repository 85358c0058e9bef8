package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

func TestWriteReplay(t *testing.T) {
	t.Parallel()
	res := &results.Load{Requests: 950}
	run := results.ReplayRun{Scheduled: 1000, Span: 2 * time.Second, Passes: 1, Malformed: 2, MalformedExamples: []string{"line 7: bad JSON"},
		Recorded: 1000, PassRequests: 998, RecordingRead: true, ShareSent: 0.95, GapsCut: 1, LongestGap: time.Minute}
	var b bytes.Buffer
	WriteReplay(&b, res, run)
	for _, want := range []string{"1000 requests scheduled, recorded over 2s, 1 pass(es)", "skipped       2 lines", "line 7: bad JSON",
		"gaps cut      1 pauses", "sent          950 of the recording's 1000 requests (95.0%)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	run.RecordingRead = false
	if got := ReplayCover(res, run); got != "950 requests; the run ended before the recording was read to its end" {
		t.Errorf("cover %q", got)
	}
}
