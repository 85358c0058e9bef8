package streamapi

import (
	"strings"
	"testing"
)

func TestStreamKind(t *testing.T) {
	for _, c := range []struct {
		accept []string
		want   string
	}{
		{nil, ""},
		{[]string{"application/json"}, ""},
		{[]string{"*/*"}, ""},
		{[]string{"application/x-ndjson"}, MediaNDJSON},
		{[]string{"Application/X-NDJSON"}, MediaNDJSON},
		{[]string{"application/ndjson"}, MediaNDJSON},
		{[]string{"application/jsonl; charset=utf-8"}, MediaNDJSON},
		{[]string{"text/event-stream"}, MediaSSE},
		{[]string{"application/json", "text/event-stream"}, MediaSSE}, // two headers, equal q: the stream wins ties
		{[]string{"application/json, application/x-ndjson;q=0.5"}, ""},
		{[]string{"application/json;q=0.5, application/x-ndjson"}, MediaNDJSON},
		{[]string{"application/x-ndjson;q=0"}, ""},
		{[]string{"application/x-ndjson;q=2"}, ""}, // malformed q: skipped
		{[]string{"application/x-ndjson;q=0.4, text/event-stream;q=0.6, */*;q=0.1"}, MediaSSE},
		{[]string{"event-stream"}, ""},
	} {
		if got := streamKind(c.accept); got != c.want {
			t.Errorf("streamKind(%q) = %q, want %q", c.accept, got, c.want)
		}
	}
}

// FuzzStreamKind: any header gives one of the three answers, and a stream
// type is chosen only when the header names it.
func FuzzStreamKind(f *testing.F) {
	f.Add("application/x-ndjson;q=0.4, text/event-stream;q=0.6, */*;q=0.1")
	f.Add("text/event-stream;q=1.0, application/json")
	f.Fuzz(func(t *testing.T, accept string) {
		switch got := streamKind([]string{accept}); got {
		case "":
		case MediaNDJSON:
			l := strings.ToLower(accept)
			if !strings.Contains(l, "ndjson") && !strings.Contains(l, "jsonl") {
				t.Fatalf("%q gave NDJSON", accept)
			}
		case MediaSSE:
			if !strings.Contains(strings.ToLower(accept), "event-stream") {
				t.Fatalf("%q gave SSE", accept)
			}
		default:
			t.Fatalf("%q gave %q", accept, got)
		}
	})
}
