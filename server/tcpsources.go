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

// tcpSources keeps one httpapi.Source per client source (an IPv4
// address, an IPv6 /64) of a net/http server's connections, so that a
// client opening many HTTP/1.1 or h2 connections and reading none of its
// large replies holds its source's share of the reply budget, not the
// budget (the same rule as HTTP/3's, h3.go). net/http tells a
// connection's start (ConnContext) but not its end, so a source is
// remembered only while one of its connections' contexts references it:
// weakly here, dropped once the collector finds it unreferenced.
type tcpSources struct {
	mu sync.Mutex
	m  map[netip.Prefix]weak.Pointer[httpapi.Source]
}

// connContext is the net/http server's ConnContext: the connection's
// share of the reply budget and its source's.
func (s *tcpSources) connContext(ctx context.Context, c net.Conn) context.Context {
	return httpapi.WithTCPConnection(ctx, s.get(tcpSourceKey(c.RemoteAddr())))
}

// get returns key's share, made if none is referenced.
func (s *tcpSources) get(key netip.Prefix) *httpapi.Source {
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
func (s *tcpSources) forget(e sourceEntry) {
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
