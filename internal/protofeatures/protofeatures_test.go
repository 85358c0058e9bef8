package protofeatures

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestRegistered: both files are in the global registry, their
// extensions of google.protobuf.FeatureSet resolved to descriptor.proto's
// message (not a placeholder), their declarations readable.
func TestRegistered(t *testing.T) {
	for _, path := range Files {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if fd.Package() != "pb" || fd.Extensions().Len() != 1 || fd.Messages().Len() == 0 {
			t.Errorf("%s: package %q, %d extensions, %d messages", path, fd.Package(), fd.Extensions().Len(), fd.Messages().Len())
		}
		x := fd.Extensions().Get(0)
		if m := x.ContainingMessage(); m.FullName() != "google.protobuf.FeatureSet" || m.IsPlaceholder() {
			t.Errorf("%s: extends %s (placeholder %v)", path, m.FullName(), m.IsPlaceholder())
		}
		if x.Message() == nil || x.Message().Fields().Len() == 0 {
			t.Errorf("%s: extension %s has no message fields", path, x.FullName())
		}
	}
}

// TestSameAsProtocompile: the embedded sets are the ones the
// protocompile in go.mod embeds, so a schema compiles against the same
// files whether it finds them here or there.
func TestSameAsProtocompile(t *testing.T) {
	testkit.NeedTool(t, "go", "the Go toolchain")
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/bufbuild/protocompile").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "internal", "featuresext")
	for name, ours := range map[string][]byte{"cpp_features.protoset": cppFeatures, "java_features.protoset": javaFeatures} {
		theirs, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s differs from %s: copy it again", name, filepath.Join(dir, name))
		}
	}
}

// TestCompiles: protocompile resolves both imports to the files
// registered here, and a C++ feature set on a field reaches its options.
func TestCompiles(t *testing.T) {
	src := `edition = "2023";
package t;
import "google/protobuf/cpp_features.proto";
import "google/protobuf/java_features.proto";
message M {
  string s = 1 [features.(pb.cpp).string_type = VIEW];
  string u = 2 [features.(pb.java).utf8_validation = VERIFY];
}
`
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"t.proto": src}),
	})}
	files, err := c.Compile(context.Background(), "t.proto")
	if err != nil {
		t.Fatal(err)
	}
	fd := files[0]
	for i, path := range Files {
		if got := fd.Imports().Get(i).Path(); got != path {
			t.Errorf("import %d: %s, want %s", i, got, path)
		}
	}
	opts := fd.Messages().Get(0).Fields().Get(0).Options()
	var set []string
	opts.ProtoReflect().Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		set = append(set, string(f.FullName()))
		return true
	})
	if len(set) != 1 || set[0] != "google.protobuf.FieldOptions.features" {
		t.Errorf("field options set: %v", set)
	}
}
