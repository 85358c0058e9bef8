package h3

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/results"
)

// A request that outlives the pool's timeout fails as a timeout, whether
// the server never answers or stops in the middle of the body, and the
// VU's next request on the same client is not cut by it.
func TestPoolRequestTimeout(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(1, s.addr, 300*time.Millisecond, &tls.Config{RootCAs: s.roots})
	defer p.Close()
	c := p.Client(0)
	// A guard: should the timeout not work, the stalled request ends here.
	guard, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, stall := range []string{"head", "body"} {
		t0 := time.Now()
		req, _ := http.NewRequestWithContext(guard, "GET", "https://"+s.addr+"/?stall="+stall, nil)
		resp, err := c.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		took := time.Since(t0)
		if err == nil || !errors.Is(err, clientio.ErrTimeout) || clientio.FailReason(err) != "timeout" {
			t.Fatalf("stall %s: err %v (reason %q), want a timeout", stall, err, clientio.FailReason(err))
		}
		if took < 300*time.Millisecond {
			t.Errorf("stall %s: failed after %v, before its 300ms timeout", stall, took)
		}
		resp, err = c.Get("https://" + s.addr + "/")
		if err != nil {
			t.Fatalf("after the %s timeout: %v", stall, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "hello " {
			t.Fatalf("after the %s timeout: %q, %v", stall, b, err)
		}
	}
}

// With NoLayers the connections carry no trace (quic-go builds no qlog
// events), the requests go as before, the socket's bytes are counted, and
// the result gets no split.
func TestPoolNoLayers(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(2, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	traces := 0
	p.wrapTrace = func(tr qlogwriter.Trace) qlogwriter.Trace { traces++; return tr }
	p.NoLayers()
	for vu := range 4 {
		resp, err := p.Client(vu).Get("https://" + s.addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello " {
			t.Fatalf("body %q", b)
		}
	}
	p.Close()
	var res results.Load
	p.Finish(&res)
	if traces != 0 || res.Layers != nil || len(res.Warnings) != 0 || p.Bytes.In.Load() == 0 || p.Bytes.Out.Load() == 0 {
		t.Errorf("%d traces, layers %v, warnings %v, bytes in %d out %d", traces, res.Layers, res.Warnings, p.Bytes.In.Load(), p.Bytes.Out.Load())
	}
}

// A request without a body is sent on http3's stream API (exchange.go):
// while it waits for its response no goroutine of http3's waits on its
// context (ClientConn.RoundTrip starts one per request), and when its
// context ends (load's timeout, the run's end) it fails at once and its
// stream is reset, as the server sees.
func TestPoolRequestCutWithoutGoroutine(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(1, s.addr, 0, &tls.Config{RootCAs: s.roots})
	defer p.Close()
	c := p.Client(0)
	resp, err := c.Get("https://" + s.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello " || resp.ProtoMajor != 3 || resp.Request == nil {
		t.Fatalf("%s %q, request %v", resp.Proto, b, resp.Request)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+s.addr+"/?stall=head", nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); s.stalled.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
	stacks := make([]byte, 1<<20)
	stacks = stacks[:runtime.Stack(stacks, true)]
	if i := bytes.Index(stacks, []byte("http3.(*ClientConn).roundTrip.func")); i >= 0 {
		t.Errorf("a goroutine of http3's RoundTrip waits on the request:\n%s", stacks[max(0, i-200):min(len(stacks), i+400)])
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cut request: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request was not cut when its context ended")
	}
	for deadline := time.Now().Add(10 * time.Second); s.cut.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server's stream was not reset")
		}
	}
}

// afterFuncCounter counts the context.AfterFunc registrations made on it
// (its Value hides the cancelCtx beneath, so context asks it).
type afterFuncCounter struct {
	context.Context
	n atomic.Int64
}

func (c *afterFuncCounter) Value(any) any { return nil }
func (c *afterFuncCounter) AfterFunc(f func()) func() bool {
	c.n.Add(1)
	return context.AfterFunc(c.Context, f)
}

// A VU's client registers one AfterFunc per context, not per request
// (http3 registers one per request as it opens the stream): requests
// under one context cost one registration between them. When that
// context ends, the request under way is cut; the next context's
// requests are not cut by the old one's end.
func TestPoolOneWatchPerContext(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(1, s.addr, 0, &tls.Config{RootCAs: s.roots})
	defer p.Close()
	c := p.Client(0)
	get := func(ctx context.Context, query string) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+s.addr+"/"+query, nil)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && string(b) != "hello " {
			err = fmt.Errorf("body %q", b)
		}
		return err
	}
	base, cancel := context.WithCancel(context.Background())
	ctx := &afterFuncCounter{Context: base}
	const n = 10
	for range n {
		if err := get(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := ctx.n.Load(); got != n+1 { // http3's per request, ours once
		t.Errorf("%d AfterFunc registrations for %d requests, want %d", got, n, n+1)
	}
	// The old context ends after its last request: the next context's
	// request is not cut by it.
	cancel()
	next, cancelNext := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- get(next, "?stall=head") }()
	for deadline := time.Now().Add(10 * time.Second); s.stalled.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
	time.Sleep(20 * time.Millisecond) // the old context's AfterFunc runs in a goroutine of its own
	select {
	case err := <-errc:
		t.Fatalf("a request under a live context was cut: %v", err)
	default:
	}
	cancelNext()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cut request: %v, want context.Canceled", err)
	}
	// A request under a context that has ended fails, whatever watched it.
	if err := get(next, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("request under an ended context: %v, want context.Canceled", err)
	}
}
