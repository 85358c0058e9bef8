// Package access is the KV faces' access control: a shared secret
// (--auth-token: HTTP "Authorization: Bearer", RESP AUTH) and a per-client
// token-bucket rate limit (--rate-limit).
package access

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// TokenOK compares a presented secret with the configured one in
// constant time (no timing hint of how much of a guess was right).
func TokenOK(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// BearerOK reports whether r carries "Authorization: Bearer want"; an
// empty want accepts every request.
func BearerOK(r *http.Request, want string) bool {
	if want == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) < len(p) || !strings.EqualFold(h[:len(p)], p) {
		return false
	}
	return TokenOK(strings.TrimSpace(h[len(p):]), want)
}

// ClientOf is the rate limit's client: the remote IP without the port
// (one client's connections share its bucket).
func ClientOf(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// MaxClients bounds the limiter's table; when it is full of clients
// active in the last IdleAfter, a new client is refused until one idles.
const (
	MaxClients = 65536
	IdleAfter  = time.Minute
)

type bucket struct {
	tokens float64
	last   time.Time
}

// Limiter is a token bucket per client: Rate requests a second on
// average, bursts of up to Burst. Safe for concurrent use.
type Limiter struct {
	rate, burst float64
	now         func() time.Time
	mu          sync.Mutex
	m           map[string]*bucket
}

// NewLimiter returns a limiter of rate per second with bursts of burst
// (rate when burst < 1); nil when rate <= 0 (no limit).
func NewLimiter(rate float64, burst int) *Limiter {
	if rate <= 0 {
		return nil
	}
	b := float64(burst)
	if b < 1 {
		b = max(rate, 1)
	}
	return &Limiter{rate: rate, burst: b, now: time.Now, m: map[string]*bucket{}}
}

// Allow takes one token of client's bucket; false when it is empty. A
// nil Limiter allows everything.
func (l *Limiter) Allow(client string) bool {
	if l == nil {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[client]
	if b == nil {
		if len(l.m) >= MaxClients {
			for k, o := range l.m {
				if now.Sub(o.last) > IdleAfter {
					delete(l.m, k)
				}
			}
			if len(l.m) >= MaxClients {
				return false
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.m[client] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
