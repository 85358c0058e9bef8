package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Server is how a cell's server is started, fresh for every trial
// (fairness rule 1). Command, Env and Ready are templates: {port},
// {port2}, ... are free loopback ports chosen per trial, {wirebench} is
// the wirebench executable.
type Server struct {
	Command []string
	// Dir is the working directory (default: the current one).
	Dir string
	// Env is added to this process's environment, KEY=VALUE.
	Env []string
	// Ready is probed until the server answers: http://... (any status
	// below 500) or tcp://host:port (a connection is accepted). Empty
	// probes the load URL's host with TCP.
	Ready string
	// ReadyTimeout bounds the wait for readiness (default 30 s).
	ReadyTimeout time.Duration
	// StopSignal ends the server (default SIGTERM), sent to its process
	// group; after StopGrace (default 10 s) the group is killed.
	StopSignal syscall.Signal
	StopGrace  time.Duration
	// CPUQuota, if > 0, caps the server at this many CPUs (a cgroup CFS
	// quota with a short period), so that a client that cannot outrun it
	// on its CPU still measures the server.
	CPUQuota float64
}

// Defaults of Server.
const (
	DefaultReadyTimeout = 30 * time.Second
	DefaultStopGrace    = 10 * time.Second
	defaultStopSignal   = syscall.SIGTERM
	// logTail is how much of a server's output an error message quotes.
	logTail = 2048
)

// proc is one running server process.
type proc struct {
	cmd  *exec.Cmd
	log  *os.File // stdout and stderr, written by the kernel, not by us
	done chan struct{}
	err  error // Wait's result, once done is closed
}

// startProc starts s with v substituted, its first thread pinned to cpus
// before exec so that every thread of the server inherits the mask (and a
// Go server sizes GOMAXPROCS from it).
func startProc(s *Server, v vars, cpus []int) (*proc, error) {
	args := v.expandAll(s.Command)
	if len(args) == 0 {
		return nil, errors.New("study: server: empty command")
	}
	dir := v.dir(s.Dir)
	path, err := resolveCommand(args[0], dir)
	if err != nil {
		return nil, fmt.Errorf("study: server %s: %w", args[0], err)
	}
	log, err := os.CreateTemp("", "wirebench-server-*.log")
	if err != nil {
		return nil, fmt.Errorf("study: server log: %w", err)
	}
	os.Remove(log.Name()) // unlinked: it disappears with the last descriptor
	cmd := &exec.Cmd{Path: path, Args: args, Dir: dir, Env: append(os.Environ(), v.expandAll(s.Env)...),
		Stdout: log, Stderr: log,
		// Its own process group, so that stopping it stops what it
		// started too (a wrapper script, `go run`); killed if we die.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	if err := startPinned(cmd, cpus); err != nil {
		log.Close()
		return nil, fmt.Errorf("study: start server %q: %w", strings.Join(args, " "), err)
	}
	p := &proc{cmd: cmd, log: log, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// resolveCommand finds the executable: a name with a slash is a path
// (relative to dir), a bare name is looked up in PATH.
func resolveCommand(name, dir string) (string, error) {
	if !strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	if !filepath.IsAbs(name) && dir != "" {
		name = filepath.Join(dir, name)
	}
	if _, err := os.Stat(name); err != nil {
		return "", err
	}
	return filepath.Abs(name)
}

// startPinned starts cmd from a thread whose affinity is cpus: the child
// inherits the forking thread's mask, so the server is pinned from its
// first instruction (pinning it after start would miss threads it already
// made). The thread's own mask is restored afterwards.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPUs %v: %w", cpus, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore affinity: %w", rerr)
	}
	return err
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// cpus returns the CPUs the server may run on, as the kernel has them.
func (p *proc) cpus() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(p.pid(), &set); err != nil {
		return nil
	}
	var out []int
	for c := range 1024 {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// exited reports whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// output is the tail of what the server wrote, for error messages.
func (p *proc) output() string {
	fi, err := p.log.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-logTail, 0)
	b := make([]byte, fi.Size()-off)
	n, _ := p.log.ReadAt(b, off)
	return strings.TrimSpace(string(b[:n]))
}

// waitReady probes ready until it answers, the process exits, or timeout.
func (p *proc) waitReady(ctx context.Context, ready string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("study: server exited before it was ready (%v): %s", exitText(err), quoteOutput(p.output()))
		}
		if last = probe(ctx, ready); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("study: server not ready after %v (%s: %v): %s", timeout, ready, last, quoteOutput(p.output()))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// probe checks readiness once: tcp://host:port accepts a connection, or
// http://... answers with a status below 500 (a server that says 404 to
// the probe is up; one that says 503 is still starting).
func probe(ctx context.Context, ready string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if hp, ok := strings.CutPrefix(ready, "tcp://"); ok {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", strings.TrimSuffix(hp, "/"))
		if err != nil {
			return err
		}
		return c.Close()
	}
	req, err := http.NewRequestWithContext(ctx, "GET", ready, nil)
	if err != nil {
		return err
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// probeClient keeps no connections: a probe must not leave one open that
// the server then counts or serves during the measured run.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// tcpTarget is the host:port a load URL points at, as a tcp:// probe.
func tcpTarget(loadURL string) string {
	if u, err := url.Parse(loadURL); err == nil && u.Host != "" {
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
		return "tcp://" + host
	}
	return "tcp://" + loadURL // host:port (gRPC)
}

// stop sends the stop signal to the server's process group and kills the
// group after grace. It reports an error only if the server had already
// exited on its own (it crashed during the trial): how a server exits
// after being told to stop is its own business.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) error {
	defer p.log.Close()
	if err := p.crashed(); err != nil {
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL) // whatever it left behind
		return err
	}
	_ = syscall.Kill(-p.pid(), sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL) // children that ignored the signal
	return nil
}

// crashed returns an error if the server has exited on its own.
func (p *proc) crashed() error {
	if done, err := p.exited(); done {
		return fmt.Errorf("study: server exited during the trial (%v): %s", exitText(err), quoteOutput(p.output()))
	}
	return nil
}

// kill ends the server at once (a failed trial).
func (p *proc) kill() {
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	p.log.Close()
}

// children lists the PIDs of the server's direct children: the sampler
// reads only the PID it started, so a wrapper (sh -c, go run) would be
// measured instead of the server.
func (p *proc) children() []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p.pid(), p.pid()))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func quoteOutput(s string) string {
	if s == "" {
		return "(no output)"
	}
	return "output: " + s
}

// signals are the stop signals a study may name.
var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}

// parseSignal reads TERM, SIGTERM or sigterm.
func parseSignal(s string) (syscall.Signal, error) {
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig, ok := signals[name]; ok {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q (want TERM, INT, QUIT, HUP, KILL, USR1 or USR2)", s)
}
