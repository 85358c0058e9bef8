package streamapi

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/store"
)

// A quiet follow stream sends a comment line every KeepAliveEvery, and
// ends with "end" at MaxDuration.
func TestFollowKeepAlive(t *testing.T) {
	st := store.NewMemory(store.Options{})
	h := New(st, http.NotFoundHandler(), Options{MaxDuration: time.Second, FollowEvery: 20 * time.Millisecond, KeepAliveEvery: 200 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/users/events?follow=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	got := strings.Join(lines, "\n")
	// 1 s of silence at one comment per 200 ms: about 4. At least 2
	// (a busy box may delay the 20 ms ticks), at most 5 (not one per
	// tick: that would be 50).
	if n := strings.Count(got, ": keep-alive\n\n"); n < 2 || n > 5 {
		t.Errorf("%d keep-alive comments in 1 s, want about 4:\n%s", n, got)
	}
	if !strings.HasSuffix(got, "event: end\ndata: {\"count\":0}\n") {
		t.Errorf("stream does not end with end and a count of 0:\n%s", got)
	}
}
