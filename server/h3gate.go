package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The HTTP/3 listener's handshake gate: the rates (h3.go, h3filter.go)
// bound how many handshakes start, not what they cost, and a source's
// bucket alone let 500 start at once, ~0.6 ms of CPU each, which a busy
// machine's share of a CPU turned into a second during which every
// request on an open connection waited. So the expensive part of a
// handshake (from the ClientHello to the server's Finished: the key
// exchange, the key schedule, the certificate's signature) runs in a
// lane, one handshake at a time per lane, and after each the lane rests
// (1-share)/share times as long as the handshake held it. The handshakes'
// cryptography then takes at most share of each lane's wall-clock time,
// whatever the machine gives the server: a handshake slowed by a starved
// CPU holds its lane longer and rests it longer, so the server keeps idle
// time for the requests of the connections already open. Handshakes
// waiting for a lane are served in turn by source (an IPv4 address, an
// IPv6 /64), each source's in its order: a flood queued from one source
// delays another source's new connection by at most one of its
// handshakes per source waiting.
//
// The hooks are crypto/tls's: GetConfigForClient is where the server
// starts on a ClientHello (its context is the connection's, from the
// transport's ConnContext, which carries the source), and the server's
// application traffic secret, written to the KeyLogWriter of the
// connection's own config right after its Finished, is where the
// expensive part ends, for full and resumed handshakes alike (the
// secrets go nowhere). A handshake that fails in between leaves its lane
// when its connection's context ends, and one that holds it past
// gateMaxHold (a HelloRetryRequest waits for the client's second
// ClientHello) is let go then.
//
// Within its hold a handshake pauses twice (while another connection is
// open: someone to pause for), at crypto/tls's next hooks:
// once its key exchange is done (GetCertificate, given the certificate
// crypto/tls would pick) and before its certificate signature (the
// handshake traffic secrets written to the KeyLogWriter). Each pause parks
// the handshake's goroutine for gatePause, so the scheduler polls the
// network and runs what is ready: on a one-CPU server a request on an
// open connection that arrives during the cryptography waits for one
// piece of it (the key exchange, ~0.3-0.5 ms here, is the largest), not
// the whole (~0.5-0.9 ms). The pauses are not counted as held, and count
// as rest already taken, so they cost the handshakes' pace nothing while
// the rest is longer than them.
//
// A source rests too: after one of its handshakes it waits
// (1-srcShare)/srcShare times as long as it held a lane before its next
// is granted (the pauses again rest taken), so one host's handshakes take
// at most srcShare of a lane's time (half the share by default) and the
// lane's other turns go to other sources. A flood from one host thus
// gets half the handshakes a second (and costs half the CPU, the
// server's and its own on the machine it shares) that it got with the
// lane to itself, while hosts opening connections beside it still get
// theirs at the lane's pace. A source with every open connection (a
// load client alone on the server) has no one to rest for and does
// not; the price is paid by one host opening many connections at once
// beside another's: half the pace.

// gateMaxHold bounds how long one handshake holds a lane (and so the
// rest it costs): the cryptography takes under a millisecond; a longer
// hold waits on something else (the client's second ClientHello after
// a HelloRetryRequest) or on a starved CPU.
const gateMaxHold = 50 * time.Millisecond

// gatePause is how long a handshake pauses between pieces of its
// cryptography: longer than the scheduler's look for an expired timer
// (runtime.Gosched or a shorter sleep would be resumed before the network
// is polled), and the P is given to whatever is ready meanwhile. With
// nothing else to run the runtime waits in epoll at millisecond
// resolution, so a pause on an idle server lasts up to ~1 ms of wall time,
// which the lane's rest absorbs.
const gatePause = 50 * time.Microsecond

// gateSourceQueue bounds the handshakes of one source waiting for a lane:
// past it the socket filter drops the source's new connections' Initials
// (their clients resend them). Admitting a connection costs the server
// its state and a goroutine before any cryptography, and a source's
// bucket let 500 in at once to wait here: the victim of one such flood
// waited 0.6 s behind their admission.
const gateSourceQueue = 32

// errGateQueue drops a new connection's Initial while gateSourceQueue of
// its source's handshakes wait for a lane.
var errGateQueue = errors.New("server: HTTP/3 handshakes of this source queue for the gate")

// errGateClosed fails the handshakes still waiting when the listener closes.
var errGateClosed = errors.New("server: HTTP/3 listener closed")

// errGateWait fails a handshake that waited for a lane past the
// handshake timeout: its client has given up.
var errGateWait = errors.New("server: HTTP/3 handshake waited too long for a lane")

type hsGate struct {
	rest    float64       // a lane's rest per unit of time held: (1-share)/share
	srcRest float64       // a source's rest per unit of time held: (1-srcShare)/srcShare; <= rest: none of its own
	maxWait time.Duration // a waiter's patience: the handshake timeout
	maxHold time.Duration // gateMaxHold (tests hold longer)
	// pause parks a handshake between pieces of its cryptography
	// (gatePause; tests watch it); others, if set, says whether anything
	// else may want the CPU (another connection open): alone, a
	// handshake does not pause, which on an idle server would add up to
	// ~2 ms to its latency for nobody.
	pause  func()
	others func() bool
	// alone, if set, says whether every connection open is of source
	// key: its handshakes then do not rest the source.
	alone func(key netip.Prefix) bool

	mu     sync.Mutex
	lanes  []gateLane
	queues map[netip.Prefix][]*gateTicket // each source's waiters, in order
	ring   []netip.Prefix                 // sources with a waiter, in turn
	// resting: each source resting after a handshake, till when
	// (srcRest); a source not in it may take a lane.
	resting map[netip.Prefix]time.Time
	timer   *time.Timer // armed for the first lane's or waiting source's rest's end
	armed   time.Time   // when timer fires (zero: not armed)
	closed  bool
	// onGrant, if set (tests), is told each source given a lane, in order.
	onGrant func(netip.Prefix)
	// afterGrant, if set (tests), is called with each ticket granted,
	// under g.mu, before its waiter is woken.
	afterGrant func(*gateTicket)

	// granted counts the handshakes given a lane; queued those that
	// waited for one; waiting the waiters now; heldNs and restedNs the
	// lanes' time held and rested.
	granted, queued  atomic.Uint64
	waiting          atomic.Int64
	heldNs, restedNs atomic.Int64
	// paused counts the pauses within holds.
	paused atomic.Uint64
}

type gateLane struct {
	held   bool
	resume time.Time // the lane rests until then
}

// gateTicket is one handshake's place in the gate: waiting, then holding
// a lane, then done.
type gateTicket struct {
	g       *hsGate
	key     netip.Prefix
	ready   chan struct{} // closed when granted
	lane    int
	granted time.Time
	paused  time.Duration // within the hold, not counted as held; under g.mu
	state   int           // ticketWaiting, ticketHolding, ticketDone; under g.mu
	limit   *time.Timer
}

const (
	ticketWaiting = iota
	ticketHolding
	ticketDone
)

// gateLanes: one lane per four CPUs the server may use, at least one: the
// handshakes' cryptography takes at most share of a quarter of the CPUs.
func gateLanes() int { return 1 + (runtime.GOMAXPROCS(0)-1)/4 }

// newHSGate: share of each lane's time for the handshakes, srcShare
// (≤ share; else share) of it for one source's.
func newHSGate(share, srcShare float64, lanes int, maxWait time.Duration) *hsGate {
	srcShare = min(srcShare, share)
	return &hsGate{rest: (1 - share) / share, srcRest: (1 - srcShare) / srcShare, maxWait: maxWait, maxHold: gateMaxHold,
		lanes: make([]gateLane, lanes), queues: map[netip.Prefix][]*gateTicket{}, resting: map[netip.Prefix]time.Time{},
		pause: func() { time.Sleep(gatePause) }}
}

// enter waits for a lane for a handshake of source key, until ctx ends,
// the gate closes or maxWait passes.
func (g *hsGate) enter(ctx context.Context, key netip.Prefix) (*gateTicket, error) {
	t := &gateTicket{g: g, key: key, ready: make(chan struct{})}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, errGateClosed
	}
	if _, busy := g.queues[key]; !busy {
		g.ring = append(g.ring, key)
	}
	g.queues[key] = append(g.queues[key], t)
	g.waiting.Add(1)
	g.dispatch(time.Now())
	granted := t.state == ticketHolding
	g.mu.Unlock()
	if granted {
		return t, nil
	}
	g.queued.Add(1)
	wait := time.NewTimer(g.maxWait)
	defer wait.Stop()
	var err error
	select {
	case <-t.ready:
		g.mu.Lock()
		defer g.mu.Unlock()
		if t.state != ticketHolding && g.closed {
			return nil, errGateClosed // close took it out
		}
		// Granted; or granted and let go (gateMaxHold) before this
		// goroutine ran, on a busy machine: the handshake goes on, as one
		// let go midway does (its leave and pauses then do nothing).
		return t, nil
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-wait.C:
		err = errGateWait
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch t.state {
	case ticketHolding: // granted meanwhile: pass it on
		g.leaveLocked(t, time.Now(), false)
	case ticketWaiting:
		g.drop(t)
	}
	if g.closed {
		err = errGateClosed
	}
	return nil, err
}

// waitingOf is how many handshakes of source key wait for a lane.
func (g *hsGate) waitingOf(key netip.Prefix) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queues[key])
}

// drop takes waiting ticket t out of its source's queue.
func (g *hsGate) drop(t *gateTicket) {
	q := g.queues[t.key]
	for i, w := range q {
		if w == t {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(g.queues, t.key)
		for i, k := range g.ring {
			if k == t.key {
				g.ring = append(g.ring[:i:i], g.ring[i+1:]...)
				break
			}
		}
	} else {
		g.queues[t.key] = q
	}
	t.state = ticketDone
	g.waiting.Add(-1)
}

// dispatch gives the free lanes to the waiters, a source at a time in
// turn (skipping the sources resting), and arms the timer for the end of
// a resting lane's or waiting source's rest if waiters are left.
func (g *hsGate) dispatch(now time.Time) {
	for len(g.ring) > 0 {
		lane := -1
		var soonest time.Time
		for i := range g.lanes {
			l := &g.lanes[i]
			if l.held {
				continue
			}
			if !l.resume.After(now) {
				lane = i
				break
			}
			if soonest.IsZero() || l.resume.Before(soonest) {
				soonest = l.resume
			}
		}
		if lane < 0 {
			if !soonest.IsZero() {
				g.arm(soonest, now)
			}
			return // else a lane held: its leave dispatches
		}
		// The first source in turn not resting.
		at := -1
		var wakes time.Time
		for i, k := range g.ring {
			r, ok := g.resting[k]
			if !ok || !r.After(now) {
				delete(g.resting, k)
				at = i
				break
			}
			if wakes.IsZero() || r.Before(wakes) {
				wakes = r
			}
		}
		if at < 0 {
			g.arm(wakes, now)
			return
		}
		key := g.ring[at]
		q := g.queues[key]
		t := q[0]
		// The sources passed over keep their places, ahead of this one.
		ring := append(g.ring[:at:at], g.ring[at+1:]...)
		if len(q) == 1 {
			delete(g.queues, key)
		} else {
			g.queues[key] = q[1:]
			ring = append(ring, key) // the source's turn goes round
		}
		g.ring = ring
		g.waiting.Add(-1)
		g.lanes[lane].held = true
		t.lane, t.granted, t.state = lane, now, ticketHolding
		t.limit = time.AfterFunc(g.maxHold, t.leave)
		g.granted.Add(1)
		if g.onGrant != nil {
			g.onGrant(key)
		}
		if g.afterGrant != nil {
			g.afterGrant(t)
		}
		close(t.ready)
	}
}

// arm sets the timer to dispatch at when, unless it fires sooner already.
func (g *hsGate) arm(when, now time.Time) {
	if !g.armed.IsZero() && !g.armed.After(when) {
		return
	}
	g.armed = when
	if g.timer == nil {
		g.timer = time.AfterFunc(when.Sub(now), g.wake)
		return
	}
	g.timer.Reset(when.Sub(now))
}

func (g *hsGate) wake() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = time.Time{}
	if !g.closed {
		g.dispatch(time.Now())
	}
}

// leave ends t's hold on its lane (once; later calls do nothing): the
// lane rests for rest times the hold, at most gateMaxHold's worth.
func (t *gateTicket) leave() {
	if t == nil {
		return
	}
	g := t.g
	// Asked before g.mu: it takes the sources' lock.
	alone := g.srcRest > g.rest && g.alone != nil && g.alone(t.key)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.leaveLocked(t, time.Now(), alone)
}

// leaveLocked ends t's hold at now, the source resting unless alone.
func (g *hsGate) leaveLocked(t *gateTicket, now time.Time, alone bool) {
	if t.state != ticketHolding {
		return
	}
	t.state = ticketDone
	t.limit.Stop()
	held := min(max(now.Sub(t.granted)-t.paused, 0), g.maxHold)
	rest := time.Duration(float64(held) * g.rest)
	g.heldNs.Add(int64(held))
	g.restedNs.Add(int64(rest))
	// The pauses were rest already taken.
	g.lanes[t.lane] = gateLane{resume: now.Add(max(rest-t.paused, 0))}
	if g.srcRest > g.rest && !alone {
		if r := now.Add(time.Duration(float64(held)*g.srcRest) - t.paused); r.After(now) {
			g.resting[t.key] = r
		}
		// A source's rest is under a second (gateMaxHold's worth): forget
		// the ended ones now and then, so sources that came once (each a
		// ClientHello) are not kept.
		if len(g.resting) > 256 {
			for k, r := range g.resting {
				if !r.After(now) {
					delete(g.resting, k)
				}
			}
		}
	}
	if !g.closed {
		g.dispatch(now)
	}
}

// yield pauses t's handshake between pieces of its cryptography (g.pause)
// if it still holds its lane, the pause then not counted as held.
func (t *gateTicket) yield() {
	g := t.g
	g.mu.Lock()
	holding := t.state == ticketHolding
	g.mu.Unlock()
	if !holding || (g.others != nil && !g.others()) {
		return
	}
	start := time.Now()
	g.pause()
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.state == ticketHolding {
		t.paused += time.Since(start)
		g.paused.Add(1)
	}
}

// close fails every waiter and every later enter.
func (g *hsGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.timer != nil {
		g.timer.Stop()
	}
	for _, q := range g.queues {
		for _, t := range q {
			t.state = ticketDone
			g.waiting.Add(-1)
			close(t.ready)
		}
	}
	clear(g.queues)
	g.ring = nil
}

// gateKey carries a connection's source from the transport's ConnContext
// to crypto/tls's GetConfigForClient.
type gateKey struct{}

// gateTLS wraps base (the listener's TLS config) so that each handshake
// takes a lane of g from its ClientHello until the server's Finished.
func gateTLS(base *tls.Config, g *hsGate) *tls.Config {
	conf := base.Clone()
	conf.GetConfigForClient = func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
		ctx := chi.Context()
		key, _ := ctx.Value(gateKey{}).(netip.Prefix)
		t, err := g.enter(ctx, key)
		if err != nil {
			return nil, err
		}
		context.AfterFunc(ctx, t.leave)
		c := base.Clone()
		c.KeyLogWriter = finishedWriter{t}
		// crypto/tls asks GetCertificate right after the key exchange,
		// but only with no Certificates (or a server name): with one
		// certificate and no hook of its own, hand it over from the hook.
		if len(base.Certificates) == 1 && base.GetCertificate == nil {
			cert := &base.Certificates[0]
			c.Certificates = nil
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				t.yield()
				return cert, nil
			}
		}
		return c, nil
	}
	return conf
}

// finishedWriter is a handshake's KeyLogWriter: crypto/tls writes the
// server's handshake traffic secret before the certificate's signature,
// where the handshake pauses, and its application traffic secret right
// after its Finished, the end of the handshake's cryptography, where it
// leaves its lane. Nothing is kept.
type finishedWriter struct{ t *gateTicket }

var (
	serverHandshakeSecret = []byte("SERVER_HANDSHAKE_TRAFFIC_SECRET ")
	serverTrafficSecret   = []byte("SERVER_TRAFFIC_SECRET_0 ")
)

func (w finishedWriter) Write(b []byte) (int, error) {
	switch {
	case bytes.HasPrefix(b, serverHandshakeSecret):
		w.t.yield()
	case bytes.HasPrefix(b, serverTrafficSecret):
		w.t.leave()
	}
	return len(b), nil
}
