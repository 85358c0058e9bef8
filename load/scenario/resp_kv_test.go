package scenario

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

func runKV(t *testing.T, o load.Options, ko KVOptions) *results.Load {
	t.Helper()
	sc, err := NewKV(ko)
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestKVRESPCountsMatchRedis runs kv-set and kv-get against a real
// redis-server and compares what we counted with what Redis counted:
// commands per type, keys, the bytes on the socket both ways, and the
// reads Redis made — which show the pipeline depth: with -P 16 every
// batch arrives whole (fewer reads than batches would mean more than P
// commands in flight; many more, that batches are not written at once).
func TestKVRESPCountsMatchRedis(t *testing.T) {
	for _, p := range []int{1, 16} {
		t.Run("P="+strconv.Itoa(p), func(t *testing.T) {
			r := &redisServer{testkit.StartRedis(t)}
			const n, keys = 1600, 1000
			r.do(t, "CONFIG", "RESETSTAT")
			res := runKV(t, load.Options{Options: results.Options{Concurrency: 1, Requests: n}}, KVOptions{Name: ScenarioKVSet, URL: r.URL(), Keys: keys, Pipeline: p})
			in := r.info(t) // this INFO: one more read, its 23 bytes in, its reply not yet out
			if res.Requests != n || res.Failed != 0 || in["calls_set"] != n {
				t.Fatalf("kv-set: requests %d failed %d (%v); redis counted %d SETs", res.Requests, res.Failed, res.Failures, in["calls_set"])
			}
			if in["keys"] < 1 || in["keys"] > keys {
				t.Errorf("redis holds %d keys, want 1..%d", in["keys"], keys)
			}
			const infoCmd = len("*2\r\n$4\r\nINFO\r\n$3\r\nall\r\n")
			if got := in["total_net_input_bytes"] - int64(infoCmd); got != res.Bytes.WireOut {
				t.Errorf("bytes sent: we counted %d, redis received %d", res.Bytes.WireOut, got)
			}
			if got := in["total_net_output_bytes"] - int64(len("+OK\r\n")); got != res.Bytes.WireIn { // RESETSTAT's reply went out after the reset
				t.Errorf("bytes received: we counted %d, redis sent %d", res.Bytes.WireIn, got)
			}
			if want := int64(n * len("+OK\r\n")); res.Bytes.WireIn != want {
				t.Errorf("bytes received %d, want %d (+OK per SET)", res.Bytes.WireIn, want)
			}
			batches := int64(n / p)
			if reads := in["total_reads_processed"] - 1; reads < batches || reads > 2*batches+2 {
				t.Errorf("redis made %d reads for %d batches of %d: the pipeline depth is not respected", reads, batches, p)
			}

			r.do(t, "CONFIG", "RESETSTAT")
			res = runKV(t, load.Options{Options: results.Options{Concurrency: 4, Requests: n}}, KVOptions{Name: ScenarioKVGet, URL: r.URL(), Keys: keys, Pipeline: p})
			in = r.info(t)
			if res.Requests != n || res.Failed != 0 || in["calls_get"] != n || in["calls_set"] != keys || in["keys"] != keys {
				t.Fatalf("kv-get: requests %d failed %d (%v); redis counted %d GETs, %d SETs (the preload), %d keys",
					res.Requests, res.Failed, res.Failures, in["calls_get"], in["calls_set"], in["keys"])
			}
			if in["keyspace_hits"] != n || in["keyspace_misses"] != 0 {
				t.Errorf("redis: %d hits, %d misses; want %d, 0", in["keyspace_hits"], in["keyspace_misses"], n)
			}
			if want := int64(n * 128); res.Bytes.BodyIn != want {
				t.Errorf("values received: %d bytes, want %d", res.Bytes.BodyIn, want)
			}
		})
	}
}

// TestKVMixedRedis: kv-mixed sends both operations, each counted apart,
// and Redis agrees on each.
func TestKVMixedRedis(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	const n = 2000
	r.do(t, "CONFIG", "RESETSTAT")
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, KVOptions{Name: ScenarioKVMixed, URL: r.URL(), Keys: 500, Pipeline: 8, ValueSize: 40})
	in := r.info(t)
	if res.Failed != 0 || res.Requests != n || len(res.Ops) != 2 {
		t.Fatalf("requests %d failed %d %v ops %d", res.Requests, res.Failed, res.Failures, len(res.Ops))
	}
	if res.Ops[0].Requests+500 != in["calls_set"] || res.Ops[1].Requests != in["calls_get"] || res.Ops[0].Requests < n/4 || res.Ops[1].Requests < n/4 {
		t.Errorf("we sent %d SET + 500 preloaded, %d GET; redis counted %d SET, %d GET", res.Ops[0].Requests, res.Ops[1].Requests, in["calls_set"], in["calls_get"])
	}
}

// TestKVWrongValueRedis corrupts one key after the preload: every GET of
// it, and only those, fails the check. The count is exact: one VU draws
// its keys from a seeded generator, replayed here.
func TestKVWrongValueRedis(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	const n, keys, bad = 500, 20, 7
	sc, err := NewKV(KVOptions{Name: ScenarioKVGet, URL: r.URL(), Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	s := sc
	s.once.Do(func() { s.preloadErr = s.preload(context.Background()) })
	if s.preloadErr != nil {
		t.Fatal(s.preloadErr)
	}
	good := string(appendKVValue(nil, bad, 128))
	r.do(t, "SET", string(appendKVKey(nil, bad)), good[:127]+"x") // one byte off
	r.do(t, "SET", string(appendKVKey(nil, bad+1)), good)         // another key's value
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: n}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	src := s.dist.Source(1, 0) // VU 0's draws (NewVU): the keys alone, kv-get has one command
	want := int64(0)
	for range n {
		if k := src.Key(); k == bad || k == bad+1 {
			want++
		}
	}
	if res.Failures[kvCheckFail] != want || res.Failed != want || want == 0 {
		t.Fatalf("failures %v (failed %d), want %d × %q", res.Failures, res.Failed, want, kvCheckFail)
	}
	r.do(t, "DEL", string(appendKVKey(nil, 3)))
	res, err = load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: n}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures[kvMissingFail] == 0 {
		t.Errorf("a deleted key was not reported missing: %v", res.Failures)
	}
}

// TestKVRESPServerKillsClients: Redis drops every client mid-run (CLIENT
// KILL); the requests in flight fail as a closed connection does for
// HTTP, the VUs reconnect, and the run goes on.
func TestKVRESPServerKillsClients(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			time.Sleep(60 * time.Millisecond)
			r.command(t, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
		}
	}()
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 4, Duration: 500 * time.Millisecond}}, KVOptions{Name: ScenarioKVSet, URL: r.URL(), Pipeline: 4})
	<-done
	if res.Requests-res.Failed < 100 {
		t.Fatalf("only %d of %d requests succeeded: the VUs did not reconnect (%v)", res.Requests-res.Failed, res.Requests, res.Failures)
	}
	for reason := range res.Failures {
		switch reason {
		case clientio.ErrClosedBefore.Error(), clientio.ErrClosedDuring.Error(), "connection reset":
		default:
			t.Errorf("unexpected failure %q (%v)", reason, res.Failures)
		}
	}
	if res.Failed == 0 {
		t.Errorf("no request failed although every client was killed 5 times")
	}
}

// fakeRESP is a RESP peer that misbehaves on purpose: it reads one
// command and answers with reply (possibly cut short), then closes; with
// keep, it answers every read so and keeps the connection.
func fakeRESP(t *testing.T, reply string, keep bool) string {
	t.Helper()
	return "redis://" + loadtest.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			c.Write([]byte(reply))
			if !keep {
				return
			}
		}
	})
}

// TestKVRESPClosedConnections: a server that closes before replying, or
// in the middle of a reply, or that answers nonsense, is counted by the
// same reasons as an HTTP server doing the same.
func TestKVRESPClosedConnections(t *testing.T) {
	for _, tc := range []struct {
		reply, want string
		keep        bool
	}{
		{"", clientio.ErrClosedBefore.Error(), false},
		{"$128\r\n000000000001.0000", clientio.ErrClosedDuring.Error(), false},
		{"+O", clientio.ErrClosedDuring.Error(), false},
		{"HTTP/1.1 200 OK\r\n\r\n", "malformed response", true},
		{"-ERR something broke\r\n", "error reply ERR", true},
		{"-WRONGTYPE Operation against a key\r\n", "error reply WRONGTYPE", true},
		{":1\r\n", "check: SET reply ':', want +OK", true},
	} {
		res := runKV(t, load.Options{Options: results.Options{Concurrency: 1, Requests: 5}}, KVOptions{Name: ScenarioKVSet, URL: fakeRESP(t, tc.reply, tc.keep), Timeout: 2 * time.Second})
		if res.Requests != 5 || res.Failures[tc.want] != 5 {
			t.Errorf("reply %q: %d requests, failures %v; want 5 × %q", tc.reply, res.Requests, res.Failures, tc.want)
		}
	}
}

// TestPeerKVVersusRedisBenchmark runs redis-benchmark and our client with the
// seed's settings against one redis-server, at -P 1 and -P 16, and
// bounds our rate within a factor of 8 of redis-benchmark's, either way.
// Generous: the suite runs on a noisy 2-core box shared with other jobs,
// where the two clients' runs see different neighbours, and our client
// may use both CPUs where redis-benchmark is one thread (measured on such
// a box: 1.0–1.2× at -P 16, 1.7–3.0× at -P 1). Below, our client would
// be what limits the Redis cells of study kv; far above, it would be
// miscounting. The measured ratio is logged.
func TestPeerKVVersusRedisBenchmark(t *testing.T) {
	testkit.NeedPeers(t) // rates beside a peer tool: CI's peer step (docs/testing.md)
	bench := testkit.NeedTool(t, "redis-benchmark", "apt-get install -y redis-tools")
	r := &redisServer{testkit.StartRedis(t)}
	n := 20000
	if testing.Short() {
		n = 5000
	}
	for _, p := range []int{1, 16} {
		host, port, _ := net.SplitHostPort(r.Addr)
		out, err := exec.Command(bench, "-h", host, "-p", port, "-c", "50", "-n", strconv.Itoa(n), "-r", "10000", "-d", "128",
			"-P", strconv.Itoa(p), "-t", "set,get", "--csv").CombinedOutput()
		if err != nil {
			t.Fatalf("redis-benchmark: %v: %s", err, out)
		}
		theirs := parseRedisBenchmarkCSV(string(out))
		for _, sc := range []string{ScenarioKVSet, ScenarioKVGet} {
			op := strings.ToUpper(strings.TrimPrefix(sc, "kv-"))
			res := runKV(t, load.Options{Options: results.Options{Concurrency: 50, Requests: int64(n)}}, KVOptions{Name: sc, URL: r.URL(), Pipeline: p})
			if res.Failed != 0 {
				t.Fatalf("%s -P %d: %d failed %v", sc, p, res.Failed, res.Failures)
			}
			ratio := res.RPS() / theirs[op]
			t.Logf("-P %-2d %s: wirebench %.0f/s, redis-benchmark %.0f/s: ratio %.2f", p, op, res.RPS(), theirs[op], ratio)
			if theirs[op] == 0 || ratio < 1.0/8 || ratio > 8 {
				t.Errorf("-P %d %s: wirebench %.0f/s is not within 8× of redis-benchmark's %.0f/s", p, op, res.RPS(), theirs[op])
			}
		}
	}
}

// TestKVPipelineRampAndDuration: pipelined VUs follow a closed-loop ramp
// (VUs join as the target grows) and stop with -d; every completed
// command is one counted request, as Redis counts it.
func TestKVPipelineRampAndDuration(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	r.do(t, "CONFIG", "RESETSTAT")
	res := runKV(t, load.Options{Options: results.Options{Stages: []results.Stage{{Duration: 300 * time.Millisecond, Target: 4}}, StartTarget: 1}}, KVOptions{Name: ScenarioKVSet, URL: r.URL(), Pipeline: 8})
	in := r.info(t)
	if res.Failed != 0 || res.Requests == 0 || res.Requests%8 != 0 || res.Interrupted != 0 || in["calls_set"] != res.Requests {
		t.Errorf("ramp: %d requests (%d failed, %d interrupted); redis counted %d SETs", res.Requests, res.Failed, res.Interrupted, in["calls_set"])
	}
	if in["connected_clients"] > 2 || in["total_connections_received"] > 5 {
		t.Errorf("%d clients connected, %d connections: want at most the ramp's 4 (+1 for INFO)", in["connected_clients"], in["total_connections_received"])
	}
}
