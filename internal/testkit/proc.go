package testkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StopGrace is how long Stop waits after SIGTERM before it kills the
// process group (a variable for testkit's own test).
var StopGrace = 10 * time.Second

// Process is a child started by Start: in a process group of its own,
// its output kept, stopped with its group when the test ends.
type Process struct {
	Cmd  *exec.Cmd
	name string
	log  *SyncBuffer
	done chan struct{}
	err  error // Wait's, once done is closed
	once sync.Once
}

// Start starts cmd in a process group of its own. Its stdout and stderr
// go to a log (unless cmd already has them set), printed if the test
// fails. When the test ends the group gets SIGTERM, then SIGKILL after
// StopGrace: no child outlives its test, grandchildren included.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, name: cmd.Path, log: &SyncBuffer{}, done: make(chan struct{})}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = time.Second // a grandchild holding the output pipe does not hang Wait
	}
	if cmd.Stdout == nil {
		cmd.Stdout = p.log
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.log
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: start %v: %v", cmd.Args, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("testkit: output of %v:\n%s", cmd.Args, p.Log())
		}
	})
	return p
}

// StartLine starts cmd like Start and waits up to timeout for a line of
// its stdout that matches re; it returns the submatches. The rest of the
// output goes to the log. For servers that print the address they bound
// (`wirebench serve --http 127.0.0.1:0` prints "listening http=… grpc=…").
func StartLine(t testing.TB, cmd *exec.Cmd, re *regexp.Regexp, timeout time.Duration) (*Process, []string) {
	t.Helper()
	if cmd.Stdout != nil {
		t.Fatal("testkit: StartLine reads stdout itself")
	}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	p := Start(t, cmd)
	if cmd.Stderr == pw {
		t.Fatal("testkit: stderr is the pipe")
	}
	go func() { <-p.done; pw.Close() }()
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			p.log.Write([]byte(line + "\n"))
			if m := re.FindStringSubmatch(line); m != nil && !sent {
				found <- m
				sent = true
			}
		}
		io.Copy(io.Discard, pr)
		if !sent {
			close(found)
		}
	}()
	select {
	case m, ok := <-found:
		if !ok {
			t.Fatalf("testkit: %v exited (%v) before printing a line matching %q; output:\n%s", cmd.Args, p.Wait(), re, p.Log())
		}
		return p, m
	case <-time.After(timeout):
		t.Fatalf("testkit: %v printed no line matching %q in %v; output:\n%s", cmd.Args, re, timeout, p.Log())
	}
	return nil, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns Wait's error.
func (p *Process) Wait() error { <-p.done; return p.err }

// Log is the process's output so far.
func (p *Process) Log() string { return p.log.String() }

// Signal sends sig to the process's group.
func (p *Process) Signal(sig syscall.Signal) error {
	return syscall.Kill(-p.Cmd.Process.Pid, sig)
}

// Stop sends SIGTERM to the group, waits up to StopGrace, then kills the
// group, and returns Wait's error. Calling it again returns the same.
func (p *Process) Stop() error {
	p.once.Do(func() {
		select {
		case <-p.done:
		default:
			p.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(StopGrace):
			}
		}
		// Whatever the leader did, no member of the group survives it.
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p.err
}

// WaitDial waits until addr accepts a TCP connection or the process
// exits; it fails the test after timeout.
func (p *Process) WaitDial(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	if err := p.waitFor(timeout, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		t.Fatalf("testkit: %v: %s: %v; output:\n%s", p.Cmd.Args, addr, err, p.Log())
	}
}

var errExited = errors.New("exited")

// waitFor polls ready every 10 ms until it returns nil, the process
// exits, or timeout passes.
func (p *Process) waitFor(timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w (%v) before it was ready: %v", errExited, p.err, err)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %v", timeout, err)
		}
	}
}

// SyncBuffer is a bytes.Buffer safe for the process's writers and the
// test's readers at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
