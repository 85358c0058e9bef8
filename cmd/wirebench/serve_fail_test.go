package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// brokenListener passes Accept through until broken is closed; then its
// Accept fails for good, as a listener whose socket the kernel took away.
type brokenListener struct {
	net.Listener
	broken chan struct{}
}

var errBroken = errors.New("listener broke (test)")

func (l *brokenListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		select {
		case <-l.broken:
			return nil, errBroken
		default:
		}
	}
	return c, err
}

// lineWriter hands serve's stdout lines to the test.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		s := w.buf.String()
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- s[:i]
		w.buf.Reset()
		w.buf.WriteString(s[i+1:])
	}
}

// Issue 34 item 13: a listener that fails after start ends serve (the
// command, as a function) with exit 1 and the error, promptly, for the
// REST listener and the gRPC one alike. Before, serve ran on with the
// face dead until a signal (checked: the test timed out).
func TestServeExitsWhenAListenerFails(t *testing.T) {
	for i, name := range []string{"HTTP", "gRPC"} { // serve listens in this order
		t.Run(name, func(t *testing.T) {
			broken := make(chan struct{})
			var mu sync.Mutex
			var lns []*brokenListener
			listen := func(network, addr string) (net.Listener, error) {
				ln, err := net.Listen(network, addr)
				if err != nil {
					return nil, err
				}
				mu.Lock()
				defer mu.Unlock()
				bl := &brokenListener{Listener: ln}
				if len(lns) == i {
					bl.broken = broken
				} else {
					bl.broken = make(chan struct{})
				}
				lns = append(lns, bl)
				return bl, nil
			}
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), listenKey{}, listen))
			defer cancel() // a serve that did not exit stops here
			out := &lineWriter{lines: make(chan string, 4)}
			var stderr testkit.SyncBuffer
			code := make(chan int, 1)
			go func() {
				code <- run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: out, stderr: &stderr},
					[]string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"})
			}()
			select {
			case l := <-out.lines:
				if !strings.HasPrefix(l, "listening ") {
					t.Fatalf("first line %q", l)
				}
			case c := <-code:
				t.Fatalf("serve exited %d before listening: %s", c, stderr.String())
			case <-time.After(time.Minute):
				t.Fatal("serve never listened")
			}
			mu.Lock()
			target := lns[i]
			mu.Unlock()
			close(broken)
			target.Listener.Close() // wakes Accept, which now reports the failure
			// Generous: serve shuts down within its 5 s grace; a busy
			// machine adds seconds, never the minute of a serve that runs on.
			select {
			case c := <-code:
				if c != 1 || !strings.Contains(stderr.String(), errBroken.Error()) || !strings.Contains(stderr.String(), name+" listener") {
					t.Fatalf("serve exited %d; stderr %q: want 1 naming the %s listener and %q", c, stderr.String(), name, errBroken)
				}
			case <-time.After(time.Minute):
				t.Fatalf("serve still running a minute after its %s listener failed", name)
			}
		})
	}
}
