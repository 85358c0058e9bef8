package resp

import (
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/access"
)

func guarded(t *testing.T, g Guard, engine string) *client {
	t.Helper()
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := Listen("127.0.0.1:0", st, Options{Guard: g, Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return dial(t, srv.Addr())
}

// argsFor is a call of c with its minimal arity (the guard answers before
// the arguments are looked at).
func argsFor(c *command) []string {
	n := c.arity
	if n < 0 {
		n = -n
	}
	args := []string{c.name}
	for len(args) < n {
		args = append(args, "k")
	}
	return args
}

func sortedCommands() []*command {
	var cs []*command
	for _, c := range commands() {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return cs
}

// TestAuthEveryCommand: with a password, every command but AUTH, HELLO
// and QUIT answers -NOAUTH until the client authenticates, on both
// engines; a wrong password is WRONGPASS and does not authenticate.
func TestAuthEveryCommand(t *testing.T) {
	for _, engine := range []string{EngineOwn, EngineRedcon} {
		c := guarded(t, Guard{Password: "pw"}, engine)
		n := 0
		for _, cmd := range sortedCommands() {
			if noAuth(cmd.name) {
				continue
			}
			n++
			if got := c.do(t, argsFor(cmd)...); got != "-NOAUTH Authentication required." {
				t.Errorf("%s: %s without AUTH: %s", engine, cmd.name, got)
			}
		}
		if n < 30 {
			t.Fatalf("only %d commands checked", n)
		}
		for _, tc := range [][]string{{"AUTH", "nope"}, {"AUTH", "default", "nope"}, {"AUTH", "alice", "pw"}} {
			if got := c.do(t, tc...); !strings.HasPrefix(got, "-WRONGPASS") {
				t.Errorf("%s: %q: %s", engine, tc, got)
			}
		}
		if got := c.do(t, "GET", "k"); got != "-NOAUTH Authentication required." {
			t.Errorf("%s: a wrong password authenticated: %s", engine, got)
		}
		if got := c.do(t, "HELLO", "3"); !strings.HasPrefix(got, "-NOAUTH HELLO must be called") {
			t.Errorf("%s: HELLO without AUTH: %s", engine, got)
		}
		if got := c.do(t, "AUTH", "pw"); got != "+OK" {
			t.Fatalf("%s: AUTH pw: %s", engine, got)
		}
		if got := c.do(t, "SET", "k", "v"); got != "+OK" {
			t.Errorf("%s: SET after AUTH: %s", engine, got)
		}
		c2 := guarded(t, Guard{Password: "pw"}, engine)
		if got := c2.do(t, "HELLO", "2", "AUTH", "default", "pw"); !strings.HasPrefix(got, "[") {
			t.Errorf("%s: HELLO AUTH: %s", engine, got)
		}
		if got := c2.do(t, "GET", "k"); got != "nil" {
			t.Errorf("%s: GET after HELLO AUTH: %s", engine, got)
		}
	}
	// Without a password AUTH keeps redis-server's nopass answers.
	c := guarded(t, Guard{}, EngineOwn)
	if got := c.do(t, "AUTH", "x"); got != "-"+errNoPass {
		t.Errorf("AUTH without a password configured: %s", got)
	}
	if got := c.do(t, "AUTH", "default", "anything"); got != "+OK" {
		t.Errorf("AUTH default anything, nopass: %s", got)
	}
}

// TestReadOnlyEveryWrite: a replica refuses each write command with
// -READONLY and serves the rest.
func TestReadOnlyEveryWrite(t *testing.T) {
	ro := true
	c := guarded(t, Guard{ReadOnly: func() bool { return ro }, Info: func() string { return "# Replication\r\nrole:slave\r\n" }}, EngineOwn)
	for _, cmd := range sortedCommands() {
		if cmd.name == "quit" {
			continue
		}
		got := c.do(t, argsFor(cmd)...)
		isRO := got == "-READONLY You can't write against a read only replica."
		if isRO != writeCommand(cmd.name) {
			t.Errorf("%s on a replica: %s", cmd.name, got)
		}
	}
	if got := c.do(t, "INFO", "replication"); !strings.Contains(got, "role:slave") {
		t.Errorf("INFO replication: %s", got)
	}
	ro = false
	if got := c.do(t, "SET", "k", "v"); got != "+OK" {
		t.Errorf("SET once writable: %s", got)
	}
}

// TestRateLimit: past its burst a client's commands are refused, its
// connections sharing one bucket.
func TestRateLimit(t *testing.T) {
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// 1 command a second with a burst of 3: the test's few commands run
	// in far less than the second that would refill one.
	srv, err := Listen("127.0.0.1:0", st, Options{Guard: Guard{Limiter: access.NewLimiter(1, 3)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, b := dial(t, srv.Addr()), dial(t, srv.Addr())
	for i, c := range []*client{a, b, a} {
		if got := c.do(t, "PING"); got != "+PONG" {
			t.Fatalf("command %d within the burst: %s", i, got)
		}
	}
	if got := b.do(t, "NOSUCHCOMMAND"); got != "-"+ErrRateLimited {
		t.Fatalf("4th command (unknown ones count too): %s", got)
	}
}
