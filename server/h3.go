package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/promtext"
)

// H3 configures the HTTP/3 listener: the REST port's whole routing table
// (routes.go) served over QUIC by quic-go's http3 server. Addr "" serves
// no HTTP/3.
// Its certificate is Options.TLS's.
type H3 struct {
	Addr string
	// MaxStreams bounds the concurrent request streams of one QUIC
	// connection (QUIC's MAX_STREAMS); 0 is DefaultH3MaxStreams.
	MaxStreams int
	// MaxConns bounds the QUIC connections open at once, handshakes in
	// progress included; a client past it is refused at its first packet
	// (CONNECTION_REFUSED), before any cryptography. 0 is
	// DefaultH3MaxConns.
	MaxConns int
	// HandshakeRate bounds the new QUIC connections admitted per second
	// (a token bucket holding HandshakeBurst's worth); past it a new
	// connection's Initial packets are dropped at the socket without a
	// reply (h3filter.go; the client resends them after its probe
	// timeout). A handshake costs the server its key exchange and
	// certificate signature, so a flood of them takes CPU from every
	// connection already open; this bounds what a flood can take. 0 is
	// DefaultH3HandshakeRate; < 0 is unbounded.
	HandshakeRate int
	// HandshakeBurst is how much time's worth of HandshakeRate and
	// SourceRate their buckets hold (at least one handshake): the
	// handshakes that can start at once, whose CPU a request on an open
	// connection may wait behind. 0 is DefaultH3HandshakeBurst.
	HandshakeBurst time.Duration
	// NoInitialFilter turns off the socket filter: quic-go then reads
	// every Initial and refuses those past the rates itself, each with a
	// CONNECTION_REFUSED it seals and sends (serve --h3-initial-filter=false,
	// for comparing the two).
	NoInitialFilter bool
	// SourceConns and SourceRate bound MaxConns and HandshakeRate for one
	// source (an IPv4 address, an IPv6 /64), so a flood from one host
	// cannot take every connection slot or the whole handshake budget and
	// lock other clients out. 0 is half of MaxConns / HandshakeRate (at
	// least 1); < 0 is no bound of its own (the global one still holds).
	SourceConns, SourceRate int
	// HandshakeShare bounds the share of time the handshakes'
	// cryptography may take (h3gate.go): each runs in a lane, one at a
	// time a lane (one lane per four CPUs), the lane then resting
	// (1-share)/share times as long as the handshake held it; handshakes
	// waiting for a lane are served in turn by source. 0 is
	// DefaultH3HandshakeShare; < 0 or ≥ 1: no gate.
	HandshakeShare float64
	// SourceHandshakeShare bounds one source's share of the lanes' time
	// (an IPv4 address, an IPv6 /64): after its handshake a source rests
	// (1-s)/s times as long as it held the lane, its next handshake
	// waiting while other sources' take the lane. 0 is half of
	// HandshakeShare; < 0: HandshakeShare (none of its own).
	SourceHandshakeShare float64
	// RetryAfter is how many of one source's handshakes may be left
	// unanswered at once (the server's flight sent, nothing back from the
	// client yet) before its new connections are sent a Retry (QUIC's
	// address validation, RFC 9000 §8.1.2): a client that reads the
	// server's packets comes back with the Retry's token within a round
	// trip and is admitted; one that never reads them (a flood of reused
	// ClientHellos) gets no more handshakes, whose key exchange and
	// signature it would have cost the server, nor connections that
	// resend their flights until the handshake timeout. 0 is
	// DefaultH3RetryAfter; < 0: never.
	RetryAfter int
	// IdleTimeout closes a QUIC connection with no packet for this long;
	// 0 is Timeouts.Idle.
	IdleTimeout time.Duration
	// Allow0RTT accepts early data (serve --h3-0rtt): requests a client
	// sends in 0-RTT packets, before the handshake completes, are served
	// at once. They can be replayed by anyone who captured them (RFC 9001
	// §9.2; nothing here guards against it), so it is off unless asked for;
	// without it the session tickets allow no early data.
	Allow0RTT bool
}

// DefaultH3MaxStreams is quic-go's own default (and h2c's, DefaultTimeouts).
const DefaultH3MaxStreams = 100

// DefaultH3MaxConns keeps a flood of idle QUIC connections (~95 KB each
// with their goroutines, measured) within ~100 MB; a benchmark uses a few
// to a few hundred.
const DefaultH3MaxConns = 1000

// DefaultH3HandshakeRate: QUIC handshakes admitted per second. A
// benchmark opens a few hundred connections at its start; a TLS 1.3
// handshake costs the server ~0.3 ms of CPU here, so a flood held to this
// takes at most about a third of a CPU.
const DefaultH3HandshakeRate = 1000

// DefaultH3HandshakeBurst: a second's handshakes may start at once (1,000
// at the default rate, 500 from one source), so a benchmark opening a few
// hundred connections at its start gets them at once. A smaller burst
// shortens what a flood's start costs the open connections (a source's
// 500 handshakes are ~0.3 s of the server's CPU; at --h3-source-rate 100,
// a burst of 10 against 100 took a victim's p99 from 25-138 ms to 5-8 ms
// on the busy VM), but a client's dropped Initials are resent together at
// its probe timeouts (0.3, 0.9, 2.1, 4.5 s), each wave let in only a
// burst's worth: a host opening more than about five bursts of
// connections at once would see some time out. docs/http3.md.
const DefaultH3HandshakeBurst = time.Second

// DefaultH3HandshakeShare: the handshakes' cryptography takes at most a
// tenth of a lane's time (a lane per four CPUs). On the busy 2-CPU VM a
// quarter left a victim's p99 at 3-6x its quiet p99 under a flood at the
// default rates, a tenth at 1-2x; the price is the handshakes' pace, ~100
// a second a lane there (~1 ms of cryptography each), ~300 on a quiet
// CPU: 100 connections opened at once take about a second. docs/http3.md.
const DefaultH3HandshakeShare = 0.1

// DefaultH3RetryAfter: a source's handshakes left unanswered at once
// before its new connections get a Retry. An honest client answers within
// a round trip, so even one opening a few hundred connections at once
// has few unanswered (the handshake gate hands out flights one at a time);
// a flood that never answers held 500 half-open connections (the source's
// cap), each resending its flight until the handshake timeout.
const DefaultH3RetryAfter = 16

// errTooManyConns refuses a QUIC connection past H3.MaxConns.
var errTooManyConns = errors.New("server: HTTP/3 connection limit reached")

// errHandshakeRate refuses a QUIC connection past H3.HandshakeRate.
var errHandshakeRate = errors.New("server: HTTP/3 handshake rate limit reached")

// errSourceLimit refuses a QUIC connection past H3.SourceConns or
// H3.SourceRate.
var errSourceLimit = errors.New("server: HTTP/3 per-source connection limit reached")

// bucket is a token bucket: allow takes a token if one is left, tokens
// refilling at rate per second up to burst.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// burstOf is how many tokens a bucket of rate per second holds when it
// holds d's worth: at least one.
func burstOf(rate int, d time.Duration) float64 {
	return max(1, float64(rate)*d.Seconds())
}

func newBucket(rate int, burst time.Duration) *bucket {
	if rate <= 0 {
		return nil
	}
	b := burstOf(rate, burst)
	return &bucket{rate: float64(rate), burst: b, tokens: b}
}

// allow reports whether a handshake may start at now; a nil bucket always.
func (b *bucket) allow(now time.Time) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// sourceKey is a client's source for the per-source bounds: its IPv4
// address, or the /64 of its IPv6 one (a host is usually given a whole
// /64).
func sourceKey(a net.Addr) netip.Prefix {
	ua, ok := a.(*net.UDPAddr)
	if !ok {
		return netip.Prefix{}
	}
	ip, _ := netip.AddrFromSlice(ua.IP)
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// source is what the per-source bounds keep of one source: its open
// connections, its handshake tokens, and its credits: tokens the socket
// filter took for Initials it let through, which quic-go's ConnContext
// spends rather than taking another (at most creditMax, so those that
// never reached ConnContext — a resent Initial of a connection quic-go
// already had — are not saved up without end).
type source struct {
	open     int
	credit   int
	tokens   float64
	last     time.Time
	credited time.Time // the last credit's
}

// sources applies H3.SourceConns and H3.SourceRate. A source holding no
// connection and a full bucket is forgotten, so the map holds at most the
// sources with a connection open (≤ MaxConns) and those admitted within
// the last second (≤ HandshakeRate): a flood of addresses never grows it
// past those.
type sources struct {
	mu    sync.Mutex
	conns int     // per source; < 0: none
	rate  float64 // per second per source; <= 0: none
	burst float64 // tokens a source's bucket holds
	// creditMax bounds a source's credits: at least the most handshakes
	// that can be let through at once (a burst, its own or the global
	// one's) before quic-go admits the first, and 64 for a server slow to
	// get to them (a credit lost to the cap makes quic-go charge and
	// likely refuse a connection the filter let through). A credit stands
	// for a token already taken, so more of them never admit more than
	// the rates.
	creditMax int
	m         map[netip.Prefix]*source
	swept     time.Time
}

const minCredits = 64

func newSources(conns, rate int, burst time.Duration) *sources {
	s := &sources{conns: conns, rate: float64(rate), burst: burstOf(rate, burst), m: map[netip.Prefix]*source{}}
	if rate <= 0 {
		s.rate, s.burst = 0, 0
	}
	s.creditMax = max(minCredits, int(s.burst))
	return s
}

// refill brings src's tokens to now.
func (s *sources) refill(src *source, now time.Time) {
	src.tokens = min(s.burst, src.tokens+now.Sub(src.last).Seconds()*s.rate)
	src.last = now
}

// get returns key's source, refilled to now; nil if it is not recorded.
func (s *sources) get(key netip.Prefix, now time.Time) *source {
	src := s.m[key]
	if src != nil {
		s.refill(src, now)
	}
	return src
}

// record returns key's source, recording it (a full bucket) if it is not.
// A source is recorded only once admitted, so a flood from many addresses
// refused by the global bounds adds nothing here.
func (s *sources) record(key netip.Prefix, src *source, now time.Time) *source {
	if src == nil {
		src = &source{tokens: s.burst, last: now}
		s.m[key] = src
	}
	return src
}

// reserve takes a handshake token of key's source at now, and then next's
// (the global rate), for the socket filter, and leaves it as a credit on
// the source; else it returns errSourceLimit or next's error and takes
// nothing. A source holding all its connections still passes: quic-go
// refuses it CONNECTION_REFUSED, which a client over its cap learns from
// at once (dropped, it would wait out its handshake timeout); the sealed
// refusals cost ~3% of a CPU while a flood of half-open handshakes held a
// source's 500.
func (s *sources) reserve(key netip.Prefix, now time.Time, next func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.get(key, now)
	if src != nil && s.rate > 0 && src.tokens < 1 {
		return errSourceLimit
	}
	if err := next(); err != nil {
		return err
	}
	src = s.record(key, src, now)
	if s.rate > 0 {
		src.tokens--
	}
	src.credit = min(src.credit+1, s.creditMax)
	src.credited = now
	s.sweep(now)
	return nil
}

// admit counts one more connection of key at now if its source's bounds
// allow it and then next (the global bounds) does; else it returns
// errSourceLimit or next's error, and nothing is counted. A source with a
// credit (its Initial passed the socket filter, which took the tokens)
// spends it, whatever the answer, and next is told so: the rates are not
// charged twice. Without one (no filter, or an Initial that slipped past
// it) the tokens are taken here.
func (s *sources) admit(key netip.Prefix, now time.Time, next func(credited bool) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.get(key, now)
	credited := src != nil && src.credit > 0
	if credited {
		src.credit--
	}
	if src != nil {
		if (s.conns >= 0 && src.open >= s.conns) || (!credited && s.rate > 0 && src.tokens < 1) {
			return errSourceLimit
		}
	}
	if err := next(credited); err != nil {
		return err
	}
	src = s.record(key, src, now)
	if s.rate > 0 && !credited {
		src.tokens--
	}
	src.open++
	s.sweep(now)
	return nil
}

// openOf is how many connections of key are open, handshakes included.
func (s *sources) openOf(key netip.Prefix) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src := s.m[key]; src != nil {
		return src.open
	}
	return 0
}

// release uncounts a connection of key that closed.
func (s *sources) release(key netip.Prefix) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src := s.m[key]; src != nil {
		src.open--
	}
}

// sweep forgets, at most once a second, the sources with no connection
// whose bucket has refilled and no credit from the last second (a credit
// is spent within a packet's trip through quic-go; one older was for an
// Initial that never reached ConnContext).
func (s *sources) sweep(now time.Time) {
	if now.Sub(s.swept) < time.Second {
		return
	}
	s.swept = now
	for k, src := range s.m {
		if src.open > 0 || (src.credit > 0 && now.Sub(src.credited) < time.Second) {
			continue
		}
		if s.rate > 0 {
			s.refill(src, now)
			if src.tokens < s.burst {
				continue
			}
		}
		delete(s.m, k)
	}
}

// h3Face is the running HTTP/3 listener and its counters.
type h3Face struct {
	srv *http3.Server
	pc  *net.UDPConn
	tr  *quic.Transport
	ln  *quic.EarlyListener
	// open counts the connections from their first packet until closed
	// (or their handshake failed); refused the Initial packets turned
	// away past max (a ClientHello can span two, and is retransmitted).
	max     int64
	open    atomic.Int64
	refused atomic.Uint64
	// handshakes admits new connections at H3.HandshakeRate (nil:
	// unbounded); rateRefused counts the Initial packets it turned away.
	handshakes  *bucket
	rateRefused atomic.Uint64
	// perSource applies H3.SourceConns and H3.SourceRate; sourceRefused
	// counts the Initial packets it turned away.
	perSource     *sources
	sourceRefused atomic.Uint64
	// cids are the server's connection IDs, recognisable by the socket
	// filter (nil: no filter); dropped* count the Initial packets it
	// dropped without a reply: past a source's rate, past the global
	// rate, and those quic-go would drop too (short, or a first Initial
	// with too short a Destination Connection ID).
	cids                                       *cidGen
	droppedSource, droppedRate, droppedInvalid atomic.Uint64
	droppedQueue                               atomic.Uint64 // while the source's handshakes queue for the gate
	droppedRetry                               atomic.Uint64 // past a silent source's bucket of Retries
	// gate runs the handshakes' cryptography in its lanes (nil: no gate).
	gate *hsGate
	// silent counts each source's handshakes whose server flight is out
	// and whose client has not answered; past retryAfter (0: never) the
	// source's new connections are sent a Retry, counted in retries.
	silent     silentSources
	retryAfter int
	retries    atomic.Uint64
	// shares are the sources' shares of the reply budget, the TCP
	// faces' too: a source holds one share whatever its transports.
	shares *replyShares
	// requests counts requests answered over HTTP/3 (every route); conns
	// the QUIC connections accepted; resumed and early those whose
	// handshake resumed a session and those whose early data was accepted
	// (counted when their handshake completes).
	requests, conns, resumed, early atomic.Uint64
}

// silentSources counts each source's unanswered handshakes, and keeps a
// bucket of Retries for each source with some.
type silentSources struct {
	mu  sync.Mutex
	m   map[netip.Prefix]*silentSource
	all int
}

type silentSource struct {
	n      int
	tokens float64 // Retries left; refilled at retryRate a second
	last   time.Time
}

// retryRate bounds the Retries sent to one source while it is past
// --h3-retry-after (retryBurst of them at once): a source that leaves its
// handshakes unanswered has not followed its Retries either, and each
// costs a sealed token and a sendmsg here and a read there (the flood of
// reused ClientHellos got two a connection, ~6,800 in 6 s, its reading
// them on the victim's CPU); past it the filter drops its new
// connections' Initials unanswered. A real client behind the same
// address resends its Initial at its probe timeout and gets one of them.
const (
	retryRate  = 100
	retryBurst = 10
)

func (s *silentSources) add(key netip.Prefix, d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[netip.Prefix]*silentSource{}
	}
	s.all += d
	src := s.m[key]
	if src == nil {
		src = &silentSource{tokens: retryBurst}
		s.m[key] = src
	}
	if src.n += d; src.n <= 0 {
		delete(s.m, key)
	}
}

func (s *silentSources) of(key netip.Prefix) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src := s.m[key]; src != nil {
		return src.n
	}
	return 0
}

// retry reports whether a new connection of key at now is to be sent a
// Retry (its source has after handshakes unanswered) and, if so, whether
// one is left in its bucket (taken).
func (s *silentSources) retry(key netip.Prefix, after int, now time.Time) (retry, allowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.m[key]
	if src == nil || src.n < after {
		return false, false
	}
	if !src.last.IsZero() {
		src.tokens = min(retryBurst, src.tokens+now.Sub(src.last).Seconds()*retryRate)
	}
	src.last = now
	if src.tokens < 1 {
		return true, false
	}
	src.tokens--
	return true, true
}

func (s *silentSources) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all
}

// newH3 opens the UDP socket; serve starts it.
func newH3(o H3, cert tls.Certificate, t Timeouts, shares *replyShares) (*h3Face, error) {
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultH3MaxStreams
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = t.Idle
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultH3MaxConns
	}
	if o.HandshakeRate == 0 {
		o.HandshakeRate = DefaultH3HandshakeRate
	}
	if o.SourceConns == 0 {
		o.SourceConns = max(o.MaxConns/2, 1)
	}
	if o.SourceRate == 0 {
		o.SourceRate = max(o.HandshakeRate/2, 1) // -1 (unbounded) too: half of nothing is nothing
		if o.HandshakeRate < 0 {
			o.SourceRate = -1
		}
	}
	if o.HandshakeBurst <= 0 {
		o.HandshakeBurst = DefaultH3HandshakeBurst
	}
	if o.HandshakeShare == 0 {
		o.HandshakeShare = DefaultH3HandshakeShare
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = DefaultH3RetryAfter
	}
	f := &h3Face{max: int64(o.MaxConns), handshakes: newBucket(o.HandshakeRate, o.HandshakeBurst),
		perSource: newSources(o.SourceConns, o.SourceRate, o.HandshakeBurst), retryAfter: max(o.RetryAfter, 0), shares: shares}
	if f.handshakes != nil {
		f.perSource.creditMax = max(f.perSource.creditMax, int(f.handshakes.burst))
	}
	ua, err := net.ResolveUDPAddr("udp", o.Addr)
	if err == nil {
		f.pc, err = net.ListenUDP("udp", ua)
	}
	if err != nil {
		return nil, fmt.Errorf("server: HTTP/3 listen: %w", err)
	}
	// Our own Transport, not http3.Server.Serve's: its ConnContext sees a
	// connection at its first packet, so the cap holds for handshakes in
	// progress too and a refusal costs no cryptography. With a rate to
	// keep, quic-go reads through the Initial filter, the first line.
	f.tr = &quic.Transport{Conn: f.pc, ConnContext: f.admit}
	if f.retryAfter > 0 {
		f.tr.VerifySourceAddress = f.retry
	}
	if !o.NoInitialFilter && (o.HandshakeRate > 0 || o.SourceRate > 0) {
		f.cids = newCIDGen()
		f.tr.Conn = newInitialFilter(f.pc, f)
		f.tr.ConnectionIDGenerator = f.cids
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	if o.HandshakeShare > 0 && o.HandshakeShare < 1 {
		src := o.SourceHandshakeShare
		switch {
		case src == 0:
			src = o.HandshakeShare / 2
		case src < 0 || src > o.HandshakeShare:
			src = o.HandshakeShare
		}
		f.gate = newHSGate(o.HandshakeShare, src, gateLanes(), t.ReadHeader)
		f.gate.others = func() bool { return f.open.Load() > 1 }
		f.gate.alone = func(key netip.Prefix) bool { return f.open.Load() <= int64(f.perSource.openOf(key)) }
		tlsConf = gateTLS(tlsConf, f.gate)
	}
	tlsConf = http3.ConfigureTLSConfig(tlsConf)
	f.ln, err = f.tr.ListenEarly(tlsConf, &quic.Config{
		MaxIncomingStreams:   int64(o.MaxStreams),
		MaxIdleTimeout:       o.IdleTimeout,
		HandshakeIdleTimeout: t.ReadHeader,
		Allow0RTT:            o.Allow0RTT, // off by default: a replayable request is not what a benchmark of the API measures
	})
	if err != nil {
		f.pc.Close()
		return nil, fmt.Errorf("server: HTTP/3 listen: %w", err)
	}
	f.srv = &http3.Server{
		IdleTimeout:    o.IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			f.conns.Add(1)
			// Accepted once the server has its client's transport
			// parameters, in its first flight: from here until the client's
			// Finished the handshake waits on the client.
			key := sourceKey(c.RemoteAddr())
			f.silent.add(key, 1)
			go func() {
				defer f.silent.add(key, -1)
				select {
				case <-c.HandshakeComplete():
					st := c.ConnectionState()
					if st.TLS.DidResume {
						f.resumed.Add(1)
					}
					if st.Used0RTT {
						f.early.Add(1)
					}
				case <-c.Context().Done():
				}
			}()
			// The connection's share of the reply budget: a client that
			// opens many streams and reads none holds one large reply;
			// and its source's, shared by the source's connections over
			// every transport: one that opens many connections holds a
			// few.
			return httpapi.WithConnection(ctx, f.shares.get(sourceKey(c.RemoteAddr())))
		},
	}
	return f, nil
}

// admit counts a new connection, or refuses it past a bound: its
// source's first (a source past its share takes nothing of the global
// budget), then the handshake rate, then the cap. The counts drop
// when the connection's context ends (closed, or its handshake failed).
func (f *h3Face) admit(ctx context.Context, ci *quic.ClientInfo) (context.Context, error) {
	now := time.Now()
	key := sourceKey(ci.RemoteAddr)
	err := f.perSource.admit(key, now, func(credited bool) error {
		if !credited && !f.handshakes.allow(now) {
			f.rateRefused.Add(1)
			return errHandshakeRate
		}
		if f.open.Add(1) > f.max {
			f.open.Add(-1)
			f.refused.Add(1)
			return errTooManyConns
		}
		return nil
	})
	if err != nil {
		if err == errSourceLimit {
			f.sourceRefused.Add(1)
		}
		return nil, err
	}
	context.AfterFunc(ctx, func() { f.open.Add(-1); f.perSource.release(key) })
	return context.WithValue(ctx, gateKey{}, key), nil
}

// retry is the transport's VerifySourceAddress, asked of a new
// connection's Initial without a token: a Retry while its source has
// retryAfter handshakes unanswered.
func (f *h3Face) retry(from net.Addr) bool {
	if f.silent.of(sourceKey(from)) < f.retryAfter {
		return false
	}
	f.retries.Add(1)
	return true
}

// reserve takes the handshake tokens of a new connection from from at now
// (its source's, then the global rate's) for the socket filter; else it
// returns errSourceLimit or errHandshakeRate, or errGateQueue while
// gateSourceQueue of the source's handshakes wait for the gate.
func (f *h3Face) reserve(from net.Addr, now time.Time) error {
	key := sourceKey(from)
	if f.gate != nil && f.gate.waitingOf(key) >= gateSourceQueue {
		return errGateQueue
	}
	return f.perSource.reserve(key, now, func() error {
		if !f.handshakes.allow(now) {
			return errHandshakeRate
		}
		return nil
	})
}

// serve serves h (the REST port's routing table) with the per-request
// deadlines of t, until Close or Shutdown.
func (f *h3Face) serve(h http.Handler, t Timeouts) error {
	f.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As on TCP (netphases.go): a request's body within Read, its
		// reply within Write; the streams extend both (streamapi).
		now := time.Now()
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(now.Add(t.Read))
		_ = rc.SetWriteDeadline(now.Add(t.Write))
		h.ServeHTTP(w, r)
		f.requests.Add(1)
	})
	return f.srv.ServeListener(f.ln)
}

// close and shutdown end the listener too: http3.Server leaves a
// listener it was given to its owner.
func (f *h3Face) close() error {
	f.closeGate()
	return errors.Join(f.srv.Close(), f.ln.Close(), f.tr.Close(), f.pc.Close())
}

func (f *h3Face) shutdown(ctx context.Context) error {
	f.closeGate()
	return errors.Join(f.srv.Shutdown(ctx), f.ln.Close(), f.tr.Close(), f.pc.Close())
}

// closeGate fails the handshakes waiting for a lane: their connections'
// goroutines wait in crypto/tls, where quic-go's close cannot reach them.
func (f *h3Face) closeGate() {
	if f.gate != nil {
		f.gate.close()
	}
}

// withMetrics appends the HTTP/3 counters to next's /metrics (on every
// listener: a scrape over TCP sees them too).
func (f *h3Face) withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			next.ServeHTTP(w, r)
			return
		}
		appendMetrics(w, r, next, f.appendCounters)
	})
}

func (f *h3Face) appendCounters(b []byte) []byte {
	const req, conn = "wirebench_h3_requests_total", "wirebench_h3_connections_total"
	b = promtext.AppendHeader(b, req, "Requests answered on the HTTP/3 listener, every route.", promtext.Counter)
	b = promtext.AppendUint(b, req, f.requests.Load())
	b = promtext.AppendHeader(b, conn, "QUIC connections accepted by the HTTP/3 listener (handshake complete).", promtext.Counter)
	b = promtext.AppendUint(b, conn, f.conns.Load())
	const resumed, early = "wirebench_h3_resumed_connections_total", "wirebench_h3_0rtt_connections_total"
	b = promtext.AppendHeader(b, resumed, "QUIC connections whose handshake resumed a TLS session.", promtext.Counter)
	b = promtext.AppendUint(b, resumed, f.resumed.Load())
	b = promtext.AppendHeader(b, early, "QUIC connections whose 0-RTT early data was accepted (serve --h3-0rtt).", promtext.Counter)
	b = promtext.AppendUint(b, early, f.early.Load())
	const open, refused = "wirebench_h3_open_connections", "wirebench_h3_refused_initials_total"
	b = promtext.AppendHeader(b, open, "QUIC connections open now, handshakes in progress included (at most serve --h3-max-conns).", promtext.Gauge)
	b = promtext.AppendUint(b, open, uint64(max(f.open.Load(), 0)))
	b = promtext.AppendHeader(b, refused, "Initial packets of new QUIC connections refused past serve --h3-max-conns (CONNECTION_REFUSED); one handshake can send several.", promtext.Counter)
	b = promtext.AppendUint(b, refused, f.refused.Load())
	const rateRefused = "wirebench_h3_rate_refused_initials_total"
	b = promtext.AppendHeader(b, rateRefused, "Initial packets of new QUIC connections refused past serve --h3-handshake-rate per second (CONNECTION_REFUSED).", promtext.Counter)
	b = promtext.AppendUint(b, rateRefused, f.rateRefused.Load())
	const sourceRefused = "wirebench_h3_source_refused_initials_total"
	b = promtext.AppendHeader(b, sourceRefused, "Initial packets of new QUIC connections refused past serve --h3-source-conns or --h3-source-rate, one source's share (CONNECTION_REFUSED).", promtext.Counter)
	b = promtext.AppendUint(b, sourceRefused, f.sourceRefused.Load())
	const dropped = "wirebench_h3_dropped_initials_total"
	b = promtext.AppendHeader(b, dropped, "Initial packets of new QUIC connections dropped without a reply by the socket filter, before quic-go: past serve --h3-source-rate (source), past --h3-handshake-rate (rate), malformed (invalid), while the source's handshakes queue for the handshake gate (queue), or past a source's Retries while it leaves --h3-retry-after handshakes unanswered (retry).", promtext.Counter)
	b = promtext.AppendUint(b, dropped, f.droppedSource.Load(), "reason", "source")
	b = promtext.AppendUint(b, dropped, f.droppedRate.Load(), "reason", "rate")
	b = promtext.AppendUint(b, dropped, f.droppedInvalid.Load(), "reason", "invalid")
	b = promtext.AppendUint(b, dropped, f.droppedQueue.Load(), "reason", "queue")
	b = promtext.AppendUint(b, dropped, f.droppedRetry.Load(), "reason", "retry")
	const silent, retries = "wirebench_h3_silent_handshakes", "wirebench_h3_retries_total"
	b = promtext.AppendHeader(b, silent, "QUIC handshakes whose server flight is out and whose client has not answered yet.", promtext.Gauge)
	b = promtext.AppendUint(b, silent, uint64(max(f.silent.total(), 0)))
	b = promtext.AppendHeader(b, retries, "Initial packets answered with a Retry: their source had serve --h3-retry-after handshakes unanswered.", promtext.Counter)
	b = promtext.AppendUint(b, retries, f.retries.Load())
	if f.gate == nil {
		return b
	}
	const waiting, queued, lane = "wirebench_h3_handshakes_waiting", "wirebench_h3_handshakes_queued_total", "wirebench_h3_handshake_lane_seconds_total"
	b = promtext.AppendHeader(b, waiting, "QUIC handshakes waiting now for a lane of the handshake gate (serve --h3-handshake-share).", promtext.Gauge)
	b = promtext.AppendUint(b, waiting, uint64(max(f.gate.waiting.Load(), 0)))
	b = promtext.AppendHeader(b, queued, "QUIC handshakes that waited for a lane of the handshake gate.", promtext.Counter)
	b = promtext.AppendUint(b, queued, f.gate.queued.Load())
	b = promtext.AppendHeader(b, lane, "Time the handshake gate's lanes were held by a handshake's cryptography (held) and rested after it (rested).", promtext.Counter)
	b = promtext.AppendFloat(b, lane, time.Duration(f.gate.heldNs.Load()).Seconds(), "state", "held")
	return promtext.AppendFloat(b, lane, time.Duration(f.gate.restedNs.Load()).Seconds(), "state", "rested")
}
