package grpcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/server"
)

// grpcurl, through reflection alone, sees the streaming RPCs with their
// kinds and receives 1000 users from the server stream of a server
// seeded with 1000, in order; it drives client and bidi streams too.
func TestGrpcurlStreams(t *testing.T) {
	grpcurl := testkit.NeedTool(t, "grpcurl", "go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4")
	srv, _ := dialWith(t, server.Options{SeedUsers: 1000})
	addr := srv.GRPCAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, grpcurl, append([]string{"-plaintext"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("grpcurl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("", addr, "list", "wirebench.v1.UserService")
	for _, m := range []string{"wirebench.v1.UserService.Stream", "wirebench.v1.UserService.CreateMany"} {
		if !strings.Contains(out, m+"\n") {
			t.Errorf("grpcurl list lacks %s:\n%s", m, out)
		}
	}
	out = run("", addr, "describe", "wirebench.v1.EchoService") + run("", addr, "describe", "wirebench.v1.UserService") + run("", addr, "describe", "wirebench.v1.TodoService")
	for _, want := range []string{
		"rpc Chat ( stream .wirebench.v1.EchoRequest ) returns ( stream .wirebench.v1.EchoResponse );",
		"rpc Stream ( .wirebench.v1.ListUsersRequest ) returns ( stream .wirebench.v1.User );",
		"rpc CreateMany ( stream .wirebench.v1.Todo ) returns ( .wirebench.v1.CreateManyReply );",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("grpcurl describe lacks %q:\n%s", want, out)
		}
	}

	dec := json.NewDecoder(bytes.NewReader([]byte(run("", "-d", "{}", addr, "wirebench.v1.UserService/Stream"))))
	n := 0
	for {
		var u struct{ ID string }
		if err := dec.Decode(&u); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("message %d: %v", n+1, err)
		}
		n++
		if want := srv.Store.ListUsers()[n-1].ID; u.ID != strconv.FormatInt(want, 10) { // protojson: int64 as a string
			t.Fatalf("message %d has id %s, want %d", n, u.ID, want)
		}
	}
	if n != 1000 {
		t.Fatalf("grpcurl received %d users, want 1000", n)
	}

	out = run(`{"text":"a"} {"text":"b"} {"text":"c"}`, "-d", "@", addr, "wirebench.v1.TodoService/CreateMany")
	if !strings.Contains(out, `"created": "3"`) {
		t.Errorf("CreateMany of 3: %s", out)
	}
	out = run(`{"first_message":"a","second_message":"1"} {"first_message":"b","second_message":"2"}`, "-d", "@", addr, "wirebench.v1.EchoService/Chat")
	if !strings.Contains(out, `"message": "a1"`) || !strings.Contains(out, `"message": "b2"`) || strings.Index(out, "a1") > strings.Index(out, "b2") {
		t.Errorf("Chat: %s", out)
	}
}
