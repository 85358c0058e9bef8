// Command grpcgobare is the bare grpc-go server of users: what a user who
// picks gRPC writes instead of the reference server, and the yardstick our
// gRPC service on grpc-go is judged by (issue 41, DESIGN rule 9) — the
// gRPC twin of bench/servercpu.BareHandler for REST. The same generated
// wirebench.v1 UserService, the same seed users as `wirebench serve
// --seed-users N` in a map under a RWMutex, grpc.NewServer() with grpc-go's
// defaults: no codec of ours, no interceptors, limits, metrics,
// reflection or health. Get answers one user; Stream sends every user in
// id order, a fresh message each; the other methods are Unimplemented.
//
// It prints "listening grpc=ADDR" when it serves, and on SIGUSR1 a line
// "mallocs N" (runtime.MemStats.Mallocs), so bench/grpc-cpu.sh can count
// the server's allocations per call as it does from our server's /metrics.
//
// Two flags, off by default, measure what the yardstick lacks, one at a
// time (bench/grpc-instr.sh's BARE_FLAGS): -stream-workers N sets grpc-go's
// NumStreamWorkers as our server does (grpcapi.StreamWorkers), so that the
// two differ by their code, not by that option; -ballast-kb N keeps about
// N kB of small pointer-bearing objects live, as the one wirebench binary's
// package inits do, so that bare grpc-go can be measured carrying them.
//
// Built with -tags linked (linked.go, generated: go generate
// ./bench/grpcgobare), it also links the library packages cmd/wirebench
// links and runs their package inits: bare grpc-go in a binary whose
// libraries are the one wirebench binary's, so that what those libraries
// cost the server (their init heap, marked by every GC cycle) is told
// apart from what our code does (bench/grpc-instr.sh, LINKED=1).
//
// usage: grpcgobare [-addr 127.0.0.1:0] [-seed-users 1000] [-stream-workers 0] [-ballast-kb 0]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/bench/internal/ballast"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "`address` to listen on")
	n := flag.Int("seed-users", 1000, "users, as `wirebench serve --seed-users`")
	workers := flag.Uint("stream-workers", 0, "grpc-go's NumStreamWorkers: `N` goroutines waiting for calls (0: grpc-go's default, a goroutine per call)")
	ballastKB := flag.Int("ballast-kb", 0, "keep about `N` kB of small pointer-bearing objects live, as a larger binary's package inits do (the garbage collector marks them every cycle)")
	flag.Parse()
	ballast.Keep(*ballastKB)
	if err := run(*addr, *n, uint32(*workers)); err != nil {
		fmt.Fprintln(os.Stderr, "grpcgobare:", err)
		os.Exit(1)
	}
}

func run(addr string, n int, workers uint32) error {
	list, err := seedUsers(n)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var opts []grpc.ServerOption
	if workers > 0 {
		opts = append(opts, grpc.NumStreamWorkers(workers))
	}
	s := newServer(list, opts...)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGTERM, os.Interrupt)
	go func() {
		for x := range sig {
			if x != syscall.SIGUSR1 {
				s.Stop()
				return
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Printf("mallocs %d\n", ms.Mallocs)
		}
	}()
	fmt.Printf("listening grpc=%s\n", ln.Addr())
	return s.Serve(ln)
}

// seedUsers is the reference server's dataset (store.Seed): the same
// users, byte for byte, so both servers send the same messages.
func seedUsers(n int) ([]api.User, error) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(n, 0); err != nil {
		return nil, err
	}
	return st.ListUsers(), nil
}

// newServer is grpc-go's server with its defaults (and opts, none unless
// asked) and the bare service.
func newServer(list []api.User, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(opts...)
	pb.RegisterUserServiceServer(s, newUsers(list))
	return s
}

// users is the service: the users in a map for Get, and in id order (the
// order they were given in) for Stream.
type users struct {
	pb.UnimplementedUserServiceServer
	mu    sync.RWMutex
	byID  map[int64]api.User
	order []int64
}

func newUsers(list []api.User) *users {
	u := &users{byID: make(map[int64]api.User, len(list))}
	for _, v := range list {
		u.byID[v.ID] = v
		u.order = append(u.order, v.ID)
	}
	return u
}

// toPB is the conversion a user writes: a message and its timestamp.
func toPB(u api.User) *pb.User {
	return &pb.User{Id: u.ID, Name: u.Name, Email: u.Email, CreatedAt: timestamppb.New(u.CreatedAt)}
}

func (s *users) Get(_ context.Context, r *pb.GetUserRequest) (*pb.User, error) {
	s.mu.RLock()
	u, ok := s.byID[r.GetId()]
	s.mu.RUnlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "user %d not found", r.GetId())
	}
	return toPB(u), nil
}

func (s *users) Stream(_ *pb.ListUsersRequest, ss grpc.ServerStreamingServer[pb.User]) error {
	s.mu.RLock()
	list := make([]api.User, 0, len(s.order))
	for _, id := range s.order {
		list = append(list, s.byID[id])
	}
	s.mu.RUnlock()
	for _, u := range list {
		if err := ss.Send(toPB(u)); err != nil {
			return err
		}
	}
	return nil
}
