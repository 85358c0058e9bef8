package server

import (
	"context"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"weak"

	"github.com/wirebench/wirebench/httpapi"
)

// replyShares keeps one httpapi.Source per client source (an IPv4
// address, an IPv4-mapped IPv6 one read as IPv4, an IPv6 /64) for all of
// a server's connections: HTTP/1.1 and h2, in clear or TLS, and HTTP/3.
// A client opening many connections and reading none of its large
// replies holds its source's share of the reply budget, not the budget;
// one table for every transport, so that a host using TCP and QUIC at
// once holds one share, not one per transport. net/http tells a
// connection's start (ConnContext) but not its end, so a source is
// remembered only while something references it — one of its
// connections' contexts, or the timer of a reply it dropped unread that
// still counts (closing its connections and dialing new ones must not
// start it afresh) —: weakly here, dropped once the collector finds it
// unreferenced.
type replyShares struct {
	mu sync.Mutex
	m  map[netip.Prefix]weak.Pointer[httpapi.Source]
}

// connContext is the net/http server's ConnContext: the connection's
// share of the reply budget and its source's.
func (s *replyShares) connContext(ctx context.Context, c net.Conn) context.Context {
	return httpapi.WithTCPConnection(ctx, s.get(tcpSourceKey(c.RemoteAddr())))
}

// get returns key's share, made if none is referenced.
func (s *replyShares) get(key netip.Prefix) *httpapi.Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src := s.m[key].Value(); src != nil {
		return src
	}
	if s.m == nil {
		s.m = map[netip.Prefix]weak.Pointer[httpapi.Source]{}
	}
	src := httpapi.NewSource()
	wp := weak.Make(src)
	s.m[key] = wp
	runtime.AddCleanup(src, s.forget, sourceEntry{key, wp})
	return src
}

type sourceEntry struct {
	key netip.Prefix
	wp  weak.Pointer[httpapi.Source]
}

// forget drops e's entry unless a newer share replaced it.
func (s *replyShares) forget(e sourceEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[e.key] == e.wp {
		delete(s.m, e.key)
	}
}

// tcpSourceKey is sourceKey for a TCP peer.
func tcpSourceKey(a net.Addr) netip.Prefix {
	if ta, ok := a.(*net.TCPAddr); ok {
		return sourceKey(&net.UDPAddr{IP: ta.IP})
	}
	return netip.Prefix{}
}
