package scenario

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/resp"
	"github.com/wirebench/wirebench/measure"
)

// needTool skips a test when name is not installed, outside CI; under CI
// (CI set) a missing tool fails it: .ci/run installs it.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing under CI: .ci/run installs it (apt-get install %s)", name, pkg)
		}
		t.Skipf("%s not installed (apt-get install %s); skipping the test against a real Redis", name, pkg)
	}
	return p
}

// redisServer is a real redis-server on a free loopback port, memory
// only, stopped at the end of the test.
type redisServer struct {
	Addr string
	cmd  *exec.Cmd
}

func startRedis(t *testing.T, extra ...string) *redisServer {
	t.Helper()
	bin := needTool(t, "redis-server", "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--protected-mode", "no"}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &redisServer{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := r.command(t, "PING"); err == nil {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s not ready after 10s", r.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the server as the KV scenarios take it.
func (r *redisServer) URL() string { return "redis://" + r.Addr }

// command sends one command on a connection of its own and returns the
// reply's text (a bulk or simple string, or an integer).
func (r *redisServer) command(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := newRESPConn(r.Addr, new(measure.Bytes), 5*time.Second)
	defer c.close()
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	if err := c.send(context.Background(), resp.AppendCommand(nil, bs...)); err != nil {
		return "", err
	}
	rep, err := c.read()
	if err != nil {
		return "", err
	}
	if rep.Kind == '-' {
		return "", fmt.Errorf("redis: %s", rep.Bulk)
	}
	if rep.Kind == ':' {
		return strconv.FormatInt(rep.Int, 10), nil
	}
	return string(rep.Bulk), nil
}

func (r *redisServer) do(t *testing.T, args ...string) string {
	t.Helper()
	s, err := r.command(t, args...)
	if err != nil {
		t.Fatalf("redis %v: %v", args, err)
	}
	return s
}

// info reads the numeric fields of INFO's sections, plus each command's
// calls as "calls_<cmd>" and db0's keys as "keys".
func (r *redisServer) info(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, line := range strings.Split(r.do(t, "INFO", "all"), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if cmd, ok := strings.CutPrefix(k, "cmdstat_"); ok {
			calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
			n, _ := strconv.ParseInt(calls, 10, 64)
			out["calls_"+cmd] = n
			continue
		}
		if k == "db0" {
			keys, _, _ := strings.Cut(strings.TrimPrefix(v, "keys="), ",")
			out["keys"], _ = strconv.ParseInt(keys, 10, 64)
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}
