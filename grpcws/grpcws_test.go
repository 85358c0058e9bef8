package grpcws_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/grpcws"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/store"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func tunnel(t *testing.T, url string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///tunnel",
		grpc.WithContextDialer(grpcws.Dialer(url)),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Every kind of call through the tunnel of `wirebench serve`'s REST port.
func TestTunnelCarriesEveryKindOfCall(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	conn := tunnel(t, "ws://"+srv.HTTPAddr()+"/grpc-ws")
	ctx := ctx(t)
	users := pb.NewUserServiceClient(conn)
	u, err := users.Get(ctx, &pb.GetUserRequest{Id: 5})
	if err != nil || u.Id != 5 {
		t.Fatalf("Get: %v %v", u, err)
	}
	st, err := users.Stream(ctx, &pb.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; ; i++ {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			if i != 1001 {
				t.Fatalf("stream ended after %d users", i-1)
			}
			break
		}
		if err != nil || m.Id != int64(i) {
			t.Fatalf("user %d: %v %v", i, m, err)
		}
	}
	cs, err := users.CreateMany(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		_ = cs.Send(&pb.User{Name: "n", Email: fmt.Sprintf("n%d@example.com", i)})
	}
	if r, err := cs.CloseAndRecv(); err != nil || r.Created != 20 {
		t.Fatalf("CreateMany: %v %v", r, err)
	}
	ch, err := pb.NewEchoServiceClient(conn).Chat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		_ = ch.Send(&pb.EchoRequest{FirstMessage: fmt.Sprint(i), SecondMessage: "."})
		if r, err := ch.Recv(); err != nil || r.Message != fmt.Sprint(i, ".") {
			t.Fatalf("echo %d: %v %v", i, r, err)
		}
	}
	_ = ch.CloseSend()
	if _, err := ch.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseSend: %v", err)
	}
}

// A bare server: the handler on httptest, a grpc.Server on its listener.
func bare(t *testing.T) (*grpcws.Listener, *httptest.Server) {
	t.Helper()
	ln := grpcws.NewListener(nil)
	gs := grpcapi.NewServer(store.NewMemory(store.Options{}))
	go gs.Serve(ln)
	hs := httptest.NewServer(grpcws.Handler(ln))
	t.Cleanup(func() { hs.Close(); gs.Stop() })
	return ln, hs
}

// A WebSocket message over MaxMessage closes the tunnel with 1009.
func TestTunnelMessageLimit(t *testing.T) {
	_, hs := bare(t)
	c, _, err := websocket.DefaultDialer.DialContext(ctx(t), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A valid start of an HTTP/2 connection (preface, SETTINGS), then
	// WINDOW_UPDATE frames (which need no answer) past the limit, all in
	// one message: the gRPC server reads on until the limit stops it.
	msg := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
	for len(msg) <= grpcws.MaxMessage {
		msg = append(msg, 0, 0, 4, 0x8, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	}
	if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
		t.Fatal(err)
	}
	if err := readUntilError(t, c); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("got %v, want close 1009", err)
	}
}

// Garbage instead of an HTTP/2 preface: the gRPC server drops the tunnel,
// and the handler returns (its goroutine is not left behind).
func TestTunnelGarbageIsDropped(t *testing.T) {
	_, hs := bare(t)
	c, _, err := websocket.DefaultDialer.DialContext(ctx(t), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// At least the 24 bytes of an HTTP/2 preface, so the server decides.
	if err := c.WriteMessage(websocket.BinaryMessage, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := readUntilError(t, c); err == nil {
		t.Fatal("the tunnel stayed open")
	}
}

// readUntilError skips the server's own HTTP/2 frames (its SETTINGS come
// first, unasked) and returns the error that ends the tunnel.
func readUntilError(t *testing.T, c *websocket.Conn) error {
	c.SetReadDeadline(time.Now().Add(20 * time.Second)) // generous: the server decides at once
	for range 100 {
		if _, _, err := c.ReadMessage(); err != nil {
			return err
		}
	}
	t.Fatal("100 messages and the tunnel is still open")
	return nil
}

func TestListenerClose(t *testing.T) {
	ln := grpcws.NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	if ln.Addr().String() != "127.0.0.1:8080" || grpcws.NewListener(nil).Addr().Network() != "websocket" {
		t.Fatalf("addresses %v", ln.Addr())
	}
	hs := httptest.NewServer(grpcws.Handler(ln))
	defer hs.Close()
	ln.Close()
	ln.Close() // twice is fine
	if _, err := ln.Accept(); !errors.Is(err, grpcws.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
	resp, err := http.Get(hs.URL)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("upgrade after Close: %v %v", resp, err)
	}
	resp.Body.Close()
}

// Dial names the URL when the server is not a tunnel.
func TestDialError(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	defer hs.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/grpc-ws"
	if _, err := grpcws.Dial(ctx(t), url); err == nil || !strings.Contains(err.Error(), url) {
		t.Fatalf("Dial of a 404: %v", err)
	}
}

// A text message in the tunnel closes it with 1003 (unsupported data).
func TestTunnelRefusesText(t *testing.T) {
	_, hs := bare(t)
	c, _, err := websocket.DefaultDialer.DialContext(ctx(t), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMessage(websocket.TextMessage, []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := readUntilError(t, c); !websocket.IsCloseError(err, websocket.CloseUnsupportedData) {
		t.Fatalf("got %v, want close 1003", err)
	}
}

// The tunnel reaches the gRPC port's own server, limits included: a
// silent chat through it ends at serve's stream deadline.
func TestTunnelHasTheGRPCPortsLimits(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", MaxStreamDuration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	conn := tunnel(t, "ws://"+srv.HTTPAddr()+"/grpc-ws")
	start := time.Now()
	ch, err := pb.NewEchoServiceClient(conn).Chat(ctx(t)) // the client's deadline: 20 s
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Recv(); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("silent chat: %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); testkit.Timing() && d > 10*time.Second { // generous for a busy box; the limit is 200 ms
		t.Fatalf("ended after %v", d)
	}
}
