package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/internal/idleread"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/pb"
)

// TestServeRealBinary starts the real binary on free ports and drives it with
// real HTTP and gRPC clients, then stops it with SIGTERM.
func TestServeRealBinary(t *testing.T) {
	bin := testkit.Binary(t)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--seed-users", "7", "--seed-todos", "3", "--json-lib", "fast")
	p, m := testkit.StartLine(t, cmd, listeningRE, time.Minute)
	httpAddr, grpcAddr := m[1], m[2]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, f := range codec.Formats() {
		e := codec.MustLookup(f)
		req, _ := http.NewRequest("GET", "http://"+httpAddr+"/users", nil)
		req.Header.Set("Accept", e.MediaTypes[0])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var list api.UserList
		if resp.StatusCode != 200 || e.Codec.Unmarshal(body, &list) != nil || len(list.Users) != 7 {
			t.Fatalf("%s: GET /users = %d, %d users", f, resp.StatusCode, len(list.Users))
		}
	}
	resp, err := http.Post("http://"+httpAddr+"/echo", "application/json", strings.NewReader(`{"first_message":"a","second_message":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"message":"ab"}` {
		t.Fatalf("echo = %d %s", resp.StatusCode, body)
	}

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	u, err := pb.NewUserServiceClient(conn).Create(ctx, &pb.User{Name: "Grace", Email: "grace@example.com"})
	if err != nil || u.Id != 8 {
		t.Fatalf("gRPC Create = %v, %v", u, err)
	}
	// The REST API sees what gRPC wrote: one store behind both.
	resp, err = http.Get("http://" + httpAddr + "/users/8")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("REST GET of the gRPC-created user: %d", resp.StatusCode)
	}

	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("serve exited with %v after SIGTERM; output %s", err, p.Log())
	}
}

func TestCLIExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Commands:"},
		{[]string{"help"}, 0, "serve"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"serve", "-h"}, 0, "-seed-users"},
		{[]string{"help", "serve"}, 0, "-json-lib"},
		{[]string{"serve", "--bogus"}, 2, "bogus"},
		{[]string{"serve", "--json-lib", "nope"}, 2, "json-lib"},
		{[]string{"serve", "-h"}, 0, "-write-timeout"},
		{[]string{"serve", "--read-timeout", "0s"}, 2, "read-timeout"},
		{[]string{"serve", "--h2-max-streams", "0"}, 2, "h2-max-streams"},
		{[]string{"serve", "--h2-stream-buffer", "4194304"}, 2, "h2-stream-buffer"},
		{[]string{"serve", "--max-reply-memory", "0"}, 2, "max-reply-memory"},
		{[]string{"serve", "--http", "256.0.0.1:1", "--no-grpc"}, 1, "listen"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, tc.args)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("wirebench %v: exit %d, want %d; output %q lacks %q", tc.args, code, tc.code, out.String()+errb.String(), tc.want)
		}
	}
}

// TestServeTwoProcsOnOneCPU: serve pinned to one CPU runs two Ps, so a
// large list's encoding never holds the only one (atLeastTwoProcs); a
// GOMAXPROCS the user set is kept. Serving RESP it runs two too: the
// event loop waits in epoll_wait itself on the first, the rest runs on
// the second.
func TestServeTwoProcsOnOneCPU(t *testing.T) {
	bin := testkit.Binary(t)
	for _, c := range []struct {
		env  string
		args []string
		want int
	}{{"", nil, 2}, {"GOMAXPROCS=1", nil, 1}, {"", []string{"--resp", "127.0.0.1:0"}, 2}} {
		args := append([]string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--cpus", "0"}, c.args...)
		cmd := exec.Command(bin, args...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMAXPROCS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		p, m := testkit.StartLine(t, cmd, regexp.MustCompile(`^listening http=(\S+)`), time.Minute)
		resp, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := -1
		for line := range strings.Lines(string(body)) {
			fmt.Sscanf(line, "go_sched_gomaxprocs_threads %d", &got)
		}
		if got != c.want {
			t.Errorf("serve --cpus 0 %q with %q: GOMAXPROCS %d, want %d", c.args, c.env, got, c.want)
		}
		p.Signal(syscall.SIGTERM)
		p.Wait()
	}
}

// atLeastTwoProcs tells idleread the CPUs the runtime chose before it
// raises GOMAXPROCS: with --cpus 0 (GOMAXPROCS 1 after pinning) or a
// one-CPU container quota, NumCPU is the host's, and the idle read's yield
// counted two processors it could never keep busy.
func TestTwoProcsKeepOneProcessor(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer idleread.CapProcessors(runtime.NumCPU())
	atLeastTwoProcs()
	if p, n := runtime.GOMAXPROCS(0), idleread.Processors(); p != 2 || n != 1 {
		t.Errorf("after atLeastTwoProcs on one P: GOMAXPROCS %d, idleread counts %d processors; want 2 and 1", p, n)
	}
}
