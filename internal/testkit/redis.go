package testkit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Redis is a real redis-server started by StartRedis.
type Redis struct {
	Addr string // host:port
	*Process
}

// URL is the server as the KV scenarios take it.
func (r *Redis) URL() string { return "redis://" + r.Addr }

// redisTries bounds the restarts when the port StartRedis chose was taken
// before redis-server could bind it.
const redisTries = 5

// StartRedis runs a real redis-server on loopback, memory only (no RDB,
// no AOF, a temporary dir), with args appended to its command line, and
// waits until it answers. NeedTool rules apply: skipped outside CI when
// redis-server is missing.
//
// redis-server cannot inherit a bound socket, so the port is chosen and
// released first; should another socket take it in between, redis-server
// exits ("Address already in use") and is started again on another port,
// and readiness is the started process's own pid in INFO, so a
// stranger on the port is never mistaken for it.
func StartRedis(t testing.TB, args ...string) *Redis {
	t.Helper()
	bin := NeedTool(t, "redis-server", "apt-get install -y redis-server")
	dir := t.TempDir()
	var last string
	for range redisTries {
		port, err := releasedPort()
		if err != nil {
			t.Fatalf("testkit: %v", err)
		}
		argv := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no",
			"--dir", dir, "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"}, args...)
		p := Start(t, exec.Command(bin, argv...))
		r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Process: p}
		pid := strconv.Itoa(p.Cmd.Process.Pid)
		err = p.waitFor(30*time.Second, func() error {
			got, err := redisPid(r.Addr)
			if err == nil && got != pid {
				return fmt.Errorf("%s answered as pid %s, not %s", r.Addr, got, pid)
			}
			return err
		})
		if err == nil {
			return r
		}
		last = fmt.Sprintf("%v; output:\n%s", err, p.Log())
		p.Stop()
		if !strings.Contains(p.Log(), "in use") {
			break
		}
	}
	t.Fatalf("testkit: redis-server did not start: %s", last)
	return nil
}

// releasedPort returns a port the kernel just gave a listener it closed.
// Only StartRedis uses it, and only with the check above.
func releasedPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// redisPid asks the server at addr for its process_id (INFO server).
func redisPid(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")); err != nil {
		return "", err
	}
	br := bufio.NewReader(c)
	head, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(head, "$") {
		return "", fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 {
		return "", fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("INFO server has no process_id")
}
