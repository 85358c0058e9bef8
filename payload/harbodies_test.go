package payload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A HAR's response bodies are what an API sends: --bodies responses
// takes them (base64 ones decoded), both takes requests' too.
func TestHARResponseBodies(t *testing.T) {
	har := filepath.Join(t.TempDir(), "trace.har")
	os.WriteFile(har, []byte(`{"log":{"version":"1.2","creator":{"name":"x"},"entries":[
 {"startedDateTime":"2025-01-02T03:04:05Z","request":{"method":"POST","url":"http://h/users","headers":[],
  "postData":{"mimeType":"application/json","text":"{\"name\":\"Ada\"}"}},
  "response":{"status":201,"content":{"mimeType":"application/json","text":"{\"id\":9007199254740993,\"name\":\"Ada\"}"}}},
 {"startedDateTime":"2025-01-02T03:04:06Z","request":{"method":"GET","url":"http://h/users","headers":[]},
  "response":{"status":200,"content":{"mimeType":"application/json","encoding":"base64","text":"eyJ1c2VycyI6W3siaWQiOjF9XX0="}}},
 {"startedDateTime":"2025-01-02T03:04:07Z","request":{"method":"GET","url":"http://h/","headers":[]},
  "response":{"status":200,"content":{"mimeType":"text/html","text":"<html>"}}}]}}`), 0o644)
	for _, tc := range []struct {
		bodies        string
		read, skipped int
	}{{BodiesResponses, 2, 1}, {BodiesBoth, 3, 1}, {BodiesRequests, 1, 2}} {
		lab, err := Run(context.Background(), []string{har}, Options{Time: -1, Bodies: tc.bodies})
		if err != nil {
			t.Fatal(err)
		}
		if lab.Input.Read != tc.read || lab.Input.Skipped != tc.skipped {
			t.Errorf("%s: %+v, want %d read and %d skipped", tc.bodies, lab.Input, tc.read, tc.skipped)
		}
		if _, ok := change(roundTrip(t, lab, "json"), ChangeBigInt); ok != (tc.bodies != BodiesRequests) {
			t.Errorf("%s: the response's big int checked: %v", tc.bodies, ok)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.har")
	os.WriteFile(bad, []byte(`{"log":{"entries":[{"response":{"content":{"text":"{\"a\":"}}}]}}`), 0o644)
	_, err := Run(context.Background(), []string{bad}, Options{Time: -1, Bodies: BodiesResponses})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "bad.har: entry 1") {
		t.Errorf("a truncated response body: %v, want ErrInput naming entry 1", err)
	}
	os.WriteFile(bad, []byte(`{"log":{"entries":[{"response":`), 0o644)
	_, err = Run(context.Background(), []string{bad}, Options{Time: -1, Bodies: BodiesResponses})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "bad.har: HAR at byte") {
		t.Errorf("a cut HAR: %v", err)
	}
}
