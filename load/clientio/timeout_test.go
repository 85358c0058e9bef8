package clientio

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fakeRT answers every request at once, noting the context it got and
// whether that was already done.
type fakeRT struct {
	ctxs []context.Context
	dead int
}

func (f *fakeRT) RoundTrip(req *http.Request) (*http.Response, error) {
	f.ctxs = append(f.ctxs, req.Context())
	if req.Context().Err() != nil {
		f.dead++
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok"))}, nil
}

// A VU's requests, one after another, share one context, re-armed for
// each: a pause longer than the timeout between two of them cuts
// neither; a new parent context gets a new one; requests at once on one
// client get their own.
func TestTimedReusesContextPerRequest(t *testing.T) {
	f := &fakeRT{}
	tm := NewTimed(f, 50*time.Millisecond)
	c := &http.Client{Transport: tm}
	get := func(ctx context.Context) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://h/", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	bg := context.Background()
	for range 3 {
		resp := get(bg)
		io.ReadAll(resp.Body)
		resp.Body.Close()
		time.Sleep(80 * time.Millisecond) // past the timeout: the timer is stopped
	}
	if f.dead != 0 || f.ctxs[0] != f.ctxs[1] || f.ctxs[1] != f.ctxs[2] {
		t.Fatalf("%d requests sent on a done context; contexts reused %v %v", f.dead, f.ctxs[0] == f.ctxs[1], f.ctxs[1] == f.ctxs[2])
	}
	if f.ctxs[2].Err() != nil {
		t.Fatal("the idle VU's context was cancelled")
	}
	other, cancel := context.WithCancel(bg)
	defer cancel()
	get(other).Body.Close()
	if f.ctxs[3] == f.ctxs[2] {
		t.Error("a new parent context reused the old one")
	}
	first := get(bg) // its body not read: still under way
	second := get(bg)
	if f.ctxs[5] == f.ctxs[4] {
		t.Error("a request alongside another shared its context")
	}
	first.Body.Close()
	second.Body.Close()
	if f.dead != 0 {
		t.Errorf("%d requests sent on a done context", f.dead)
	}
}

// blockRT holds each request until its context ends or hold passes,
// noting the request and when its context ended early.
type blockRT struct {
	hold time.Duration
	reqs []*http.Request
	cut  []time.Duration // per request: how long until its context ended (0: it did not)
}

func (f *blockRT) RoundTrip(req *http.Request) (*http.Response, error) {
	f.reqs = append(f.reqs, req)
	t0 := time.Now()
	select {
	case <-req.Context().Done():
		f.cut = append(f.cut, time.Since(t0))
		return nil, req.Context().Err()
	case <-time.After(f.hold):
		f.cut = append(f.cut, 0)
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok"))}, nil
}

// The timer is not set per request: a request under way when it fires
// for an earlier deadline is not cut (the timer sets itself again for the
// rest of it), one that outlives its own is, and the next one gets a new
// context. A request built under RequestContext's context is sent as it
// is, not copied.
func TestTimedWatchOneTimer(t *testing.T) {
	const timeout = time.Second
	f := &blockRT{}
	tm := NewTimed(f, timeout)
	bg := context.Background()
	send := func(hold time.Duration) (*http.Request, error) {
		t.Helper()
		f.hold = hold
		req, _ := http.NewRequestWithContext(tm.RequestContext(bg), "GET", "https://h/", nil)
		t0 := time.Now()
		resp, err := tm.RoundTrip(req)
		if err == nil {
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if took := time.Since(t0); err == nil && took >= timeout {
			t.Skipf("a %v request took %v on this machine: too slow to tell", hold, took)
		}
		return req, err
	}
	first, err := send(0) // sets the timer for 1 s from now
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	// Under way when the timer fires for the first deadline; within its own.
	second, err := send(600 * time.Millisecond)
	if err != nil {
		t.Fatalf("a request within its timeout was cut after %v: %v", f.cut[1], err)
	}
	if f.reqs[0] != first || f.reqs[1] != second || first.Context() != second.Context() {
		t.Error("a request built under RequestContext's context was copied, or the context not reused")
	}
	third, err := send(time.Hour) // cut by its timeout
	if !errors.Is(err, ErrTimeout) || f.cut[2] < timeout {
		t.Fatalf("a stalled request: %v after %v, want a timeout after %v", err, f.cut[2], timeout)
	}
	fourth, err := send(0)
	if err != nil || fourth.Context() == third.Context() || f.reqs[3] != fourth {
		t.Errorf("after a timeout: %v; new context %v; sent as built %v", err, fourth.Context() != third.Context(), f.reqs[3] == fourth)
	}
}
