package resp

import (
	"github.com/wirebench/wirebench/kv/access"
)

// Guard is access control and replication for RESP.
type Guard struct {
	// Password, when set, is required (AUTH [default] PASSWORD or HELLO
	// AUTH default PASSWORD) before any command but AUTH, HELLO and QUIT:
	// -NOAUTH before it, as redis-server with requirepass.
	Password string
	// Limiter, when set, limits each client's commands (an error reply).
	Limiter *access.Limiter
	// ReadOnly, when it returns true, refuses write commands with Redis's
	// -READONLY (a replica).
	ReadOnly func() bool
	// Info is the "# Replication" section of INFO.
	Info func() string
}

// ErrRateLimited is the reply to a command over the client's rate limit.
const ErrRateLimited = "ERR rate limit exceeded for this client, retry later"

// writeCommand reports whether a command is refused on a replica. (A
// switch, not a map made at init: no heap kept for it in every process.)
func writeCommand(name string) bool {
	switch name {
	case "set", "getdel", "append", "incr", "decr", "incrby", "decrby",
		"del", "unlink", "mset", "expire", "pexpire", "persist",
		"flushall", "flushdb":
		return true
	}
	return false
}

// noAuth reports whether a client may send a command before authenticating.
func noAuth(name string) bool {
	switch name {
	case "auth", "hello", "quit":
		return true
	}
	return false
}

// admit applies the password and the read-only switch to a known command
// of the right arity (Exec applied the rate limit before the lookup, as
// redis-server checks existence and arity before authentication); false
// when it replied.
func (s *Session) admit(c *command) bool {
	g := &s.srv.opts.Guard
	if g.Password != "" && !s.authed && !noAuth(c.name) {
		s.r.err("NOAUTH Authentication required.")
		return false
	}
	if g.ReadOnly != nil && writeCommand(c.name) && g.ReadOnly() { // no lookup without a switch
		s.r.err("READONLY You can't write against a read only replica.")
		return false
	}
	return true
}

// auth checks a user and password: with no password configured any
// password of "default" passes (redis-server's nopass user).
func (s *Session) auth(user, pass []byte) bool {
	want := s.srv.opts.Guard.Password
	if string(user) != "default" {
		return false
	}
	if want == "" || access.TokenOK(string(pass), want) {
		s.authed = true
		return true
	}
	return false
}

func (s *Session) role() string {
	if g := s.srv.opts.Guard; g.ReadOnly != nil && g.ReadOnly() {
		return "replica"
	}
	return "master"
}

func (s *Session) replInfo() string {
	if f := s.srv.opts.Guard.Info; f != nil {
		return f()
	}
	return "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"
}
