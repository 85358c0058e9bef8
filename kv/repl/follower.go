package repl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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
	// MinBackoff and MaxBackoff bound the wait between failed attempts
	// (doubling, with jitter): 50 ms and 1 s when 0.
	MinBackoff, MaxBackoff time.Duration
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
	Transport http.RoundTripper
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
}

// errResync asks for a full resync.
var errResync = errors.New("repl: resync needed")

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
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	pos, err := parsePosition(st.Meta())
	if err != nil {
		o.Logf("repl: %v; resyncing", err)
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
	f := &Follower{st: st, o: o, client: &http.Client{Transport: tr}, cancel: cancel, done: make(chan struct{}), pos: pos}
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
	backoff := f.o.MinBackoff
	for ctx.Err() == nil {
		f.mu.Lock()
		need := f.pos.ID == ""
		f.mu.Unlock()
		var err error
		if need {
			err = f.resync(ctx)
		} else {
			err = f.stream(ctx)
		}
		switch {
		case errors.Is(err, errResync):
			f.mu.Lock()
			f.pos = Position{}
			f.mu.Unlock()
			backoff = f.o.MinBackoff
			continue
		case err == nil:
			backoff = f.o.MinBackoff
			continue
		}
		if ctx.Err() != nil {
			return
		}
		f.mu.Lock()
		f.lastErr = err.Error()
		f.reconns++
		f.mu.Unlock()
		f.o.Logf("repl: %v; retrying in %v", err, backoff)
		// Jitter: followers cut off together do not return together.
		d := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		backoff = min(2*backoff, f.o.MaxBackoff)
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
	return resp, kick, func() { stop(); resp.Body.Close() }, nil
}

func httpError(resp *http.Response, what string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("repl: %s: leader answered %s: %s", what, resp.Status, strings.TrimSpace(string(b)))
}

// stream applies the leader's records from f.pos until the stream ends.
func (f *Follower) stream(ctx context.Context) error {
	f.mu.Lock()
	pos := f.pos
	f.mu.Unlock()
	q := url.Values{"id": {pos.ID}, "offset": {fmt.Sprint(pos.Offset)}, "name": {f.o.Name}}
	resp, kick, stop, err := f.get(ctx, pathStream+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer stop()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusConflict:
		f.o.Logf("repl: leader has no offset %d of history %s; resyncing", pos.Offset, pos.ID)
		return errResync
	default:
		return httpError(resp, "stream")
	}
	f.setLink(true)
	defer f.setLink(false)
	fr := newFrameReader(resp.Body, MaxFrame)
	var last kv.Ticket
	for {
		fm, err := fr.next()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.Canceled) {
				err = fmt.Errorf("no frame for %v", f.o.IdleTimeout)
			}
			return fmt.Errorf("repl: stream from offset %d: %w", pos.Offset, err)
		}
		kick()
		now := time.Now()
		switch fm.Kind {
		case KindHeartbeat:
			lo, n := binary.Uvarint(fm.Payload)
			if n <= 0 {
				return fmt.Errorf("%w: heartbeat payload", ErrFrame)
			}
			f.mu.Lock()
			f.leaderOff, f.lastIO = int64(lo), now
			if f.leaderOff <= pos.Offset {
				f.delay = 0 // caught up
			}
			f.mu.Unlock()
			continue
		case KindRecord:
		default:
			return fmt.Errorf("%w: kind %q in a stream", ErrFrame, fm.Kind)
		}
		if fm.Seq != pos.Seq+1 {
			f.mu.Lock()
			f.seqErrors++
			f.mu.Unlock()
			// Never with one history; resync rather than guess.
			return fmt.Errorf("%w: record %d after %d", errResync, fm.Seq, pos.Seq)
		}
		next := Position{ID: pos.ID, Offset: pos.Offset + fm.Size, Seq: fm.Seq}
		t, err := f.st.Apply(fm.Payload, next.encode())
		if err != nil {
			return fmt.Errorf("repl: applying record %d: %w", fm.Seq, err)
		}
		pos = next
		last = t
		f.mu.Lock()
		f.pos, f.lastTS, f.lastIO = pos, fm.TS, now
		f.delay = max(now.UnixMilli()-fm.TS, 0)
		f.leaderOff = max(f.leaderOff, pos.Offset)
		f.applied++
		f.mu.Unlock()
		if f.o.OnApply != nil {
			f.o.OnApply(pos, false)
		}
		if fr.buffered() == 0 && last != 0 {
			// Nothing more at hand: let the AOF catch up. A refused
			// write was undone in memory, position included, so the
			// data no longer matches pos: start over from a snapshot.
			if err := f.st.Wait(last); err != nil {
				f.o.Logf("repl: AOF refused a replicated record: %v; resyncing", err)
				return errResync
			}
			last = 0
		}
	}
}

func (f *Follower) setLink(up bool) {
	f.mu.Lock()
	f.link = up
	f.mu.Unlock()
}

// resync replaces the store's content with the leader's snapshot. The
// position is cleared first (in the same AOF record as the flush), so a
// crash or a cut mid-way leaves no position and the next start resyncs.
func (f *Follower) resync(ctx context.Context) error {
	resp, kick, stop, err := f.get(ctx, pathSnapshot)
	if err != nil {
		return err
	}
	defer stop()
	if resp.StatusCode != http.StatusOK {
		return httpError(resp, "snapshot")
	}
	f.mu.Lock()
	f.syncing = true
	f.resyncs++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.syncing = false
		f.mu.Unlock()
	}()
	f.o.Logf("repl: full resync from %s (replid %s, offset %s)", f.o.Leader, resp.Header.Get("X-Repl-Id"), resp.Header.Get("X-Repl-Offset"))
	if _, err := f.st.Apply(kv.AppendFlushAllOp(nil), nil); err != nil {
		return fmt.Errorf("repl: clearing for a resync: %w", err)
	}
	fr := newFrameReader(resp.Body, MaxFrame)
	for n := 0; ; n++ {
		fm, err := fr.next()
		if err != nil {
			return fmt.Errorf("repl: snapshot frame %d: %w", n, err)
		}
		kick()
		switch fm.Kind {
		case KindSnapshot:
			if _, err := f.st.Apply(fm.Payload, nil); err != nil {
				return fmt.Errorf("repl: applying snapshot frame %d: %w", n, err)
			}
		case KindEnd:
			pos, err := parsePosition(fm.Payload)
			if err != nil || pos.ID == "" {
				return fmt.Errorf("%w: snapshot end: %v", ErrFrame, err)
			}
			t, err := f.st.Apply(nil, pos.encode())
			if err == nil {
				err = f.st.Wait(t)
			}
			if err != nil {
				return fmt.Errorf("repl: recording the snapshot's position: %w", err)
			}
			f.mu.Lock()
			f.pos, f.lastIO, f.lastTS = pos, time.Now(), fm.TS
			f.leaderOff = max(f.leaderOff, pos.Offset)
			f.mu.Unlock()
			if f.o.OnApply != nil {
				f.o.OnApply(pos, true)
			}
			f.o.Logf("repl: resync done at offset %d (record %d)", pos.Offset, pos.Seq)
			return nil
		default:
			return fmt.Errorf("%w: kind %q in a snapshot", ErrFrame, fm.Kind)
		}
	}
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
