package codec

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// FuzzProtoInOrder: any body that decodes into a message type that has no
// oneof beside other fields is written by marshalInOrder, from a dynamicpb
// message, as the generated code writes it deterministically (fields in
// number order, map entries by key, unknown fields last): Struct and
// Value (a map, a oneof, recursion) and FileDescriptorProto (proto2,
// nesting, packed and unpacked lists, unknown fields).
func FuzzProtoInOrder(f *testing.F) {
	v, _ := structpb.NewValue(map[string]any{"b": []any{1.5, "x", true, nil}, "a": map[string]any{"z": "", "y": 2.0}})
	sv, _ := proto.Marshal(v)
	fd, _ := proto.Marshal(descriptorpb.File_google_protobuf_descriptor_proto.Options())
	full, _ := proto.Marshal(&descriptorpb.FileDescriptorProto{Name: proto.String("a.proto"), Dependency: []string{"b", "c"},
		PublicDependency: []int32{1, 0}, MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M")}}})
	for _, s := range [][]byte{sv, fd, full, {0x0a, 0x00}, {0x50, 0x01, 0x08, 0x02}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, gen := range []proto.Message{&structpb.Value{}, &descriptorpb.FileDescriptorProto{}} {
			if proto.Unmarshal(data, gen) != nil {
				continue
			}
			// The generated code's bytes: unknown fields with their tags
			// rewritten minimal, which dynamicpb's decoder keeps as read.
			want, err := proto.MarshalOptions{Deterministic: true}.Marshal(gen)
			if err != nil {
				continue
			}
			dyn := dynamicpb.NewMessage(gen.ProtoReflect().Descriptor())
			if err := proto.Unmarshal(want, dyn); err != nil {
				t.Fatalf("%T decodes, dynamicpb not: %v", gen, err)
			}
			got, err := marshalInOrder(dyn)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%T: %x (%v), the generated code %x", gen, got, err, want)
			}
		}
	})
}
