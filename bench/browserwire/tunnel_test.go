package browserwire

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/grpcws"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// coderHandler is the tunnel's server side on coder/websocket's
// NetConn, the alternative to grpcws (gorilla/websocket and our adapter).
func coderHandler(conns chan<- net.Conn) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		nc := websocket.NetConn(r.Context(), c, websocket.MessageBinary)
		done := make(chan struct{})
		conns <- &notify{Conn: nc, done: done}
		<-done
	})
}

type notify struct {
	net.Conn
	done chan struct{}
	once sync.Once
}

func (n *notify) Close() error {
	err := n.Conn.Close()
	n.once.Do(func() { close(n.done) })
	return err
}

// chanListener serves conns handed over a channel.
type chanListener struct {
	c    chan net.Conn
	stop chan struct{}
}

func (l chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.stop:
		return nil, net.ErrClosed
	}
}
func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return &net.TCPAddr{} }

// clients returns a gRPC client of one server per way in: native TCP, the
// grpcws tunnel (gorilla) and a coder/websocket tunnel.
func clients(b *testing.B, users int) map[string]*grpc.ClientConn {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(users, 0); err != nil {
		b.Fatal(err)
	}
	gs := grpcapi.NewServer(st)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go gs.Serve(tcp)
	gl := grpcws.NewListener(nil)
	go gs.Serve(gl)
	cl := chanListener{c: make(chan net.Conn), stop: make(chan struct{})}
	go gs.Serve(cl)
	mux := http.NewServeMux()
	mux.Handle("/gorilla", grpcws.Handler(gl))
	mux.Handle("/coder", coderHandler(cl.c))
	hs := httptest.NewServer(mux)
	ws := "ws" + strings.TrimPrefix(hs.URL, "http")
	b.Cleanup(func() { close(cl.stop); gs.Stop(); hs.Close() })
	dial := func(target string, opts ...grpc.DialOption) *grpc.ClientConn {
		c, err := grpc.NewClient(target, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	return map[string]*grpc.ClientConn{
		"native-tcp":     dial(tcp.Addr().String()),
		"tunnel-gorilla": dial("passthrough:///g", grpc.WithContextDialer(grpcws.Dialer(ws+"/gorilla"))),
		"tunnel-coder": dial("passthrough:///c", grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			c, _, err := websocket.Dial(ctx, ws+"/coder", nil)
			if err != nil {
				return nil, err
			}
			return websocket.NetConn(context.Background(), c, websocket.MessageBinary), nil
		})),
	}
}

// BenchmarkTunnelGet: one unary call at a time (c=1), client and server
// in this process.
func BenchmarkTunnelGet(b *testing.B) {
	for name, conn := range clients(b, 100) {
		b.Run(name, func(b *testing.B) {
			c := pb.NewUserServiceClient(conn)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if u, err := c.Get(ctx, &pb.GetUserRequest{Id: 1}); err != nil || u.Id != 1 {
					b.Fatal(u, err)
				}
			}
		})
	}
}

// BenchmarkTunnelStream1000: a server stream of 1000 users, all read.
func BenchmarkTunnelStream1000(b *testing.B) {
	for name, conn := range clients(b, 1000) {
		b.Run(name, func(b *testing.B) {
			c := pb.NewUserServiceClient(conn)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				st, err := c.Stream(ctx, &pb.ListUsersRequest{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					if _, err := st.Recv(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 1000 {
					b.Fatalf("%d users", n)
				}
			}
		})
	}
}
