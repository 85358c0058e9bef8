package resp

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// childEnv makes the test binary a RESP server over an AOF in that
// directory (see TestMain), so the parent can kill -9 it.
const childEnv = "WIREBENCH_KV_KILL_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		minSize, _ := strconv.ParseInt(os.Getenv(childEnv+"_REWRITE_MIN"), 10, 64)
		runChild(dir, kv.FsyncPolicy(os.Getenv(childEnv+"_FSYNC")), minSize)
		return
	}
	os.Exit(m.Run())
}

// runChild serves; rewriteMin > 0 rewrites the AOF each time it doubles
// from that size, so that kills land in rewrites too.
func runChild(dir string, pol kv.FsyncPolicy, rewriteMin int64) {
	st, err := kv.Open(kv.Options{Dir: dir, Fsync: pol, RewriteMinSize: rewriteMin})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	srv, err := Listen("127.0.0.1:0", st, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("addr", srv.Addr())
	select {} // until killed
}

// killTrials: CI runs the full count; -short a few.
func killTrials(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("WIREBENCH_KV_KILL_TRIALS")); err == nil {
		return n
	}
	if testing.Short() {
		return 5
	}
	return 50
}

// appendChunk is what the i-th command of a writer appends: varied
// lengths, so a record replayed twice or skipped changes the value.
func appendChunk(i int) string { return fmt.Sprint("[", i, strings.Repeat("x", i%7), "]") }

// TestKill9LosesNoAcknowledgedWrite starts a server process with
// appendfsync always, has 8 connections write (SET of unique keys, INCR of
// a counter and APPEND to a log per connection), kills it with SIGKILL at a random moment,
// and checks that the recovered store holds every write a client saw
// acknowledged. A few trials run everysec too: a process crash must not
// lose its acknowledged writes either (they were written to the OS).
// Every third trial rewrites the AOF whenever it doubles from 4 KiB, so
// kills land in rewrites (the snapshot, its fsync, the switch).
func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	n := killTrials(t)
	lost, appended := 0, 0
	for trial := range n + n/5 {
		pol := kv.FsyncAlways
		if trial >= n {
			pol = kv.FsyncEverySec
		}
		l, appends := killTrial(t, trial, pol)
		lost += l
		appended += appends
	}
	if appended == 0 {
		t.Fatal("no APPEND was acknowledged in any trial: the APPEND check never ran")
	}
	t.Logf("%d acknowledged APPENDs checked", appended)
	if lost > 0 {
		t.Fatalf("%d acknowledged writes lost", lost)
	}
}

func killTrial(t *testing.T, trial int, pol kv.FsyncPolicy) (lost, appends int) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childEnv+"_FSYNC="+string(pol))
	if trial%3 == 1 {
		cmd.Env = append(cmd.Env, childEnv+"_REWRITE_MIN=4096")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "addr ") {
		cmd.Process.Kill()
		t.Fatalf("child: %q, %v", line, err)
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "addr "))

	type ack struct {
		key, val string
		counter  int64 // the INCR reply, 0 for a SET
	}
	const writers = 8
	acks := make([][]ack, writers)
	var wg sync.WaitGroup
	for w := range writers {
		c := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				var args []string
				switch i % 4 {
				case 3:
					args = []string{"INCR", fmt.Sprint("ctr", w)}
				case 2: // logged as the command: replay must rebuild the value
					args = []string{"APPEND", fmt.Sprint("log", w), appendChunk(i)}
				default:
					args = []string{"SET", fmt.Sprint("k", w, "-", i), fmt.Sprint("v", trial, "-", i)}
				}
				if c.send(args...) != nil {
					return
				}
				r, err := c.read()
				if err != nil {
					return // killed
				}
				switch {
				case args[0] == "SET" && r == "+OK":
					acks[w] = append(acks[w], ack{key: args[1], val: args[2]})
				case (args[0] == "INCR" || args[0] == "APPEND") && strings.HasPrefix(r, ":"):
					n, _ := strconv.ParseInt(r[1:], 10, 64)
					acks[w] = append(acks[w], ack{key: args[1], counter: n})
				default:
					panic(fmt.Sprintf("reply to %q: %s", args, r))
				}
			}
		}()
	}
	time.Sleep(time.Duration(10+rand.IntN(60)) * time.Millisecond)
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	wg.Wait()

	st, err := kv.Open(kv.Options{Dir: dir})
	if err != nil {
		t.Fatalf("trial %d (%s): recovery: %v", trial, pol, err)
	}
	defer st.Close()
	total := 0
	for w := range writers {
		for _, a := range acks[w] {
			total++
			v, _, ok := st.Get(a.key)
			if strings.HasPrefix(a.key, "log") {
				appends++
				// The value is the chunks of i = 2, 6, 10, ... in order;
				// at least a.counter bytes of it were acknowledged.
				var want strings.Builder
				for i := 2; want.Len() < len(v); i += 4 {
					want.WriteString(appendChunk(i))
				}
				if !ok || int64(len(v)) < a.counter || want.String() != string(v) {
					lost++
					t.Errorf("trial %d (%s): %s acknowledged at %d bytes, recovered %d bytes %.40q", trial, pol, a.key, a.counter, len(v), v)
				}
				continue
			}
			if a.counter != 0 {
				n, _ := kv.ParseInt(v)
				if !ok || n < a.counter {
					lost++
					t.Errorf("trial %d (%s): %s acknowledged at %d, recovered %q", trial, pol, a.key, a.counter, v)
				}
				continue
			}
			if !ok || string(v) != a.val {
				lost++
				t.Errorf("trial %d (%s): %s=%s acknowledged, recovered %q, %v", trial, pol, a.key, a.val, v, ok)
			}
		}
	}
	if total == 0 {
		t.Logf("trial %d (%s): killed before any acknowledgement", trial, pol)
	}
	return lost, appends
}
