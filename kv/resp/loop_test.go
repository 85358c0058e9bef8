package resp

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// engines are the engines this platform serves with.
func engines() []string {
	if runtime.GOOS == "linux" {
		return []string{EngineLoop, EngineOwn, EngineRedcon}
	}
	return []string{EngineOwn, EngineRedcon}
}

func listenEngine(t *testing.T, st *kv.Store, engine string) string {
	t.Helper()
	srv, err := Listen("127.0.0.1:0", st, Options{Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

// gatedFile is an AOF whose Sync, once closed is set, blocks until the
// test releases it, and says when a Sync has begun.
type gatedFile struct {
	f       *os.File
	gate    atomic.Pointer[chan struct{}] // receive to sync; nil: sync at once
	entered chan struct{}
}

func (g *gatedFile) Write(b []byte) (int, error) { return g.f.Write(b) }
func (g *gatedFile) Sync() error {
	if gate := g.gate.Load(); gate != nil {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		<-*gate
	}
	return g.f.Sync()
}
func (g *gatedFile) Truncate(n int64) error { return g.f.Truncate(n) }
func (g *gatedFile) Close() error           { return g.f.Close() }

// TestAlwaysRepliesOnlyAfterFsync: under appendfsync always no engine
// sends +OK for a SET (nor anything after it in the same pipeline) while
// the fsync that covers it has not returned. It checks an absence: a slow
// machine can only make it pass, never fail wrongly.
func TestAlwaysRepliesOnlyAfterFsync(t *testing.T) {
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			g := &gatedFile{entered: make(chan struct{}, 1)}
			st, err := kv.Open(kv.Options{Dir: t.TempDir(), Fsync: kv.FsyncAlways, OpenFile: func(p string) (kv.File, error) {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				g.f = f
				return g, err
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			addr := listenEngine(t, st, engine)
			c := dial(t, addr)
			if r := c.do(t, "PING"); r != "+PONG" {
				t.Fatal(r)
			}
			release := make(chan struct{})
			var once sync.Once
			open := func() { once.Do(func() { close(release) }) }
			t.Cleanup(open)        // a failure must not leave Close waiting on the gate
			g.gate.Store(&release) // set before any write: the store is idle
			if _, err := c.c.Write(append(encodeCmd("SET", "k", "v"), encodeCmd("PING")...)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-g.entered:
			case <-time.After(30 * time.Second):
				t.Fatal("the SET's fsync never began")
			}
			c.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if r, err := c.read(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("a reply (%q, %v) came while the fsync was still running", r, err)
			}
			c.c.SetReadDeadline(time.Time{})
			c.br.Reset(c.c)
			open()
			for _, want := range []string{"+OK", "+PONG"} {
				if r, err := c.read(); err != nil || r != want {
					t.Fatalf("got %q %v, want %s", r, err, want)
				}
			}
		})
	}
}

// TestSlowReaderGetsEveryReply: a client that pipelines more replies than
// the socket holds before it reads gets them all, whole, in order, and
// another client is served meanwhile (the loop engine parks the first
// connection's replies and stops reading it until they are gone).
func TestSlowReaderGetsEveryReply(t *testing.T) {
	big := strings.Repeat("v", 1<<20)
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			st, err := kv.Open(kv.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			addr := listenEngine(t, st, engine)
			slow := dial(t, addr)
			if r := slow.do(t, "SET", "big", big); r != "+OK" {
				t.Fatal(r)
			}
			const n = 48 // 48 MiB of replies: far past any socket buffer
			var b []byte
			for range n {
				b = append(b, encodeCmd("GET", "big")...)
			}
			b = append(b, encodeCmd("PING")...)
			if _, err := slow.c.Write(b); err != nil {
				t.Fatal(err)
			}
			other := dial(t, addr)
			other.c.SetDeadline(time.Now().Add(30 * time.Second))
			if r := other.do(t, "PING"); r != "+PONG" {
				t.Fatalf("another client while one does not read: %q", r)
			}
			slow.c.SetDeadline(time.Now().Add(60 * time.Second))
			want := []byte("$1048576\r\n" + big + "\r\n")
			got := make([]byte, len(want))
			for i := range n {
				if _, err := io.ReadFull(slow.br, got); err != nil {
					t.Fatalf("reply %d: %v", i, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("reply %d differs (starts %q)", i, got[:20])
				}
			}
			if r, err := slow.read(); err != nil || r != "+PONG" {
				t.Fatalf("after the GETs: %q %v", r, err)
			}
		})
	}
}
