// Package protofeatures registers protoc's two standard files that have
// no Go package, google/protobuf/cpp_features.proto and
// java_features.proto, in the global registry as generated code
// registers its files: lazily, their descriptors built on first use.
//
// bufbuild/protocompile (the run-time .proto compiler behind --proto and
// the payload lab's schemas) offers both as standard imports; at init it
// takes them from the global registry if a program registered them, and
// otherwise builds them itself with protodesc, unmarshalling its embedded
// descriptor sets. That build, ~120 kB of live heap (descriptorpb's
// message tables and the two files' descriptors), ran in every process
// of the one wirebench binary, `wirebench serve` included, whose every GC
// cycle marks it again. Registered here, nothing is built until a schema
// imports them. Here runs first: Go initialises, among the packages whose
// imports are done, the first by import path; this package is ready once
// descriptorpb is, and precedes by path the packages protocompile waits
// for after descriptorpb (protodesc, pluginpb, gofeaturespb).
//
// The descriptor sets are protocompile's own (internal/featuresext, the
// version in go.mod; TestSameAsProtocompile keeps them equal).
package protofeatures

// The descriptor sets, copied from the protocompile version in go.mod:
//go:generate sh -c "cp \"$(go list -m -f '{{.Dir}}' github.com/bufbuild/protocompile)\"/internal/featuresext/cpp_features.protoset \"$(go list -m -f '{{.Dir}}' github.com/bufbuild/protocompile)\"/internal/featuresext/java_features.protoset . && chmod 0644 cpp_features.protoset java_features.protoset"

import (
	_ "embed"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/runtime/protoimpl"

	// The files extend google.protobuf.FeatureSet: the extendee is
	// resolved when a file is registered, so descriptor.proto first.
	_ "google.golang.org/protobuf/types/descriptorpb"
)

var (
	//go:embed cpp_features.protoset
	cppFeatures []byte
	//go:embed java_features.protoset
	javaFeatures []byte
)

// Files are the paths registered here.
var Files = []string{"google/protobuf/cpp_features.proto", "google/protobuf/java_features.proto"}

func init() {
	for i, set := range [][]byte{cppFeatures, javaFeatures} {
		// A program that links generated code for the file has it already.
		if _, err := protoregistry.GlobalFiles.FindFileByPath(Files[i]); err == nil {
			continue
		}
		raw, err := onlyFile(set)
		if err != nil {
			panic(fmt.Sprintf("protofeatures: %s: %v", Files[i], err))
		}
		protoimpl.DescBuilder{RawDescriptor: raw}.Build()
	}
}

// onlyFile is the one FileDescriptorProto of a serialized
// FileDescriptorSet (field 1, repeated), read with protowire: unmarshalling
// the set into descriptorpb would build the message tables this package
// exists to leave unbuilt.
func onlyFile(set []byte) ([]byte, error) {
	var file []byte
	n := 0
	for b := set; len(b) > 0; {
		num, typ, m := protowire.ConsumeTag(b)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[m:]
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			file, n = v, n+1
			b = b[m:]
			continue
		}
		m = protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[m:]
	}
	if n != 1 {
		return nil, fmt.Errorf("the descriptor set holds %d files, want 1", n)
	}
	return file, nil
}
