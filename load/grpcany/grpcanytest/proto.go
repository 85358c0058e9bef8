package grpcanytest

import (
	"os"
	"path/filepath"
	"testing"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Messages and Service are the part of grpc-go's grpc/testing protos the
// tests call, as a user would write them: the same package, names and
// field numbers (the server's), in two files, the service importing the
// messages by a path relative to an import path.
const Messages = `syntax = "proto3";
package grpc.testing;

enum PayloadType { COMPRESSABLE = 0; }
message Payload { PayloadType type = 1; bytes body = 2; }
message EchoStatus { int32 code = 1; string message = 2; }
message SimpleRequest {
  PayloadType response_type = 1;
  int32 response_size = 2;
  Payload payload = 3;
  bool fill_username = 4;
  EchoStatus response_status = 7;
}
message SimpleResponse { Payload payload = 1; string username = 2; }
message ResponseParameters { int32 size = 1; int32 interval_us = 2; }
message StreamingOutputCallRequest {
  PayloadType response_type = 1;
  repeated ResponseParameters response_parameters = 2;
  Payload payload = 3;
  EchoStatus response_status = 7;
}
message StreamingOutputCallResponse { Payload payload = 1; }
message StreamingInputCallRequest { Payload payload = 1; }
message StreamingInputCallResponse { int32 aggregated_payload_size = 1; }
`

const Service = `syntax = "proto3";
package grpc.testing;

import "grpc/testing/messages.proto";

service TestService {
  rpc UnaryCall(SimpleRequest) returns (SimpleResponse);
  rpc StreamingOutputCall(StreamingOutputCallRequest) returns (stream StreamingOutputCallResponse);
  rpc StreamingInputCall(stream StreamingInputCallRequest) returns (StreamingInputCallResponse);
  rpc FullDuplexCall(stream StreamingOutputCallRequest) returns (stream StreamingOutputCallResponse);
}
`

// WriteProtos writes Messages and Service under dir (the import path) as
// grpc/testing/messages.proto and grpc/testing/test.proto, and returns
// the service's file.
func WriteProtos(t testing.TB, dir string) string {
	t.Helper()
	d := filepath.Join(dir, "grpc", "testing")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"messages.proto": Messages, "test.proto": Service} {
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(d, "test.proto")
}

// WriteProtoset writes grpc-go's own compiled descriptors of the
// TestService, with their imports, as a FileDescriptorSet (protoc
// --include_imports --descriptor_set_out).
func WriteProtoset(t testing.TB, path string) {
	t.Helper()
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := range f.Imports().Len() {
			add(f.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(testpb.File_grpc_testing_test_proto)
	b, err := proto.Marshal(&set)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
