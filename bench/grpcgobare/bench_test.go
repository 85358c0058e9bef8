package main

import (
	"context"
	"io"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
)

// The in-process twin of bench/grpc-cpu.sh, for pprof and allocs/op: the
// same grpc-go client calls the bare server and the reference server on
// grpc-go (server.Start, as `wirebench serve` runs it), so the difference
// in allocs/op between the two is the server's. benchstat-friendly:
//
//	go test -run - -bench . -benchmem -count 6 ./bench/grpcgobare

const benchUsers = 1000

func benchClient(b *testing.B, kind string) pb.UserServiceClient {
	b.Helper()
	var addr string
	switch kind {
	case "bare":
		list, err := seedUsers(benchUsers)
		if err != nil {
			b.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		s := newServer(list)
		go s.Serve(ln)
		b.Cleanup(s.Stop)
		addr = ln.Addr().String()
	case "ours":
		srv, err := server.Start(context.Background(), server.Options{NoHTTP: true, GRPCAddr: "127.0.0.1:0",
			SeedUsers: benchUsers, SeedTodos: 10, GRPCTransport: server.GRPCGrpcGo})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { srv.Close() })
		addr = srv.GRPCAddr()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return pb.NewUserServiceClient(conn)
}

func BenchmarkGet(b *testing.B) {
	for _, kind := range []string{"bare", "ours"} {
		b.Run(kind, func(b *testing.B) {
			c := benchClient(b, kind)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Get(ctx, &pb.GetUserRequest{Id: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStream(b *testing.B) {
	for _, kind := range []string{"bare", "ours"} {
		b.Run(kind, func(b *testing.B) {
			c := benchClient(b, kind)
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
				if n != benchUsers {
					b.Fatalf("%d users", n)
				}
			}
		})
	}
}
