package resp

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// needTool skips when a peer tool is missing outside CI and fails in CI
// (.ci/run installs redis-server and redis-tools).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (CI installs it: apt-get install redis-server redis-tools)", name)
		}
		t.Skipf("%s is missing: apt-get install redis-server redis-tools", name)
	}
	return p
}

// startRedis runs a real redis-server on a free loopback port without
// persistence and returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	bin := needTool(t, "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// Generous: redis-server starts in milliseconds, but the CI box is busy.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatal("redis-server did not start")
	return ""
}

func startOurs(t *testing.T, o kv.Options) (string, *kv.Store) {
	t.Helper()
	st, err := kv.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen("127.0.0.1:0", st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); st.Close() })
	return srv.Addr(), st
}

// script: every command's reply must be the same from both servers.
// Commands whose replies legitimately differ (INFO, HELLO's id and
// version, SCAN order, SELECT n>0: we have one database) are not in it.
var script = [][]string{
	{"PING"}, {"PING", "hello"}, {"ECHO", "hi"}, {"ECHO"}, {"PING", "a", "b"},
	{"SET", "a", "1"}, {"GET", "a"}, {"GET", "missing"},
	{"SET", "a", "2", "NX"}, {"SET", "a", "3", "XX"}, {"GET", "a"}, {"SET", "a", "4", "GET"},
	{"SET", "b", "5", "NX", "GET"}, {"SET", "xx", "5", "XX", "GET"}, {"get", "b"},
	{"SET", "c", "x", "EX", "0"}, {"SET", "c", "x", "EX", "-5"}, {"SET", "c", "x", "EX", "notnum"},
	{"SET", "c", "x", "EX", "10", "PX", "10"}, {"SET", "c", "x", "KEEPTTL", "EX", "5"},
	{"SET", "c", "x", "NX", "XX"}, {"SET", "c", "x", "BOGUS"}, {"SET", "c", "x", "EX"},
	{"SET", "c", "x", "EX", "100"}, {"TTL", "c"}, {"TTL", "missing"}, {"TTL", "a"}, {"PTTL", "a"}, {"PTTL", "missing"},
	{"SET", "c", "y", "KEEPTTL"}, {"TTL", "c"}, {"SET", "c", "y", "PX", "100000"}, {"TTL", "c"},
	{"PERSIST", "c"}, {"TTL", "c"}, {"PERSIST", "c"}, {"PERSIST", "missing"},
	{"EXPIRE", "c", "100"}, {"EXPIRE", "c", "50", "GT"}, {"EXPIRE", "c", "200", "GT"}, {"TTL", "c"},
	{"EXPIRE", "c", "10", "NX", "XX"}, {"EXPIRE", "c", "10", "GT", "LT"}, {"EXPIRE", "c", "10", "bogus"}, {"EXPIRE", "c", "notnum"},
	{"EXPIRE", "missing", "10"}, {"PEXPIRE", "c", "100000", "LT"}, {"TTL", "c"}, {"EXPIRE", "a", "10", "XX"}, {"EXPIRE", "a", "10", "NX"},
	{"EXPIRE", "c", "99999999999999999"}, {"EXPIRE", "c", "-1"}, {"EXISTS", "c"}, {"EXPIRE"},
	{"GETDEL", "a"}, {"GETDEL", "a"}, {"APPEND", "s", "hello"}, {"APPEND", "s", " world"}, {"GET", "s"},
	{"STRLEN", "s"}, {"STRLEN", "missing"},
	{"INCR", "n"}, {"INCRBY", "n", "10"}, {"DECR", "n"}, {"DECRBY", "n", "5"}, {"INCRBY", "n", "notnum"}, {"INCRBY", "n", "1.5"},
	{"DECRBY", "n", "-9223372036854775808"}, {"INCR", "s"},
	{"SET", "big", "9223372036854775807"}, {"INCR", "big"}, {"INCRBY", "big", "-1"},
	{"SET", "neg", "-9223372036854775808"}, {"DECR", "neg"}, {"INCRBY", "neg", "9223372036854775807"},
	{"SET", "z", "007"}, {"INCR", "z"}, {"SET", "sp", " 1"}, {"INCR", "sp"}, {"SET", "plus", "+1"}, {"INCR", "plus"},
	{"SET", "e", ""}, {"INCR", "e"}, {"GET", "e"}, {"STRLEN", "e"}, {"APPEND", "e", ""},
	{"DEL", "n", "s", "missing"}, {"DEL"}, {"UNLINK", "z"}, {"EXISTS", "b", "b", "missing"}, {"TYPE", "b"}, {"TYPE", "missing"},
	{"MSET", "k1", "v1", "k2", "v2"}, {"MGET", "k1", "k2", "k3"}, {"MSET", "k1"}, {"MSET", "k1", "v1", "k2"}, {"MGET"},
	{"KEYS", "k?1"}, {"KEYS", "k[1]"}, {"KEYS", "nomatch*"}, {"KEYS", "[b]"},
	{"DBSIZE"}, {"DBSIZE", "x"}, {"FLUSHALL"}, {"DBSIZE"}, {"FLUSHALL", "bogus"}, {"FLUSHALL", "ASYNC"},
	{"GET"}, {"SET"}, {"GET", "a", "b"}, {"foo"}, {"foo", "bar", "baz"}, {"GETDEL"}, {"TTL"},
	{"SELECT", "0"}, {"SELECT", "x"}, {"AUTH", "x"}, {"AUTH", "user", "pass"}, {"AUTH", "default", "x"},
	{"CLIENT", "SETNAME", "myname"}, {"CLIENT", "GETNAME"}, {"CLIENT", "SETNAME", "bad name"}, {"CLIENT", "bogus"}, {"CLIENT"},
	{"HELLO", "4"}, {"HELLO", "x"}, {"CONFIG", "bogus"}, {"CONFIG"}, {"CONFIG", "GET"}, {"COMMAND", "bogus"},
	{"SCAN", "x"}, {"SCAN", "0", "COUNT", "0"}, {"SCAN", "0", "bogus"},
	{"SET", "r3", "v"}, {"HELLO", "3"}, {"GET", "missing"}, {"MGET", "r3", "missing"}, {"GET", "r3"},
	{"SET", "r3", "w", "XX", "GET"}, {"SET", "nope", "w", "XX"}, {"HELLO", "2"}, {"GET", "missing"},
}

func TestDifferentialAgainstRedis(t *testing.T) {
	redisAddr := startRedis(t)
	ours, _ := startOurs(t, kv.Options{})
	rc, oc := dial(t, redisAddr), dial(t, ours)
	for _, cmd := range script {
		want, got := rc.do(t, cmd...), oc.do(t, cmd...)
		if cmd[0] == "HELLO" && strings.HasPrefix(want, "[") {
			continue // the map carries the connection id and version
		}
		if want != got {
			t.Errorf("%q:\n redis: %s\n ours:  %s", cmd, want, got)
		}
	}
}

// TestDifferentialRedisCLI pipes a script through redis-cli, the way a
// user would, against both servers.
func TestDifferentialRedisCLI(t *testing.T) {
	cli := needTool(t, "redis-cli")
	redisAddr := startRedis(t)
	ours, _ := startOurs(t, kv.Options{})
	input := "SET greeting hello\nGET greeting\nAPPEND greeting \" world\"\nGET greeting\nINCR counter\nINCRBY counter 41\n" +
		"MSET a 1 b 2\nMGET a b c\nEXISTS a b c\nDEL a\nSET t v EX 100\nTTL t\nTYPE t\nGETDEL t\nDBSIZE\nNOSUCH x\nGET\nSET x 1 EX 0\nINCR greeting\n"
	run := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(cli, "-h", host, "-p", port)
		cmd.Stdin = strings.NewReader(input)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("redis-cli against %s: %v\n%s", addr, err, out.String())
		}
		return out.String()
	}
	want, got := run(redisAddr), run(ours)
	if want != got {
		t.Fatalf("redis-cli output differs:\n--- redis\n%s--- ours\n%s", want, got)
	}
}
