package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// FollowerOptions configures a Follower.
type FollowerOptions struct {
	// Leader is the leader's HTTP base URL (http://host:port).
	Leader string
	// Token is sent as "Authorization: Bearer" ("" sends none).
	Token string
	// Name identifies this follower to the leader (its own address).
	Name string
	// MinBackoff and MaxBackoff bound the wait after every failed
	// attempt, whatever failed (doubling, with jitter in [w/2, w]): 50 ms
	// and 1 s when 0.
	MinBackoff, MaxBackoff time.Duration
	// StableAfter resets the wait to MinBackoff: a stream that stayed up
	// this long ended a new incident, not the same one again. 5 s when 0.
	StableAfter time.Duration
	// Sleep waits between attempts (nil: a timer); it returns an error
	// when ctx is done. Tests count attempts with it, without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock of StableAfter, of when frames arrived and of the
	// lag figures (nil: time.Now).
	Now func() time.Time
	// IdleTimeout drops a stream or snapshot silent for this long (the
	// leader sends a heartbeat every second): 5 s when 0.
	IdleTimeout time.Duration
	// Logf receives connection and resync messages; nil discards them.
	Logf func(format string, args ...any)
	// OnApply, when set, is called after each record is applied (and
	// after a snapshot is loaded, with snapshot true), in order: tests
	// check that no record is applied twice.
	OnApply func(pos Position, snapshot bool)
	// Transport carries the requests (tests route them through a
	// faulty proxy by the URL instead); nil is a fresh http.Transport.
	// Redirects are never followed, whatever the transport.
	Transport http.RoundTripper

	jitter func(time.Duration) time.Duration // tests
}

// Follower keeps a store a copy of a leader's.
type Follower struct {
	st     *kv.Store
	o      FollowerOptions
	client *http.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	pos       Position
	leaderOff int64     // the leader's offset at its last heartbeat
	lastTS    int64     // leader's time of the last applied record (Unix ms)
	delay     int64     // ms from the leader's recording to our applying it, last record
	lastIO    time.Time // last frame received
	link      bool      // a stream is open
	syncing   bool      // a snapshot is loading
	resyncs   int64
	reconns   int64
	applied   int64
	seqErrors int64 // records out of sequence (never with a correct leader)
	lastErr   string

	upAt time.Time // when the current stream got its 200 (run's goroutine only)
}

func (f *Follower) now() time.Time { return f.o.Now() }

// errResync asks for a full resync.
var errResync = errors.New("resync needed")

// ErrRedirect is a leader that answered with a redirect: never followed,
// since the request carries the token.
var ErrRedirect = errors.New("redirects are not followed")

// StartFollower starts replicating into st from the position st recorded
// (kv.Store.Meta), or with a full resync when it has none.
func StartFollower(st *kv.Store, o FollowerOptions) (*Follower, error) {
	if !strings.Contains(o.Leader, "://") {
		o.Leader = "http://" + o.Leader // host:port
	}
	u, err := url.Parse(o.Leader)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("repl: leader URL %q: want http://host:port", o.Leader)
	}
	o.Leader = strings.TrimRight(o.Leader, "/")
	if o.MinBackoff <= 0 {
		o.MinBackoff = 50 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Second // Redis's replicas retry every second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 5 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.StableAfter <= 0 {
		o.StableAfter = 5 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	pos, err := parsePosition(st.Meta())
	if err != nil {
		o.Logf("%v; resyncing", err)
		pos = Position{}
	}
	tr := o.Transport
	if tr == nil {
		tr = &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			ResponseHeaderTimeout: 10 * time.Second,
			MaxIdleConnsPerHost:   2,
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // get refuses it, naming the Location
	}}
	f := &Follower{st: st, o: o, client: client, cancel: cancel, done: make(chan struct{}), pos: pos}
	go f.run(ctx)
	return f, nil
}

// Close stops replicating and waits for the loop to end.
func (f *Follower) Close() {
	f.cancel()
	<-f.done
}

func (f *Follower) run(ctx context.Context) {
	defer close(f.done)
	ackDone := make(chan struct{})
	go f.ackLoop(ctx, ackDone)
	defer func() { <-ackDone }()
	bo := backoff{min: f.o.MinBackoff, max: f.o.MaxBackoff, jitter: f.o.jitter}
	for ctx.Err() == nil {
		f.mu.Lock()
		need := f.pos.ID == ""
		f.mu.Unlock()
		var err error
		f.upAt = time.Time{}
		if need {
			if err = f.resync(ctx); err == nil {
				continue // straight to the stream from the snapshot's position
			}
		} else {
			err = f.stream(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errResync) {
			f.mu.Lock()
			f.pos = Position{}
			f.mu.Unlock()
		}
		if !f.upAt.IsZero() && f.now().Sub(f.upAt) >= f.o.StableAfter {
			bo.reset() // the link had worked for a while: a new incident
		}
		d := bo.next()
		f.mu.Lock()
		f.lastErr = err.Error()
		f.reconns++
		f.mu.Unlock()
		f.o.Logf("%v; retrying in %v", err, d.Round(time.Millisecond))
		if f.o.Sleep(ctx, d) != nil {
			return
		}
	}
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// get opens a request to the leader with a watchdog: the returned
// context is cancelled when kick is not called for IdleTimeout.
func (f *Follower) get(ctx context.Context, path string) (*http.Response, func(), func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	t := time.AfterFunc(f.o.IdleTimeout, cancel)
	kick := func() { t.Reset(f.o.IdleTimeout) }
	stop := func() { t.Stop(); cancel() }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.o.Leader+path, nil)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("repl: %w", err)
	}
	if f.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.o.Token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("repl: GET %s: %w", path, err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		stop()
		resp.Body.Close()
		return nil, nil, nil, fmt.Errorf("repl: GET %s: the leader answered %s to %q: %w (the request carries the token); point the follower at the leader itself",
			path, resp.Status, resp.Header.Get("Location"), ErrRedirect)
	}
	return resp, kick, func() { stop(); resp.Body.Close() }, nil
}

func httpError(resp *http.Response, what string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("repl: %s: leader answered %s: %s", what, resp.Status, strings.TrimSpace(string(b)))
}

func (f *Follower) setLink(up bool) {
	f.mu.Lock()
	f.link = up
	f.mu.Unlock()
}

// ackLoop tells the leader the follower's position once a second, so
// that the leader can list its followers and their lag.
func (f *Follower) ackLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.mu.Lock()
		pos := f.pos
		f.mu.Unlock()
		q := url.Values{"id": {pos.ID}, "offset": {fmt.Sprint(pos.Offset)}, "name": {f.o.Name}}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodPost, f.o.Leader+pathAck+"?"+q.Encode(), nil)
		if err == nil {
			if f.o.Token != "" {
				req.Header.Set("Authorization", "Bearer "+f.o.Token)
			}
			if resp, err := f.client.Do(req); err == nil {
				io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
			}
		}
		cancel()
	}
}
