package repl

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// Options configures a server's replication role.
type Options struct {
	// ReplicaOf is the leader's HTTP base URL; "" makes this server a
	// leader.
	ReplicaOf string
	// Token is the leader's --auth-token, sent by a follower.
	Token string
	// Name identifies a follower to its leader (its HTTP address).
	Name string
	// Backlog is a leader's backlog in bytes (DefaultBacklog when 0).
	Backlog int64
	// Logf receives replication messages; nil discards them.
	Logf func(format string, args ...any)
	// OnApply is FollowerOptions.OnApply (tests).
	OnApply func(pos Position, snapshot bool)
	// MaxBackoff is FollowerOptions.MaxBackoff (tests shorten it).
	MaxBackoff time.Duration
}

// Node is one server's role: a leader (every server that is not a
// replica; it costs one copy of each change's record in the backlog) or
// a follower.
type Node struct {
	o        Options
	Leader   *Leader
	Follower *Follower
	st       atomic.Pointer[kv.Store] // set by Start; the HTTP server may run before
	once     sync.Once
}

// New returns the node of o; call Tap before opening the store and Start
// after.
func New(o Options) *Node {
	n := &Node{o: o}
	if o.ReplicaOf == "" {
		n.Leader = NewLeader(o.Backlog)
	}
	return n
}

// Tap is the store's kv.Tap: the leader, or nil on a follower.
func (n *Node) Tap() kv.Tap {
	if n.Leader == nil {
		return nil
	}
	return n.Leader
}

// Start begins replicating into st (a follower) or serving st's
// history; name identifies a follower to its leader when Options.Name is
// empty (the server's HTTP address).
func (n *Node) Start(st *kv.Store, name string) error {
	n.st.Store(st)
	if n.o.Name == "" {
		n.o.Name = name
	}
	if n.o.ReplicaOf == "" {
		return nil
	}
	f, err := StartFollower(st, FollowerOptions{Leader: n.o.ReplicaOf, Token: n.o.Token, Name: n.o.Name, Logf: n.o.Logf, OnApply: n.o.OnApply, MaxBackoff: n.o.MaxBackoff})
	if err != nil {
		return err
	}
	n.Follower = f
	return nil
}

// ReadOnly reports whether clients' writes are refused (a follower).
func (n *Node) ReadOnly() bool { return n.o.ReplicaOf != "" }

// Handler serves PathPrefix: the leader's routes, or 404 on a follower.
func (n *Node) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := n.st.Load()
		if n.Leader != nil && st != nil {
			n.Leader.Handler(st).ServeHTTP(w, r)
			return
		}
		if n.Leader != nil {
			jsonError(w, http.StatusServiceUnavailable, map[string]any{"error": "replication is starting"})
			return
		}
		jsonError(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("this server is a replica of %s and serves no replication routes", n.o.ReplicaOf)})
	})
}

// Info is the "# Replication" section of INFO.
func (n *Node) Info() string {
	if n.Follower != nil {
		return n.Follower.Info()
	}
	if n.Leader != nil {
		return n.Leader.Info()
	}
	return "# Replication\r\nrole:slave\r\n"
}

// Metrics are the replication lines of /metrics.
func (n *Node) Metrics() []byte {
	if n.Follower != nil {
		return n.Follower.Metrics()
	}
	if n.Leader != nil {
		return n.Leader.Metrics()
	}
	return nil
}

// Close stops a follower (before its store is closed) and ends a
// leader's streams (an HTTP shutdown does not wait for them). Idempotent.
func (n *Node) Close() {
	n.once.Do(func() {
		if n.Follower != nil {
			n.Follower.Close()
		}
		if n.Leader != nil {
			n.Leader.Close()
		}
	})
}
