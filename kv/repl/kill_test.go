package repl_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/server"
)

// TestFollowerKill9Resumes kills a follower process with SIGKILL while it
// streams, restarts it on its AOF and checks that it resumes from the
// position stored with its data — no full resync — and ends equal to the
// leader.
func TestFollowerKill9Resumes(t *testing.T) {
	leader, err := server.Start(context.Background(), server.Options{
		HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0", AuthToken: token,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	lc, err := rdial(leader.RESPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer lc.close()
	lc.do("AUTH", token)
	dir := t.TempDir()
	env := []string{followerEnv + "=http://" + leader.HTTPAddr(), followerEnv + "_DIR=" + dir}
	write := func(from, to int) {
		for i := from; i < to; i++ { // pipelined in batches of 100
			lc.send("SET", "k"+strconv.Itoa(i%7000), "v"+strconv.Itoa(i))
			if i%100 == 99 || i == to-1 {
				for j := i - i%100; j <= i; j++ {
					if _, err := lc.read(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	f := startChild(t, env...)
	write(0, 10000)
	time.Sleep(300 * time.Millisecond) // some of it streamed, some maybe not
	f.kill()
	write(10000, 15000)
	f = startChild(t, env...)
	defer f.kill()
	write(15000, 20000)
	fc, err := rdial(f.resp)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.close()
	fc.do("AUTH", token)
	// 30 s: generous for a busy 2-core box; a healthy run takes < 1 s.
	deadline := time.Now().Add(30 * time.Second)
	var info map[string]string
	for {
		want := leaderPos(t, lc)
		v, err := fc.do("INFO", "replication")
		if err != nil {
			t.Fatal(err)
		}
		info = map[string]string{}
		for _, line := range strings.Split(v.(string), "\r\n") {
			if k, val, ok := strings.Cut(line, ":"); ok {
				info[k] = val
			}
		}
		if info["master_replid"] == want.ID && info["slave_repl_offset"] == fmt.Sprint(want.Offset) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no convergence: leader %+v, follower %v", want, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info["wirebench_resyncs"] != "0" || info["wirebench_applied_records"] == "0" {
		t.Fatalf("after kill -9 the follower did not resume from its stored position: %v", info)
	}
	l, fd := leaderData(t, lc), leaderData(t, fc)
	if len(l) != 7000 || len(fd) != len(l) {
		t.Fatalf("leader %d keys, follower %d", len(l), len(fd))
	}
	for k, v := range l {
		if fd[k] != v {
			t.Fatalf("key %s: leader %q, follower %q", k, v, fd[k])
		}
	}
}
