package scenario

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// recording is what one server received: each connection's commands in
// order ("SET key:000000000001 <value> PX 1000"), connections in the
// order they sent their first command.
type recording struct {
	mu    sync.Mutex
	order []string
	conns map[string][]string
}

func (r *recording) add(conn string, args []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = map[string][]string{}
	}
	if _, ok := r.conns[conn]; !ok {
		r.order = append(r.order, conn)
	}
	r.conns[conn] = append(r.conns[conn], strings.Join(args, " "))
}

// waitFor waits, 5 s at most, until n commands are recorded: the proxy
// forwards what it reads before it parses it, so the last replies can
// reach the client before their commands are recorded (11,992 of 12,000
// once: one pipeline of 8).
func (r *recording) waitFor(n int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		got := 0
		for _, c := range r.conns {
			got += len(c)
		}
		r.mu.Unlock()
		if got >= n {
			return
		}
	}
}

func (r *recording) sequences() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]string, len(r.order))
	for i, c := range r.order {
		out[i] = r.conns[c]
	}
	return out
}

// monitor records what redis-server executes, as MONITOR reports it, per
// client connection; stop ends the recording once Redis has reported
// every command sent before it.
func monitor(t *testing.T, r *redisServer) (rec *recording, stop func()) {
	t.Helper()
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	io.WriteString(c, "MONITOR\r\n")
	if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q %v", line, err)
	}
	rec = &recording{}
	done := make(chan error, 1)
	const sentinel = "wirebench-monitor-end"
	go func() {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				done <- err
				return
			}
			// +1732848000.123456 [0 127.0.0.1:43210] "GET" "key:000000000001"
			_, rest, _ := strings.Cut(line, " [")
			addr, rest, ok := strings.Cut(rest, "] ")
			if !ok {
				done <- fmt.Errorf("MONITOR line %q", line)
				return
			}
			args := strings.Split(strings.Trim(strings.TrimSpace(rest), `"`), `" "`)
			switch strings.ToUpper(args[0]) {
			case "ECHO":
				if len(args) > 1 && args[1] == sentinel {
					done <- nil
					return
				}
			case "SET", "GET", "DEL", "PEXPIRE":
				rec.add(addr, args)
			}
		}
	}()
	return rec, func() {
		t.Helper()
		r.do(t, "ECHO", sentinel)
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("MONITOR: no sentinel in 20 s")
		}
		c.Close()
	}
}

// recordingProxy is a RESP proxy in front of addr that records each
// client connection's commands as it forwards them: the recording hook on
// our own store.
func recordingProxy(t *testing.T, addr string) (url string, rec *recording) {
	t.Helper()
	rec = &recording{}
	return "redis://" + loadtest.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		up, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		defer up.Close()
		go io.Copy(c, up)
		name := c.RemoteAddr().String()
		br := bufio.NewReader(io.TeeReader(c, up)) // what is read is forwarded at once
		for {
			args, err := readCommand(br)
			if err != nil {
				return
			}
			rec.add(name, args)
		}
	}), rec
}

// expectedStreams are the commands VUs 0..vus-1 of o draw, n each: what
// each connection must have sent, in order, whatever the server.
func expectedStreams(t *testing.T, o KVOptions, vus, n int) [][]string {
	t.Helper()
	o.URL = "redis://127.0.0.1:1" // never dialled
	sc, err := NewKV(o)
	if err != nil {
		t.Fatal(err)
	}
	s := sc
	out := make([][]string, vus)
	for id := range vus {
		v, err := s.newKVVU(id)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			d := v.next()
			key := string(v.appendKey(nil, d))
			var cmd string
			switch d.op {
			case kvOpSet:
				cmd = "SET " + key + " " + string(appendKVValue(nil, d.key, s.valueSize(d.key)))
				if d.ttl > 0 {
					cmd += " PX " + strconv.FormatInt(d.ttl, 10)
				}
			case kvOpGet:
				cmd = "GET " + key
			case kvOpDel:
				cmd = "DEL " + key
			case kvOpExpire:
				cmd = "PEXPIRE " + key + " " + strconv.FormatInt(d.ttl, 10)
			}
			out[id] = append(out[id], cmd)
		}
	}
	return out
}

// TestKVParallelKeys: with parallel keys (memtier's P) each connection
// SETs its own slice of the key space in order, from the slice's first
// key: what our store received, recorded by a proxy.
func TestKVParallelKeys(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const vus, keys = 4, 40
	url, rec := recordingProxy(t, srv.RESPAddr())
	o := KVOptions{Name: ScenarioKVSet, URL: url, Keys: keys, KeyDist: keydist.Spec{Pattern: keydist.Parallel}, Workers: vus}
	res := runKV(t, load.Options{Options: results.Options{Concurrency: vus, Requests: 200}}, o)
	if res.Failed != 0 || res.Requests != 200 {
		t.Fatalf("%d requests, %d failed %v", res.Requests, res.Failed, res.Failures)
	}
	starts := map[int64]bool{}
	seqs := rec.sequences()
	for _, seq := range seqs {
		var first int64 = -1
		for i, cmd := range seq {
			_, num, _ := strings.Cut(strings.Fields(cmd)[1], ":")
			k, _ := strconv.ParseInt(num, 10, 64)
			if i == 0 {
				first = k
			} else if want := first + int64(i)%(keys/vus); k != want {
				t.Fatalf("a connection's command %d is on key %d, want %d (its slice from %d, in order)", i, k, want, first)
			}
		}
		starts[first] = true
	}
	// -n shares the 200 requests among the VUs as they finish, so on a
	// busy machine a VU may get none: every connection that sent starts
	// its own slice (0, 10, 20 or 30), and at least two did.
	for k := range starts {
		if k != 0 && k != 10 && k != 20 && k != 30 {
			t.Errorf("a connection's slice starts at %d, want 0, 10, 20 or 30", k)
		}
	}
	if len(starts) != len(seqs) || len(seqs) < 2 {
		t.Errorf("%d connections sent, their slices start at %v: want each its own, at least two", len(seqs), starts)
	}
	o.Workers = 0
	if _, err := NewKV(o); err == nil || !strings.Contains(err.Error(), "-c") {
		t.Errorf("parallel keys without a VU count: %v", err)
	}
}

// TestKVSameSequenceRedisAndOurs: with one seed, redis-server (recorded by
// MONITOR) and our store (recorded by a proxy in front of it) receive the
// same commands, keys and values in the same order: the preload first,
// every key once in order, then each connection exactly the stream its
// VU draws (a prefix of it: -n shares the requests among VUs as they
// finish). With one VU the two recordings are equal whole. Redis's own
// view also gives the share of the traffic on the top 1% of keys: within
// 2 percentage points of the distribution's (Zipf 0.99, and a Gaussian).
func TestKVSameSequenceRedisAndOurs(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const keys = 2000
	for _, tc := range []struct {
		dist string
		vus  int
		n    int64
	}{
		{"zipf:0.99", 1, 2000},
		{"zipf:0.99", 4, 12000},
		{"gaussian", 3, 12000},
	} {
		t.Run(fmt.Sprintf("%s/c=%d", tc.dist, tc.vus), func(t *testing.T) {
			sp, err := keydist.Parse(tc.dist)
			if err != nil {
				t.Fatal(err)
			}
			o := KVOptions{Name: ScenarioKVMixed, Keys: keys, KeyDist: sp, Ratio: Ratio{Set: 2, Get: 7, Del: 1}, Pipeline: 8,
				Sizes: keydist.Sizes{Min: 1, Max: 64}, ExpiryMin: time.Minute, ExpiryMax: time.Hour, MissRatio: 0.05, Seed: 11}
			r.do(t, "FLUSHALL") // the preload rewrites every key on both servers
			var got [2][][]string
			for i := range got {
				ko := o
				var rec *recording
				var stop func()
				if i == 0 {
					rec, stop = monitor(t, r)
					ko.URL = r.URL()
				} else {
					ko.URL, rec = recordingProxy(t, srv.RESPAddr())
				}
				res := runKV(t, load.Options{Options: results.Options{Concurrency: tc.vus, Requests: tc.n}}, ko)
				if res.Failed != 0 || res.Requests != tc.n {
					t.Fatalf("server %d: %d requests, %d failed %v", i, res.Requests, res.Failed, res.Failures)
				}
				if stop != nil {
					stop()
				} else {
					rec.waitFor(keys + int(tc.n)) // the preload's and the VUs'
				}
				got[i] = rec.sequences()
			}
			want := expectedStreams(t, o, tc.vus, int(tc.n))
			for i, seqs := range got {
				name := []string{"redis-server (MONITOR)", "wirebench (proxy)"}[i]
				if len(seqs) != tc.vus+1 {
					t.Fatalf("%s: %d connections, want the preload's and %d VUs'", name, len(seqs), tc.vus)
				}
				pre := seqs[0]
				if len(pre) != keys || !strings.HasPrefix(pre[0], "SET key:000000000000 ") || !strings.HasPrefix(pre[keys-1], "SET key:000000001999 ") {
					t.Fatalf("%s: the preload sent %d commands, %.40q .. : want every key once, in order", name, len(pre), pre[0])
				}
				total, hot := 0, 0
				sc, _ := NewKV(KVOptions{Name: ScenarioKVGet, URL: "redis://x:1", Keys: keys, KeyDist: sp})
				d := sc.dist
				used := make([]bool, tc.vus)
				for _, seq := range seqs[1:] {
					match := slices.IndexFunc(want, func(w []string) bool { return len(seq) <= len(w) && slices.Equal(seq, w[:len(seq)]) })
					if match < 0 || used[match] {
						t.Fatalf("%s: a connection's %d commands (%.60q, ...) are no VU's stream", name, len(seq), seq[0])
					}
					used[match] = true
					for _, cmd := range seq {
						f := strings.Fields(cmd)
						_, num, _ := strings.Cut(f[1], ":") // key:N, or nokey:N drawn alike
						k, err := strconv.ParseInt(num, 10, 64)
						total++
						if err == nil && d.Hot(k) {
							hot++
						}
					}
				}
				if total != int(tc.n) {
					t.Errorf("%s: %d commands recorded, sent %d", name, total, tc.n)
				}
				share, exp := float64(hot)/float64(total), d.HotShare()
				t.Logf("%s: top 1%% of keys took %.4f of %d commands, expected %.4f", name, share, total, exp)
				if math.Abs(share-exp) > 0.02 {
					t.Errorf("%s: top 1%% of keys took %.4f of the commands, want %.4f ± 0.02", name, share, exp)
				}
			}
			if tc.vus == 1 && !slices.Equal(got[0][1], got[1][1]) {
				t.Errorf("one VU: redis-server and wirebench received different sequences (%d and %d commands)", len(got[0][1]), len(got[1][1]))
			}
		})
	}
}
