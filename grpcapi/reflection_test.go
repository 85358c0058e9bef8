package grpcapi

//lint:file-ignore SA1019 the test calls v1alpha, which the server still serves.

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc" // tests only: the binary must not link it
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	// Files registered without generated code, as in the binary.
	_ "github.com/wirebench/wirebench/internal/protofeatures"
	"github.com/wirebench/wirebench/store"
)

// reflectionStream is one v1 or v1alpha stream, spoken in v1 messages.
type reflectionStream struct {
	send func(*rpb.ServerReflectionRequest) error
	recv func() (*rpb.ServerReflectionResponse, error)
}

func (s reflectionStream) ask(t *testing.T, req *rpb.ServerReflectionRequest) *rpb.ServerReflectionResponse {
	t.Helper()
	if err := s.send(req); err != nil {
		t.Fatal(err)
	}
	resp, err := s.recv()
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// reflectionStreams starts the reference gRPC server and opens a stream
// of each reflection version.
func reflectionStreams(t *testing.T) map[string]reflectionStream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(store.NewMemory(store.Options{}))
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	v1, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := rpbalpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]reflectionStream{
		"v1": {send: v1.Send, recv: v1.Recv},
		"v1alpha": {
			send: func(r *rpb.ServerReflectionRequest) error {
				var a rpbalpha.ServerReflectionRequest
				if err := convert(r, &a); err != nil {
					return err
				}
				return alpha.Send(&a)
			},
			recv: func() (*rpb.ServerReflectionResponse, error) {
				a, err := alpha.Recv()
				if err != nil {
					return nil, err
				}
				var r rpb.ServerReflectionResponse
				return &r, convert(a, &r)
			},
		},
	}
}

func symbol(s string) *rpb.ServerReflectionRequest {
	return &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s}}
}

// files decodes a file descriptor response and checks each file against
// the registry's own descriptor (what protodesc would have served).
func files(t *testing.T, resp *rpb.ServerReflectionResponse) []string {
	t.Helper()
	fdr := resp.GetFileDescriptorResponse()
	if fdr == nil {
		t.Fatalf("no file descriptors: %v", resp)
	}
	var names []string
	for _, b := range fdr.FileDescriptorProto {
		var got descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		fd, err := protoregistry.GlobalFiles.FindFileByPath(got.GetName())
		if err != nil {
			t.Fatal(err)
		}
		if want := protodesc.ToFileDescriptorProto(fd); !proto.Equal(&got, want) {
			t.Errorf("%s: served descriptor differs from the registry's", got.GetName())
		}
		names = append(names, got.GetName())
	}
	return names
}

// TestReflection: both versions list the services, and answer symbols,
// files and extension queries as grpc-go's reflection does: a file with
// its imports, each sent once per stream; NotFound as an error response
// on a stream that stays usable.
func TestReflection(t *testing.T) {
	for version, s := range reflectionStreams(t) {
		t.Run(version, func(t *testing.T) {
			resp := s.ask(t, &rpb.ServerReflectionRequest{Host: "h", MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
			var names []string
			for _, svc := range resp.GetListServicesResponse().GetService() {
				names = append(names, svc.Name)
			}
			want := []string{"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
				"wirebench.v1.EchoService", "wirebench.v1.TodoService", "wirebench.v1.UserService"}
			if !slices.Equal(names, want) || resp.ValidHost != "h" || resp.OriginalRequest.GetListServices() != "" {
				t.Errorf("list services: %v (host %q), want %v", names, resp.ValidHost, want)
			}

			// The first answer carries the imports, later ones only the file.
			if got := files(t, s.ask(t, symbol("wirebench.v1.UserService"))); !slices.Equal(got, []string{"wirebench.proto", "google/protobuf/empty.proto", "google/protobuf/timestamp.proto"}) {
				t.Errorf("UserService: files %v", got)
			}
			for _, sym := range []string{"wirebench.v1.UserService.Get", "wirebench.v1.User", "wirebench.v1.User.email", "wirebench.v1.EchoService.Chat"} {
				if got := files(t, s.ask(t, symbol(sym))); !slices.Equal(got, []string{"wirebench.proto"}) {
					t.Errorf("%s: files %v, want wirebench.proto alone (its imports were sent)", sym, got)
				}
			}
			if got := files(t, s.ask(t, symbol("google.protobuf.Timestamp"))); !slices.Equal(got, []string{"google/protobuf/timestamp.proto"}) {
				t.Errorf("Timestamp: files %v", got)
			}
			byName := &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: "grpc/health/v1/health.proto"}}
			if got := files(t, s.ask(t, byName)); !slices.Equal(got, []string{"grpc/health/v1/health.proto"}) {
				t.Errorf("health.proto: files %v", got)
			}

			notFound := []*rpb.ServerReflectionRequest{
				symbol("wirebench.v1.Nope"), symbol(""),
				{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: "nope.proto"}},
				{MessageRequest: &rpb.ServerReflectionRequest_FileContainingExtension{FileContainingExtension: &rpb.ExtensionRequest{ContainingType: "wirebench.v1.User", ExtensionNumber: 100}}},
				{MessageRequest: &rpb.ServerReflectionRequest_AllExtensionNumbersOfType{AllExtensionNumbersOfType: "wirebench.v1.Nope"}},
			}
			for _, req := range notFound {
				if e := s.ask(t, req).GetErrorResponse(); e == nil || e.ErrorCode != int32(codes.NotFound) {
					t.Errorf("%v: %v, want a NotFound error response", req, e)
				}
			}
			// The stream survived them; a known type without extensions has none.
			ext := s.ask(t, &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_AllExtensionNumbersOfType{AllExtensionNumbersOfType: "wirebench.v1.User"}}).GetAllExtensionNumbersResponse()
			if ext == nil || ext.BaseTypeName != "wirebench.v1.User" || len(ext.ExtensionNumber) != 0 {
				t.Errorf("extension numbers of User: %v", ext)
			}
		})
	}
}

// FuzzReflectionAnswer: any symbol or file name is answered with a
// NotFound error or with descriptors that parse, never a panic.
func FuzzReflectionAnswer(f *testing.F) {
	for _, s := range []string{"wirebench.v1.UserService", "wirebench.v1.User.id", "google.protobuf.Empty", "wirebench.proto", "", ".", "grpc.health.v1.Health.Watch", "a..b"} {
		f.Add(s)
	}
	r := &reflection{srv: grpc.NewServer()}
	f.Fuzz(func(t *testing.T, name string) {
		for _, req := range []*rpb.ServerReflectionRequest{
			symbol(name),
			{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: name}},
			{MessageRequest: &rpb.ServerReflectionRequest_AllExtensionNumbersOfType{AllExtensionNumbersOfType: name}},
			{MessageRequest: &rpb.ServerReflectionRequest_FileContainingExtension{FileContainingExtension: &rpb.ExtensionRequest{ContainingType: name, ExtensionNumber: 1}}},
		} {
			resp, err := r.answer(req, map[string]bool{})
			if err != nil {
				t.Fatalf("%v: %v", req, err)
			}
			if e := resp.GetErrorResponse(); e != nil {
				if e.ErrorCode != int32(codes.NotFound) {
					t.Fatalf("%v: error code %d", req, e.ErrorCode)
				}
				continue
			}
			for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
				if err := proto.Unmarshal(b, &descriptorpb.FileDescriptorProto{}); err != nil {
					t.Fatalf("%v: served bytes do not parse: %v", req, err)
				}
			}
		}
	})
}

// TestServerLinksNoHeavyInit: the server binary does not link
// client_golang (promtext writes /metrics instead): its package init
// built a registry and compiled procfs' regexps, live heap that a server
// under load marks on every GC cycle (issue 17). Nor prompb (with
// gogo/protobuf and Prometheus's model packages), the OTLP metrics
// protos, client_model or expfmt: their registrations and tables held
// ~60 kB; export writes its requests and scrape answers itself. protodesc came back on
// 2026-11-29 with the features that compile .proto files at run time
// (load --grpc --proto, payload --proto): one binary cannot leave it out;
// TestInitHeapBudget (cmd/wirebench) bounds what every package's init
// allocates instead.
func TestServerLinksNoHeavyInit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/wirebench/wirebench/cmd/wirebench").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range []string{
		"github.com/prometheus/client_golang/prometheus",
		"github.com/prometheus/prometheus/prompb",
		"github.com/gogo/protobuf/proto",
		"go.opentelemetry.io/proto/otlp/metrics/v1",
		"github.com/prometheus/client_model/go",
		"github.com/prometheus/common/expfmt",
	} {
		if slices.Contains(strings.Fields(string(out)), pkg) {
			t.Errorf("cmd/wirebench links %s", pkg)
		}
	}
}

// TestRawDescriptorEveryFile: every file registered in this test binary
// (ours, grpc's, the well-known types, descriptor.proto itself, and
// internal/protofeatures' files, which have no generated code) is
// served, identical to protodesc's rendering, or refused with
// errNoDescriptor when it declares neither message nor enum.
func TestRawDescriptorEveryFile(t *testing.T) {
	n := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		n++
		b, err := rawDescriptor(fd)
		if fd.Messages().Len() == 0 && fd.Enums().Len() == 0 {
			if !errors.Is(err, errNoDescriptor) {
				t.Errorf("%s declares no message or enum: %v", fd.Path(), err)
			}
			return true
		}
		if err != nil {
			t.Errorf("%s: %v", fd.Path(), err)
			return true
		}
		var got descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &got); err != nil || !proto.Equal(&got, protodesc.ToFileDescriptorProto(fd)) {
			t.Errorf("%s: served descriptor differs from the registry's (%v)", fd.Path(), err)
		}
		return true
	})
	if n < 6 {
		t.Fatalf("only %d registered files", n)
	}
}
