package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestServeKV: serve --resp --data-dir --appendfsync always; a value
// written over HTTP is read over RESP, the store survives a restart, and
// bad KV flags are usage errors.
func TestServeKV(t *testing.T) {
	bin := testkit.Binary(t)
	dir := t.TempDir()
	start := func() (*testkit.Process, string, string) {
		cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--resp", "127.0.0.1:0",
			"--data-dir", dir, "--appendfsync", "always")
		p, m := testkit.StartLine(t, cmd, regexp.MustCompile(`^listening http=(\S+) grpc=(\S+) resp=(\S+)$`), time.Minute)
		return p, m[1], m[3]
	}
	cmd, httpAddr, respAddr := start()
	req, _ := http.NewRequest("PUT", "http://"+httpAddr+"/kv/greeting", strings.NewReader("hello"))
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 204 {
		t.Fatalf("PUT: %v %v", res, err)
	}
	res.Body.Close()
	c, err := net.Dial("tcp", respAddr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "GET greeting\r\n")
	br := bufio.NewReader(c)
	if l1, _ := br.ReadString('\n'); l1 != "$5\r\n" {
		t.Fatalf("RESP GET: %q", l1)
	}
	if l2, _ := br.ReadString('\n'); l2 != "hello\r\n" {
		t.Fatalf("RESP GET: %q", l2)
	}
	c.Close()
	cmd.Signal(syscall.SIGTERM)
	cmd.Wait()

	_, httpAddr, _ = start()
	res, err = http.Get("http://" + httpAddr + "/kv/greeting")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"value":"hello"`) {
		t.Fatalf("after restart: %d %s", res.StatusCode, b)
	}

	for _, args := range [][]string{{"--appendfsync", "sometimes"}, {"--resp-engine", "nope", "--resp", "127.0.0.1:0"}} {
		out, err := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, args...)...).CombinedOutput()
		if err == nil {
			t.Errorf("serve %q succeeded: %s", args, out)
		}
	}
}
