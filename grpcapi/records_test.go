package grpcapi_test

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/server"
)

// TestRecordsService: serve --data with a schema serves the records over
// gRPC too, as wirebench.records.Records of the user's message (dynamicpb,
// no generated code): the list of every record, get, create, update and
// delete, each reply what the file (or the write) holds, the REST error
// table's codes, and server reflection describing the service and the
// user's schema, so that grpcurl, ghz and load --grpc need no .proto.
func TestRecordsService(t *testing.T) {
	ds, err := payload.LoadDatasetFile(context.Background(), "../examples/data/shipments.json", "../examples/data/shipments.proto", false, "ship.v1.Shipment", payload.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, conn := dialWith(t, server.Options{HTTP: httpapi.Options{Records: ds}})
	ctx := ctx(t)
	svc := ds.Service()
	if svc == nil || svc.FullName() != "wirebench.records.Records" {
		t.Fatalf("service %v", svc)
	}
	call := func(method string, in proto.Message) (*dynamicpb.Message, error) {
		out := dynamicpb.NewMessage(svc.Methods().ByName(protoreflect.Name(method)).Output())
		return out, conn.Invoke(ctx, "/wirebench.records.Records/"+method, in, out)
	}
	key := func(k string) proto.Message {
		m := dynamicpb.NewMessage(svc.Methods().ByName("Get").Input())
		m.Set(m.Descriptor().Fields().ByName("key"), protoreflect.ValueOfString(k))
		return m
	}
	record := func(t *testing.T, i, n int) (string, proto.Message, payload.Value) {
		t.Helper()
		_, v := ds.Record(i)
		k, v := ds.WithKey(v, n)
		b, err := ds.Encode("protobuf", v)
		if err != nil {
			t.Fatal(err)
		}
		m := dynamicpb.NewMessage(svc.Methods().ByName("Create").Input())
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		return k, m, v
	}
	same := func(t *testing.T, what string, got proto.Message, want payload.Value) {
		t.Helper()
		b, err := proto.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.Check("protobuf", b, want); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}

	list, err := call("List", &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if n := list.Get(list.Descriptor().Fields().ByName("records")).List().Len(); n != ds.Len() {
		t.Fatalf("List: %d records, want %d", n, ds.Len())
	}
	k0, v0 := ds.Record(0)
	got, err := call("Get", key(k0))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Get "+k0, got, v0)

	k, created, v := record(t, 1, 1)
	got, err = call("Create", created)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Create", got, v)
	_, err = call("Create", created)
	wantCode(t, err, codes.InvalidArgument)
	k2, changed, v2 := record(t, 2, 1)
	if k2 != k {
		t.Fatalf("keys %q and %q", k, k2)
	}
	got, err = call("Update", changed)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Update", got, v2)
	got, err = call("Get", key(k))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Get after Update", got, v2)
	if _, err := call("Delete", key(k)); err != nil {
		t.Fatal(err)
	}
	_, err = call("Get", key(k))
	wantCode(t, err, codes.NotFound)
	_, err = call("Delete", key(k))
	wantCode(t, err, codes.NotFound)
	_, err = call("Update", changed)
	wantCode(t, err, codes.NotFound)
	if list, err = call("List", &emptypb.Empty{}); err != nil || list.Get(list.Descriptor().Fields().ByName("records")).List().Len() != ds.Len() {
		t.Fatalf("List after the writes: %v, %v", list, err)
	}

	// Reflection: the service is listed, and its file with the user's
	// schema builds into descriptors naming both.
	stream, err := reflectpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(req *reflectpb.ServerReflectionRequest) *reflectpb.ServerReflectionResponse {
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var names []string
	for _, s := range ask(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}).GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "wirebench.records.Records") {
		t.Errorf("reflection lists %v, without wirebench.records.Records", names)
	}
	resp := ask(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "wirebench.records.Records"}})
	var set descriptorpb.FileDescriptorSet
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &fd); err != nil {
			t.Fatal(err)
		}
		set.File = append(set.File, &fd)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatalf("reflection's files (%v) do not build: %v", resp.GetErrorResponse(), err)
	}
	for _, name := range []string{"wirebench.records.Records", "wirebench.records.RecordList", "ship.v1.Shipment", "ship.v1.Parcel"} {
		if _, err := files.FindDescriptorByName(protoreflect.FullName(name)); err != nil {
			t.Errorf("reflection's files lack %s: %v", name, err)
		}
	}
}
