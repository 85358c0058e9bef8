package streamapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/grpcweb"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/pb/pbconnect"
	"github.com/wirebench/wirebench/server"
)

// h2c is an HTTP/2 client with prior knowledge (what gRPC needs).
func h2c() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

func rpcCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Each protocol connect-go speaks reaches the same services: unary, server
// streaming of 1000 users in order, client streaming, and (HTTP/2) bidi.
func TestConnectGRPCWebAndGRPCOnTheRESTPort(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 1000})
	base := "http://" + srv.HTTPAddr()
	for _, c := range []struct {
		name   string
		client *http.Client
		opts   []connect.ClientOption
		bidi   bool
	}{
		{"connect over HTTP/1.1", http.DefaultClient, nil, false},
		{"connect+json over HTTP/1.1", http.DefaultClient, []connect.ClientOption{connect.WithProtoJSON()}, false},
		{"grpc-web over HTTP/1.1", http.DefaultClient, []connect.ClientOption{connect.WithGRPCWeb()}, false},
		{"grpc over h2c", h2c(), []connect.ClientOption{connect.WithGRPC()}, true},
		{"connect over h2c", h2c(), nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := rpcCtx(t)
			users := pbconnect.NewUserServiceClient(c.client, base, c.opts...)
			got, err := users.Get(ctx, connect.NewRequest(&pb.GetUserRequest{Id: 7}))
			if err != nil || got.Msg.Id != 7 || got.Msg.Email != srv.Store.ListUsers()[6].Email {
				t.Fatalf("Get: %v %v", got, err)
			}
			_, err = users.Get(ctx, connect.NewRequest(&pb.GetUserRequest{Id: 1 << 40}))
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("Get of a missing id: %v, want not_found", err)
			}
			st, err := users.Stream(ctx, connect.NewRequest(&pb.ListUsersRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for st.Receive() {
				n++
				if st.Msg().Id != int64(n) {
					t.Fatalf("message %d has id %d", n, st.Msg().Id)
				}
			}
			if err := st.Err(); err != nil || n != 1000 {
				t.Fatalf("stream: %d users, %v", n, err)
			}
			cs := pbconnect.NewTodoServiceClient(c.client, base, c.opts...).CreateMany(ctx)
			for i := range 10 {
				if err := cs.Send(&pb.Todo{Text: fmt.Sprint("t", i)}); err != nil {
					t.Fatal(err)
				}
			}
			if r, err := cs.CloseAndReceive(); err != nil || r.Msg.Created != 10 {
				t.Fatalf("CreateMany: %v %v", r, err)
			}
			if !c.bidi {
				return
			}
			ch := pbconnect.NewEchoServiceClient(c.client, base, c.opts...).Chat(ctx)
			for i := range 100 {
				if err := ch.Send(&pb.EchoRequest{FirstMessage: fmt.Sprint(i), SecondMessage: "!"}); err != nil {
					t.Fatal(err)
				}
				r, err := ch.Receive()
				if err != nil || r.Message != fmt.Sprint(i, "!") {
					t.Fatalf("echo %d: %v %v", i, r, err)
				}
			}
			_ = ch.CloseRequest()
			if _, err := ch.Receive(); !errors.Is(err, io.EOF) {
				t.Fatalf("after CloseRequest: %v", err)
			}
		})
	}
}

// grpcWebGet is a gRPC-Web UserService/Get for id 1, byte for byte.
func grpcWebGet() []byte {
	m, _ := proto.Marshal(&pb.GetUserRequest{Id: 1})
	return grpcweb.AppendFrame(nil, 0, m)
}

// checkGRPCWebUser checks a gRPC-Web reply body: one data frame holding
// the user, then the trailer frame with grpc-status 0.
func checkGRPCWebUser(t *testing.T, srv *server.Server, body []byte) {
	t.Helper()
	u, _ := srv.Store.GetUser(1)
	r := grpcweb.NewReader(bytes.NewReader(body), 1<<20)
	flags, p, err := r.Next()
	var got pb.User
	if err != nil || flags != 0 || proto.Unmarshal(p, &got) != nil || got.Id != 1 || got.Email != u.Email {
		t.Fatalf("data frame: flags %#x %x %v (body %q)", flags, p, err, body)
	}
	flags, p, err = r.Next()
	if err != nil || flags != grpcweb.FlagTrailer {
		t.Fatalf("trailer frame: flags %#x %v", flags, err)
	}
	tr, err := grpcweb.ParseTrailers(p)
	if err != nil || tr.Get("grpc-status") != "0" {
		t.Fatalf("trailers %q: %v %v", p, tr, err)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the trailers: %v", err)
	}
}

// The exact bytes a browser's gRPC-Web client sends, with net/http.
func TestGRPCWebBytes(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 3})
	req, _ := http.NewRequest(http.MethodPost, "http://"+srv.HTTPAddr()+"/wirebench.v1.UserService/Get", bytes.NewReader(grpcWebGet()))
	req.Header.Set("Content-Type", "application/grpc-web+proto")
	req.Header.Set("X-Grpc-Web", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/grpc-web+proto" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkGRPCWebUser(t, srv, body)
}

// A gRPC-Web call made with curl is answered on the REST port.
func TestGRPCWebWithCurl(t *testing.T) {
	curl := testkit.NeedTool(t, "curl", "apt-get install -y curl")
	srv := start(t, server.Options{SeedUsers: 3})
	ctx := rpcCtx(t)
	cmd := exec.CommandContext(ctx, curl, "-sS", "--fail", "--http1.1",
		"-H", "Content-Type: application/grpc-web+proto", "-H", "X-Grpc-Web: 1",
		"--data-binary", "@-", "http://"+srv.HTTPAddr()+"/wirebench.v1.UserService/Get")
	cmd.Stdin = bytes.NewReader(grpcWebGet())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl: %v: %s", err, stderr.String())
	}
	checkGRPCWebUser(t, srv, out)
}

// A Connect or gRPC-Web message over the server's message limit (the body
// limit) is refused with resource_exhausted; the server stays up.
func TestConnectMessageLimit(t *testing.T) {
	srv := start(t, server.Options{HTTP: httpOpts(1024)})
	base := "http://" + srv.HTTPAddr()
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithGRPCWeb()}} {
		c := pbconnect.NewEchoServiceClient(http.DefaultClient, base, opts...)
		_, err := c.Echo(rpcCtx(t), connect.NewRequest(&pb.EchoRequest{FirstMessage: strings.Repeat("x", 2000)}))
		if connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Errorf("2000-byte message, limit 1024: %v", err)
		}
		r, err := c.Echo(rpcCtx(t), connect.NewRequest(&pb.EchoRequest{FirstMessage: "a", SecondMessage: "b"}))
		if err != nil || r.Msg.Message != "ab" {
			t.Errorf("small message: %v %v", r, err)
		}
	}
}

// A Connect or gRPC stream on the REST port that stays silent ends at the
// duration limit, as on the gRPC port.
func TestConnectStreamDurationLimit(t *testing.T) {
	srv := start(t, server.Options{MaxStreamDuration: 300 * time.Millisecond})
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithGRPC()}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ch := pbconnect.NewEchoServiceClient(h2c(), "http://"+srv.HTTPAddr(), opts...).Chat(ctx)
		start := time.Now()
		_ = ch.Send(nil) // open the stream, send nothing
		_, err := ch.Receive()
		if err == nil {
			t.Fatal("a silent chat received a message")
		}
		// Generous for a busy box; the client's own deadline is 30 s.
		if d := time.Since(start); testkit.Timing() && d > 10*time.Second {
			t.Fatalf("silent chat ended after %v: %v", d, err)
		}
		cancel()
	}
}

// gRPC-Web text mode (base64, the grpc-web JS client's default): a unary
// call with curl, a server stream byte-checked in Go, and a body that is
// not base64.
func TestGRPCWebText(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 1000})
	url := "http://" + srv.HTTPAddr() + "/wirebench.v1.UserService/"
	post := func(method, ct, body string) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Post(url+method, ct, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	var text strings.Builder
	grpcweb.NewTextWriter(&text).Write(grpcWebGet())
	if text.String() != "AAAAAAIIAQ==" {
		t.Fatalf("request %q", text.String())
	}
	resp, body := post("Get", "application/grpc-web-text", text.String())
	if ct := resp.Header.Get("Content-Type"); ct != "application/grpc-web-text+proto" {
		t.Fatalf("Content-Type %q", ct)
	}
	raw, err := io.ReadAll(grpcweb.NewTextReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatalf("reply %q: %v", body, err)
	}
	checkGRPCWebUser(t, srv, raw)

	_, body = post("Stream", "application/grpc-web-text+proto", "AAAAAAA=")
	r := grpcweb.NewReader(grpcweb.NewTextReader(bytes.NewReader(body)), 1<<20)
	for i := 1; ; i++ {
		flags, p, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if flags == grpcweb.FlagTrailer {
			if tr, _ := grpcweb.ParseTrailers(p); i != 1001 || tr.Get("grpc-status") != "0" {
				t.Fatalf("trailers after %d frames: %q", i-1, p)
			}
			break
		}
		var u pb.User
		if proto.Unmarshal(p, &u) != nil || u.Id != int64(i) {
			t.Fatalf("frame %d: %x", i, p)
		}
	}

	resp, _ = post("Get", "application/grpc-web-text", "AAAAAAIIAQ=")
	if resp.Header.Get("Grpc-Status") == "0" || !strings.Contains(resp.Header.Get("Grpc-Message"), "base64") {
		t.Fatalf("malformed base64: status %q %q", resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message"))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/grpc-web-text+proto" {
		t.Fatalf("error reply Content-Type %q", ct)
	}

	curl := testkit.NeedTool(t, "curl", "apt-get install -y curl")
	out, err := exec.CommandContext(rpcCtx(t), curl, "-sS", "--fail", "-H", "Content-Type: application/grpc-web-text",
		"--data-binary", "AAAAAAIIAQ==", url+"Get").Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	raw, err = io.ReadAll(grpcweb.NewTextReader(bytes.NewReader(out)))
	if err != nil {
		t.Fatalf("curl's reply %q: %v", out, err)
	}
	checkGRPCWebUser(t, srv, raw)
}
