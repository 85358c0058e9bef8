package main

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// bombardierRequests is small so the check takes about a second per engine
// on a loaded 2-core box; it is a peer check of correctness under
// concurrency, not a benchmark.
const bombardierRequests = 20000

// TestPeerBombardier runs the Fiber seed's own command line (bombardier,
// 100 connections, a fixed count of POST /echo) against both engines: a
// load tool nobody here wrote must see only 2xx, and the server must have
// counted exactly the requests bombardier sent.
func TestPeerBombardier(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	bombardier := testkit.NeedTool(t, "bombardier", "go install github.com/codesenberg/bombardier@v1.2.6")
	bin := testkit.Binary(t)
	for _, engine := range []string{"nethttp", "fasthttp"} {
		t.Run(engine, func(t *testing.T) {
			for _, lib := range []string{"std", "fast"} {
				addr, _ := startServe(t, bin, "--engine", engine, "--json-lib", lib)
				out, err := exec.Command(bombardier, "-c", "100", "-n", strconv.Itoa(bombardierRequests), "-m", "POST",
					"-H", "Content-Type: application/json", "-b", `{"first_message":"Hello, ","second_message":"World!"}`,
					"http://"+addr+"/echo").CombinedOutput()
				if err != nil {
					t.Fatalf("json-lib %s: bombardier: %v\n%s", lib, err, out)
				}
				m := regexp.MustCompile(`1xx - (\d+), 2xx - (\d+), 3xx - (\d+), 4xx - (\d+), 5xx - (\d+)\s+others - (\d+)`).FindSubmatch(out)
				if m == nil {
					t.Fatalf("json-lib %s: no HTTP codes line in bombardier's output:\n%s", lib, out)
				}
				if want := fmt.Sprintf("1xx - 0, 2xx - %d, 3xx - 0, 4xx - 0, 5xx - 0", bombardierRequests); string(m[0][:len(want)]) != want || string(m[6]) != "0" {
					t.Errorf("json-lib %s: bombardier saw %q, want only 2xx:\n%s", lib, m[0], out)
				}
				if got := echoCount(t, addr); got != bombardierRequests {
					t.Errorf("json-lib %s: the server counted %d POST /echo 200s, bombardier sent %d", lib, got, bombardierRequests)
				}
			}
		})
	}
}

// echoCount reads the server's count of successful POST /echo from
// /metrics.
func echoCount(t *testing.T, addr string) int {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^wirebench_http_requests_total\{format="json(?:-fast)?",route="/echo",status="200"\} (\d+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics has no POST /echo 200 count:\n%s", body)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
