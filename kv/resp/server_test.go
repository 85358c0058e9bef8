package resp

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

func TestPipelineWithAlways(t *testing.T) {
	addr, st := startOurs(t, kv.Options{Dir: t.TempDir(), Fsync: kv.FsyncAlways})
	c := dial(t, addr)
	var b bytes.Buffer
	const n = 500
	for i := range n {
		b.Write(encodeCmd("SET", fmt.Sprint("p", i), fmt.Sprint(i)))
		b.Write(encodeCmd("GET", fmt.Sprint("p", i)))
	}
	if _, err := c.c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if r, err := c.read(); err != nil || r != "+OK" {
			t.Fatalf("SET %d: %s %v", i, r, err)
		}
		if r, err := c.read(); err != nil || r != fmt.Sprintf("%q", fmt.Sprint(i)) {
			t.Fatalf("GET %d: %s %v", i, r, err)
		}
	}
	// A pipeline's writes share fsyncs: far fewer than one per SET.
	if in := st.Info(); in.Fsyncs >= n {
		t.Fatalf("%d fsyncs for %d pipelined SETs", in.Fsyncs, n)
	}
}

func TestInlineCommands(t *testing.T) {
	addr, _ := startOurs(t, kv.Options{})
	c := dial(t, addr)
	c.c.Write([]byte("SET k \"a b\\x41\"\r\nGET k\r\nSET q 'it\\'s'\r\nGET q\n\r\nPING\r\n"))
	for _, want := range []string{"+OK", `"a bA"`, "+OK", `"it's"`, "+PONG"} {
		if r, err := c.read(); err != nil || r != want {
			t.Fatalf("got %s %v, want %s", r, err, want)
		}
	}
}

func TestProtocolErrorsCloseTheConnection(t *testing.T) {
	addr, _ := startOurs(t, kv.Options{})
	for _, tc := range []struct{ in, want string }{
		{"*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'"},
		{"*x\r\n", "-ERR Protocol error: invalid multibulk length"},
		{fmt.Sprintf("*%d\r\n", MaxArgs+1), "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$-2\r\n", "-ERR Protocol error: invalid bulk length"},
		{fmt.Sprintf("*1\r\n$%d\r\n", MaxBulk+1), "-ERR Protocol error: invalid bulk length"},
		{"SET a \"b\r\n", "-ERR Protocol error: unbalanced quotes in request"},
		{strings.Repeat("x", MaxInline+1), "-ERR Protocol error: too big inline request"},
	} {
		c := dial(t, addr)
		c.c.Write([]byte(tc.in))
		if r, err := c.read(); err != nil || r != tc.want {
			t.Errorf("%.20q: %s %v, want %s", tc.in, r, err, tc.want)
		}
		c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.br.ReadByte(); err != io.EOF {
			t.Errorf("%.20q: connection not closed: %v", tc.in, err)
		}
	}
	// A bulk at exactly the limit is accepted (its bytes are awaited).
	c := dial(t, addr)
	c.c.Write([]byte(fmt.Sprintf("*1\r\n$%d\r\n", MaxBulk)))
	c.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.br.ReadByte(); err == nil || !isTimeout(err) {
		t.Fatalf("bulk of MaxBulk refused: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestQuitAndMaxConns(t *testing.T) {
	st, _ := kv.Open(kv.Options{})
	defer st.Close()
	srv, err := Listen("127.0.0.1:0", st, Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, b := dial(t, srv.Addr()), dial(t, srv.Addr())
	a.do(t, "PING")
	b.do(t, "PING")
	c := dial(t, srv.Addr())
	if r, err := c.read(); err != nil || r != "-ERR max number of clients reached" {
		t.Fatalf("third connection: %s %v", r, err)
	}
	if r := a.do(t, "QUIT"); r != "+OK" {
		t.Fatalf("QUIT: %s", r)
	}
	a.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := a.br.ReadByte(); err != io.EOF {
		t.Fatalf("QUIT did not close: %v", err)
	}
	// The slot is free again (the count drops when the handler returns).
	for deadline := time.Now().Add(5 * time.Second); srv.conns.Load() > 1 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if r := dial(t, srv.Addr()).do(t, "PING"); r != "+PONG" {
		t.Fatalf("after QUIT: %s", r)
	}
}

// TestRedconEngineAnswersAlike: both engines run the same commands; the
// differential script must give identical replies through either.
func TestRedconEngineAnswersAlike(t *testing.T) {
	own, _ := startOurs(t, kv.Options{})
	st, _ := kv.Open(kv.Options{})
	defer st.Close()
	rc, err := Listen("127.0.0.1:0", st, Options{Engine: EngineRedcon})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	a, b := dial(t, own), dial(t, rc.Addr())
	for _, cmd := range script {
		if x, y := a.do(t, cmd...), b.do(t, cmd...); x != y && cmd[0] != "HELLO" {
			t.Errorf("%q: own %s, redcon %s", cmd, x, y)
		}
	}
	if _, err := Listen("127.0.0.1:0", st, Options{Engine: "nope"}); err == nil {
		t.Fatal("unknown engine accepted")
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"[abc]x", "bx", true}, {"[^abc]x", "bx", false}, {"[a-c]", "b", true}, {"[c-a]", "b", true},
		{"\\*", "*", true}, {"\\*", "a", false}, {"a[\\]]", "a]", true}, {"*a*a*a*a*b", strings.Repeat("a", 60), false},
		{"k[1", "k1", true}, {"", "", true}, {"", "a", false},
	} {
		if got := match([]byte(tc.p), []byte(tc.s)); got != tc.want {
			t.Errorf("match(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

func TestInfoSections(t *testing.T) {
	addr, _ := startOurs(t, kv.Options{})
	c := dial(t, addr)
	got := c.do(t, "INFO", "persistence")
	if !strings.Contains(got, "aof_enabled:0") || strings.Contains(got, "redis_version") {
		t.Fatalf("INFO persistence: %s", got)
	}
	if all := c.do(t, "INFO"); !strings.Contains(all, "redis_version") || !strings.Contains(all, "aof_enabled") {
		t.Fatalf("INFO: %s", all)
	}
	if none := c.do(t, "INFO", "nosuch"); none != `""` {
		t.Fatalf("INFO nosuch: %s", none)
	}
}
