package repl_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/repl"
	"github.com/wirebench/wirebench/server"
)

// childEnv makes the test binary a leader server over an AOF in that
// directory (see TestMain), so that the test can kill -9 it.
const childEnv = "WIREBENCH_REPL_LEADER_CHILD"

const token = "chaos-token"

// followerEnv makes the test binary a follower of that leader URL, over
// the AOF in followerEnv_DIR (TestFollowerKill9Resumes).
const followerEnv = "WIREBENCH_REPL_FOLLOWER_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		runLeader(dir)
		return
	}
	if leader := os.Getenv(followerEnv); leader != "" {
		srv, err := server.Start(context.Background(), server.Options{
			HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0",
			KV:        kv.Options{Dir: os.Getenv(followerEnv + "_DIR"), Fsync: kv.FsyncEverySec},
			Repl:      repl.Options{ReplicaOf: leader, Token: token},
			AuthToken: token,
		})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("listening", srv.HTTPAddr(), srv.RESPAddr())
		select {}
	}
	os.Exit(m.Run())
}

func runLeader(dir string) {
	srv, err := server.Start(context.Background(), server.Options{
		HTTPAddr: "127.0.0.1:0", NoGRPC: true, NoHTTP: false, RESPAddr: "127.0.0.1:0",
		// A small rewrite threshold compacts the AOF often; a small
		// backlog makes a follower cut off for a moment resync from a
		// snapshot in the same history.
		KV:        kv.Options{Dir: dir, Fsync: kv.FsyncEverySec, RewriteMinSize: 32 << 10, RewritePercent: 50},
		Repl:      repl.Options{Backlog: 16 << 10},
		AuthToken: token,
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("listening", srv.HTTPAddr(), srv.RESPAddr())
	select {} // until killed
}

type leaderProc struct {
	cmd        *exec.Cmd
	http, resp string
}

func startLeader(t *testing.T, dir string) *leaderProc {
	t.Helper()
	return startChild(t, childEnv+"="+dir)
}

// startChild starts the test binary as a server with env.
func startChild(t *testing.T, env ...string) *leaderProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr // a panic or a race report in the child shows
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "listening" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("server child: %q %v", line, err)
	}
	return &leaderProc{cmd: cmd, http: f[1], resp: f[2]}
}

func (l *leaderProc) kill() {
	l.cmd.Process.Kill() // SIGKILL
	l.cmd.Wait()
}

// applyLog checks that the follower applies each record once, in order:
// after a snapshot at record S of a history the next is S+1, after record
// N the next is N+1, across the follower's restarts too.
type applyLog struct {
	mu      sync.Mutex
	last    map[string]uint64
	applied int
	snaps   int
	bad     []string
}

func (a *applyLog) onApply(p repl.Position, snapshot bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if snapshot {
		a.last[p.ID] = p.Seq
		a.snaps++
		return
	}
	a.applied++
	if l, ok := a.last[p.ID]; !ok || p.Seq != l+1 {
		if len(a.bad) < 10 {
			a.bad = append(a.bad, fmt.Sprintf("history %.8s: record %d applied after %d (known %v)", p.ID, p.Seq, l, ok))
		}
	}
	a.last[p.ID] = p.Seq
}

func chaosSize() (events int, writeFor time.Duration) {
	if n, err := strconv.Atoi(os.Getenv("WIREBENCH_REPL_CHAOS_EVENTS")); err == nil && n > 0 {
		return n, 300 * time.Millisecond
	}
	if testing.Short() {
		return 6, 250 * time.Millisecond
	}
	return 12, 300 * time.Millisecond
}

// TestChaos: one writer sends random SETs (some with expiries), DELs,
// PEXPIREs, PERSISTs, INCRs, APPENDs and MSETs to a leader process while
// the test cuts and slows the follower's link (a proxy), compacts the
// leader's AOF, kills it with SIGKILL and restarts it, and restarts the
// follower. At the end the follower must hold exactly the leader's keys,
// values and expiry presence, and have applied every record once, in
// order.
func TestChaos(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("WIREBENCH_REPL_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (WIREBENCH_REPL_SEED reproduces the schedule; timing still varies)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	nEvents, writeFor := chaosSize()
	ldir, fdir := t.TempDir(), t.TempDir()

	leader := startLeader(t, ldir)
	defer func() { leader.kill() }()
	px, err := newProxy(leader.http)
	if err != nil {
		t.Fatal(err)
	}
	defer px.close()
	log := &applyLog{last: map[string]uint64{}}
	startFollower := func() *server.Server {
		srv, err := server.Start(context.Background(), server.Options{
			HTTPAddr: "127.0.0.1:0", NoGRPC: true,
			KV:        kv.Options{Dir: fdir, Fsync: kv.FsyncEverySec, RewriteMinSize: 32 << 10, RewritePercent: 50},
			Repl:      repl.Options{ReplicaOf: "http://" + px.addr(), Token: token, OnApply: log.onApply, MaxBackoff: 300 * time.Millisecond},
			AuthToken: token,
		})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	follower := startFollower()
	defer func() { follower.Close() }()
	var seqErrors int64

	var leaderRESP atomic.Value
	leaderRESP.Store(leader.resp)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ops, failed atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		writer(rand.New(rand.NewPCG(seed, 2)), &leaderRESP, stop, &ops, &failed)
	}()

	// Every kind of event happens at least once, in a random order.
	kinds := []string{"cut", "slow", "rewrite", "kill-leader", "restart-follower"}
	for len(kinds) < nEvents {
		kinds = append(kinds, kinds[rng.IntN(5)])
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for _, k := range kinds {
		time.Sleep(writeFor)
		switch k {
		case "cut":
			px.cut(true)
			time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
			px.set(func(p *proxy) { p.down = false })
		case "slow":
			px.set(func(p *proxy) { p.delay = time.Duration(2+rng.IntN(10)) * time.Millisecond })
			time.Sleep(writeFor)
			px.set(func(p *proxy) { p.delay = 0 })
		case "rewrite":
			if c, err := rdial(leaderRESP.Load().(string)); err == nil {
				c.do("AUTH", token)
				c.do("BGREWRITEAOF")
				c.close()
			}
		case "kill-leader":
			leader.kill()
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			leader = startLeader(t, ldir)
			px.set(func(p *proxy) { p.target = leader.http })
			px.cut(false) // connections to the dead leader are dead too
			leaderRESP.Store(leader.resp)
		case "restart-follower":
			seqErrors += follower.Repl.Follower.Status().SeqErrors
			if err := follower.Close(); err != nil {
				t.Errorf("closing the follower: %v", err)
			}
			follower = startFollower()
		}
		t.Logf("event %s; %d writes so far (%d failed)", k, ops.Load(), failed.Load())
	}
	time.Sleep(writeFor)
	close(stop)
	wg.Wait()
	px.set(func(p *proxy) { p.down, p.delay = false, 0 })

	// Converge: the follower reaches the leader's history and offset.
	// 60 s is generous on purpose: a 2-core box shared by many builds can
	// stall a resync for seconds; a healthy run takes well under one.
	c, err := rdial(leader.resp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if _, err := c.do("AUTH", token); err != nil {
		t.Fatal(err)
	}
	var want repl.Position
	deadline := time.Now().Add(60 * time.Second)
	for {
		want = leaderPos(t, c)
		st := follower.Repl.Follower.Status()
		if st.Pos.ID == want.ID && st.Pos.Offset >= want.Offset && st.Link { // the leader read first
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no convergence: leader %+v, follower %+v", want, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Short expiries (<= 300 ms) pass on both sides before comparing.
	time.Sleep(400 * time.Millisecond)
	lkeys := leaderData(t, c)
	fkeys := map[string]string{}
	st := follower.KV
	st.Keys(func(k string) bool {
		if v, exp, ok := st.Get(k); ok {
			fkeys[k] = fmt.Sprintf("%s ttl=%v", v, exp != 0)
		}
		return true
	})
	diff := 0
	for k, v := range lkeys {
		if fkeys[k] != v {
			if diff++; diff <= 10 {
				t.Errorf("key %q: leader %q, follower %q", k, v, fkeys[k])
			}
		}
	}
	for k, v := range fkeys {
		if _, ok := lkeys[k]; !ok {
			if diff++; diff <= 10 {
				t.Errorf("key %q only on the follower: %q", k, v)
			}
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, b := range log.bad {
		t.Error(b)
	}
	fs := follower.Repl.Follower.Status()
	if seqErrors += fs.SeqErrors; seqErrors > 0 {
		t.Errorf("the leader sent %d records out of sequence", seqErrors)
	}
	t.Logf("%d writes (%d failed while the leader was down), leader %d keys, follower applied %d records (%d in this process) and %d snapshots, %d reconnects in this process",
		ops.Load(), failed.Load(), len(lkeys), log.applied, fs.Applied, log.snaps, fs.Reconnects)
	if len(lkeys) == 0 || log.applied == 0 {
		t.Fatal("nothing was replicated: the test proves nothing")
	}
}

func leaderPos(t *testing.T, c *rclient) repl.Position {
	v, err := c.do("INFO", "replication")
	if err != nil {
		t.Fatal(err)
	}
	var p repl.Position
	for _, line := range strings.Split(v.(string), "\r\n") {
		k, val, _ := strings.Cut(line, ":")
		switch k {
		case "master_replid":
			p.ID = val
		case "master_repl_offset":
			p.Offset, _ = strconv.ParseInt(val, 10, 64)
		}
	}
	return p
}

// leaderData reads every key's value and expiry presence.
func leaderData(t *testing.T, c *rclient) map[string]string {
	v, err := c.do("KEYS", "*")
	if err != nil {
		t.Fatal(err)
	}
	keys := v.([]any)
	for _, k := range keys {
		c.send("GET", k.(string))
		c.send("PTTL", k.(string))
	}
	out := map[string]string{}
	for _, k := range keys {
		val, err1 := c.read()
		ttl, err2 := c.read()
		if err1 != nil || err2 != nil {
			t.Fatalf("reading %v: %v %v", k, err1, err2)
		}
		if val == nil {
			continue // expired between KEYS and GET
		}
		out[k.(string)] = fmt.Sprintf("%s ttl=%v", val, ttl.(int64) >= 0)
	}
	return out
}

// writer sends random writes until stop, reconnecting while the leader
// is down.
func writer(rng *rand.Rand, addr *atomic.Value, stop chan struct{}, ops, failed *atomic.Int64) {
	var c *rclient
	// Many keys, each written a few times: a record the follower lost
	// is rarely overwritten before the end, so the comparison sees it.
	key := func() string { return "k" + strconv.Itoa(rng.IntN(20000)) }
	for i := 0; ; i++ {
		select {
		case <-stop:
			if c != nil {
				c.close()
			}
			return
		default:
		}
		if c == nil {
			var err error
			if c, err = rdial(addr.Load().(string)); err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if _, err := c.do("AUTH", token); err != nil {
				c.close()
				c = nil
				continue
			}
		}
		val := fmt.Sprintf("v%d-%s", i, strings.Repeat("x", rng.IntN(120)))
		var args []string
		switch r := rng.IntN(100); {
		case r < 40:
			args = []string{"SET", key(), val}
		case r < 50:
			args = []string{"SET", key(), val, "PX", strconv.Itoa(30 + rng.IntN(270))}
		case r < 55:
			args = []string{"SET", key(), val, "EX", "3600"}
		case r < 67:
			args = []string{"DEL", key(), key()}
		case r < 72:
			args = []string{"PEXPIRE", key(), strconv.Itoa(30 + rng.IntN(270))}
		case r < 76:
			args = []string{"PERSIST", key()}
		case r < 86:
			args = []string{"INCR", "ctr" + strconv.Itoa(rng.IntN(10))}
		case r < 92:
			args = []string{"APPEND", key(), "+" + strconv.Itoa(i)}
		case r < 99:
			args = []string{"MSET", key(), val, key(), val + "b"}
		default:
			args = []string{"SET", key(), val}
		}
		if i == 3000 { // once: the whole store goes (a record on all shards)
			args = []string{"FLUSHALL"}
		}
		if _, err := c.do(args...); err != nil {
			if _, ok := err.(respErr); !ok { // APPEND/INCR on a wrong value is fine
				failed.Add(1)
				c.close()
				c = nil
				continue
			}
		}
		ops.Add(1)
	}
}
