package study

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// serverProc is one fresh `wirebench serve` process (fairness rule 1: every
// trial starts from the same seed data in a new process).
type serverProc struct {
	cmd      *exec.Cmd
	httpAddr string
	grpcAddr string
	stderr   *tailBuffer
	done     chan error
}

var listeningRE = regexp.MustCompile(`^listening http=(\S*) grpc=(\S*)`)

// startServer execs bin serve on free loopback ports with args, waits for
// its listening line and its health check.
func startServer(ctx context.Context, bin string, args []string) (*serverProc, error) {
	full := append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, full...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, stderr: &tailBuffer{max: 4096}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("study: start server: %w", err)
	}
	go func() { p.done <- cmd.Wait() }()
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, _ := br.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, br)
	}()
	select {
	case line := <-lines:
		m := listeningRE.FindStringSubmatch(line)
		if m == nil {
			p.kill()
			return nil, fmt.Errorf("study: server %v did not start: %q %s", full, line, p.stderr)
		}
		p.httpAddr, p.grpcAddr = m[1], m[2]
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, fmt.Errorf("study: server %v: no listening line in 30s", full)
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
	if err := p.waitHealthy(ctx); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

func (p *serverProc) pid() int { return p.cmd.Process.Pid }

func (p *serverProc) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.httpAddr+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("study: server not healthy after 10s: %v", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// datasetSize counts the users and todos the server holds.
func (p *serverProc) datasetSize(ctx context.Context) (users, todos int, err error) {
	var ul api.UserList
	var tl api.TodoList
	if err := p.getJSON(ctx, "/users", &ul); err != nil {
		return 0, 0, err
	}
	if err := p.getJSON(ctx, "/todos", &tl); err != nil {
		return 0, 0, err
	}
	return len(ul.Users), len(tl.Todos), nil
}

func (p *serverProc) getJSON(ctx context.Context, path string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.httpAddr+path, nil)
	req.Header.Set("Accept", codec.MediaJSON)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("study: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("study: GET %s: status %d %v", path, resp.StatusCode, err)
	}
	return codec.MustLookup("json").Codec.Unmarshal(body, v)
}

// goMem scrapes the server's Go memory and GC figures from /metrics.
func (p *serverProc) goMem(ctx context.Context) (map[string]float64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.httpAddr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("study: GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	want := map[string]bool{
		"go_memstats_heap_alloc_bytes": true, "go_memstats_heap_inuse_bytes": true, "go_memstats_heap_sys_bytes": true,
		"go_memstats_sys_bytes": true, "go_memstats_mallocs_total": true, "go_gc_duration_seconds_count": true,
		"go_gc_duration_seconds_sum": true, "go_goroutines": true, "process_resident_memory_bytes": true,
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = f
		}
	}
	return out, sc.Err()
}

// stop asks the server to exit (SIGTERM) and kills it after a grace period.
func (p *serverProc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("study: server exited: %v: %s", err, p.stderr)
		}
		return err
	case <-time.After(10 * time.Second):
		p.kill()
		return fmt.Errorf("study: server ignored SIGTERM for 10s, killed")
	}
}

func (p *serverProc) kill() {
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// tailBuffer keeps the last max bytes written, for error messages.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }
