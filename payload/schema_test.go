package payload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

func orderSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := CompileProto(context.Background(), "testdata/order.proto", nil, "shop.v1.Order")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The protobuf round trip names what proto3 and its JSON mapping change:
// a false and an empty list dropped (no presence), a null dropped, a
// timestamp and base64 spelled their way; the int64 past 2^53 is kept.
func TestProtobufRoundTrip(t *testing.T) {
	lab, err := Run(context.Background(), []string{"testdata/orders.jsonl"}, Options{Time: -1, Schema: orderSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.LeftOut) != 0 {
		t.Errorf("left out %+v with a schema", lab.LeftOut)
	}
	rt := roundTrip(t, lab, "protobuf")
	want := map[string]string{
		ChangeZeroDropped: "$.paid false → (missing)",
		ChangeNullMissing: "$.note null → (missing)",
		ChangeTimeSpell:   `$.created_at "2025-01-02T03:04:05.100+00:00" → "2025-01-02T03:04:05.100Z"`,
		ChangeBase64Spell: `$.signature "aGVsbG8gd29ybGQ_" → "aGVsbG8gd29ybGQ/"`,
		ChangeFloatSpell:  "$.total 12.50 → 12.5",
	}
	for kind, w := range want {
		c, ok := change(rt, kind)
		if got := c.Path + " " + c.Before + " → " + c.After; !ok || got != w {
			t.Errorf("protobuf %q: %q, want %q", kind, got, w)
		}
	}
	for _, kind := range []string{ChangeBigInt, ChangeIntAsString, ChangeKeyOrder, ChangeNumber} {
		if c, ok := change(rt, kind); ok {
			t.Errorf("protobuf: unexpected %q: %+v", kind, c)
		}
	}
	if rt.Verdict != results.RoundTripLossy {
		t.Errorf("verdict %q, want lossy (zero and null dropped)", rt.Verdict)
	}
}

// A sample the schema cannot read is refused, naming it and the field.
func TestProtobufSchemaMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte("{\"id\":1}\n{\"id\":2,\"colour\":\"red\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), []string{path}, Options{Time: -1, Schema: orderSchema(t)})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "bad.jsonl:2 (sample 1)") || !strings.Contains(err.Error(), `unknown field "colour"`) {
		t.Errorf("got %v, want ErrInput naming bad.jsonl:2 (sample 1) and the field colour", err)
	}
	for _, c := range []struct{ msg, want string }{
		{"", "has 2 messages: name one with --message (shop.v1.Line, shop.v1.Order)"},
		{"shop.v1.Nope", `has no message "shop.v1.Nope"`},
	} {
		if _, err := CompileProto(context.Background(), "testdata/order.proto", nil, c.msg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--message %q: %v, want %q", c.msg, err, c.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.proto")
	os.WriteFile(bad, []byte("syntax = \"proto3\";\nmessage A { int64 id = 1 }\n"), 0o644)
	if _, err := CompileProto(context.Background(), bad, nil, ""); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "bad.proto:2:") {
		t.Errorf("a bad .proto: %v, want its line", err)
	}
}

// The bytes are protoc's: each sample, as text format, through
// protoc --encode gives as many bytes as the lab measured, and the same
// bytes in field-number order.
func TestProtobufBytesAreProtocs(t *testing.T) {
	protoc := testkit.NeedTool(t, "protoc", "apt-get install protobuf-compiler")
	s := orderSchema(t)
	sameBytesAsProtoc(t, protoc, s, "testdata/orders.jsonl", "shop.v1.Order", "-Itestdata", "order.proto")
}

// A descriptor set gives the same schema as the .proto.
func TestProtoset(t *testing.T) {
	s := orderSchema(t)
	fd := s.md.ParentFile()
	set := &descriptorpb.FileDescriptorSet{}
	for i := range fd.Imports().Len() {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd.Imports().Get(i).FileDescriptor))
	}
	set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "order.protoset")
	os.WriteFile(path, b, 0o644)
	got, err := LoadProtoset(path, "shop.v1.Order")
	if err != nil || got.Name() != "shop.v1.Order" || got.md.Fields().Len() != s.md.Fields().Len() {
		t.Fatalf("LoadProtoset: %v, %v", got, err)
	}
	if _, err := LoadProtoset(path, ""); err == nil || !strings.Contains(err.Error(), "name one with --message") {
		t.Errorf("no --message: %v", err)
	}
	os.WriteFile(path, []byte("not a descriptor set"), 0o644)
	if _, err := LoadProtoset(path, "x"); !errors.Is(err, ErrInput) {
		t.Errorf("garbage: %v, want ErrInput", err)
	}
}

// A schema nobody here wrote: grpc-go's SearchResponseV3 (its
// testdata/grpc_testing_not_regenerated/testv3.proto, read from the module
// cache): nested messages, a map of messages holding a oneof, an enum,
// repeated strings. Each sample's bytes are protoc --encode's of the same
// message, and the lab measures it.
func TestForeignProtoBytesAreProtocs(t *testing.T) {
	protoc := testkit.NeedTool(t, "protoc", "apt-get install protobuf-compiler")
	goTool := testkit.NeedTool(t, "go", "the Go toolchain")
	dir, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}", "google.golang.org/grpc").Output()
	if err != nil {
		t.Fatalf("go list -m google.golang.org/grpc: %v", err)
	}
	protoDir := filepath.Join(strings.TrimSpace(string(dir)), "testdata", "grpc_testing_not_regenerated")
	const msg = "grpc.testingv3.SearchResponseV3"
	s, err := CompileProto(context.Background(), filepath.Join(protoDir, "testv3.proto"), nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	sameBytesAsProtoc(t, protoc, s, "testdata/search-v3.jsonl", msg, "-I"+protoDir, "testv3.proto")
	lab, err := Run(context.Background(), []string{"testdata/search-v3.jsonl"}, Options{Time: -1, Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	// The enum's default, UNKNOWN, dropped by proto3 is a zero dropped,
	// and the number 2 read back as STALE the same value spelled by name;
	// without the schema's enums they were "member lost" and "type".
	want := map[string]string{ChangeEnumSpell: "$.state"}
	found := false
	for _, rt := range lab.RoundTrips {
		if rt.Format != "protobuf" {
			continue
		}
		found = true
		for _, c := range rt.Changes {
			if c.Kind == ChangeMissing || c.Kind == ChangeType {
				t.Errorf("protobuf: %+v, want the enum's change named", c)
			}
			if p, ok := want[c.Kind]; ok && strings.HasPrefix(c.Path, p) {
				delete(want, c.Kind)
			}
		}
		if len(want) != 0 {
			t.Errorf("protobuf round trip %+v lacks %v", rt.Changes, want)
		}
	}
	if !found || len(lab.LeftOut) != 0 {
		t.Errorf("protobuf not measured: left out %+v", lab.LeftOut)
	}
}

// sameBytesAsProtoc checks that each JSON line of samples, encoded by the
// protobuf codec with the schema, gives the bytes protoc
// --encode=msg --deterministic_output gives from its text format
// (protocArgs: the include path and the .proto): every field in number
// order, oneof members among the others, map entries sorted by key.
func sameBytesAsProtoc(t *testing.T, protoc string, s *Schema, samples, msg string, protocArgs ...string) {
	t.Helper()
	f := s.format()
	files := new(protoregistry.Files)
	var register func(fd protoreflect.FileDescriptor)
	register = func(fd protoreflect.FileDescriptor) {
		if _, err := files.FindFileByPath(fd.Path()); err == nil {
			return
		}
		for i := range fd.Imports().Len() {
			register(fd.Imports().Get(i).FileDescriptor)
		}
		if err := files.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
	}
	register(s.md.ParentFile())
	// The samples may set extensions, which protojson finds by name.
	read := protojson.UnmarshalOptions{Resolver: dynamicpb.NewTypes(files)}
	data, err := os.ReadFile(samples)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		in := dynamicpb.NewMessage(s.md)
		if err := read.Unmarshal([]byte(line), in); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		ours, err := f.codec.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		txt, err := prototext.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(protoc, append([]string{"--encode=" + msg, "--deterministic_output"}, protocArgs...)...)
		cmd.Stdin = bytes.NewReader(txt)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		ref, err := cmd.Output()
		if err != nil {
			t.Fatalf("protoc: %v: %s", err, stderr.String())
		}
		if !bytes.Equal(ours, ref) {
			t.Errorf("sample %d: ours %x (%d bytes), protoc %x (%d bytes)", i, ours, len(ours), ref, len(ref))
			continue
		}
		back := dynamicpb.NewMessage(s.md)
		if err := (proto.UnmarshalOptions{Resolver: dynamicpb.NewTypes(files)}).Unmarshal(ours, back); err != nil || !proto.Equal(back, in) {
			t.Errorf("sample %d: our bytes read back as %v (%v)", i, back, err)
		}
	}
}

// Every kind of field, in proto3 and proto2: oneofs numbered before,
// between and after the other fields, maps of every key kind (sorted),
// packed and unpacked lists, nested messages, a group, an extension
// numbered between fields, lengths of one and of two bytes.
func TestProtobufEveryKindIsProtocs(t *testing.T) {
	protoc := testkit.NeedTool(t, "protoc", "apt-get install protobuf-compiler")
	for _, c := range []struct{ proto, msg, samples string }{
		{"kinds.proto", "kinds.v1.Kinds", "testdata/kinds.jsonl"},
		{"kinds.proto", "kinds.v1.Inner", "testdata/inner.jsonl"},
		{"proto2.proto", "kinds.v2.Legacy", "testdata/legacy.jsonl"},
	} {
		t.Run(c.msg, func(t *testing.T) {
			s, err := CompileProto(context.Background(), filepath.Join("testdata", c.proto), nil, c.msg)
			if err != nil {
				t.Fatal(err)
			}
			sameBytesAsProtoc(t, protoc, s, c.samples, c.msg, "-Itestdata", c.proto)
		})
	}
}

// An integer field given as 1.0 or 1e2 (JSON has one number type, and
// protojson reads both as 1 and 100) comes back as "1" and "100": the same
// value spelled otherwise, not another type.
func TestProtobufIntegerSpelledAsAFloat(t *testing.T) {
	s, err := CompileProto(context.Background(), writeFile(t, "r.proto", `syntax = "proto3"; message R { int64 n = 1; int32 m = 2; }`), nil, "R")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := Run(context.Background(), []string{writeFile(t, "s.jsonl", "{\"n\": 1.0, \"m\": 2}\n{\"n\": 1e2, \"m\": 3.0}\n")}, Options{Time: -1, Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	rt := roundTrip(t, lab, "protobuf")
	if c, ok := change(rt, ChangeType); ok {
		t.Errorf("protobuf: %q: %+v", ChangeType, c)
	}
	if c, ok := change(rt, ChangeFloatSpell); !ok || c.Count != 3 {
		t.Errorf("protobuf: %q %+v, want 3 (1.0, 1e2, 3.0)", ChangeFloatSpell, c)
	}
	if rt.Verdict != results.RoundTripSpelling {
		t.Errorf("verdict %q, want %q", rt.Verdict, results.RoundTripSpelling)
	}
}
