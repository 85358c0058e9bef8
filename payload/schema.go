package payload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/codec"
	// Before protocompile's init: see the package.
	_ "github.com/wirebench/wirebench/internal/protofeatures"
)

// Schema is a protobuf message type the samples are instances of, read
// from a .proto compiled at run time or from a descriptor set.
type Schema struct {
	md protoreflect.MessageDescriptor
	// From says where it came from, for the report.
	From string
}

// Name is the message's full name.
func (s *Schema) Name() string { return string(s.md.FullName()) }

// maxSchemaFile bounds a .proto or descriptor set read from disk.
const maxSchemaFile = 64 << 20

// CompileProto compiles a .proto file (and what it imports, from its own
// directory, the importPaths, and the well-known types) with
// github.com/bufbuild/protocompile, and picks message: a full name
// (pkg.Msg) or, when empty, the file's only message.
func CompileProto(ctx context.Context, path string, importPaths []string, message string) (*Schema, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: --proto: %v", ErrInput, err)
	} else if fi.Size() > maxSchemaFile {
		return nil, fmt.Errorf("%w: --proto %s: %d bytes, over %d", ErrInput, path, fi.Size(), maxSchemaFile)
	}
	paths := append([]string{filepath.Dir(path)}, importPaths...)
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}),
	}
	files, err := c.Compile(ctx, filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("%w: --proto: %v", ErrInput, oneLine(err))
	}
	return pickMessage(files[0], message, path)
}

// LoadProtoset reads a FileDescriptorSet (protoc --descriptor_set_out
// --include_imports, buf build -o) and picks message as CompileProto does,
// among the set's last file's messages when message is empty.
func LoadProtoset(path, message string) (*Schema, error) {
	data, err := readBounded(path, maxSchemaFile)
	if err != nil {
		return nil, fmt.Errorf("%w: --protoset: %v", ErrInput, err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%w: --protoset %s: not a FileDescriptorSet: %v", ErrInput, path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%w: --protoset %s: %v (was it built with --include_imports?)", ErrInput, path, err)
	}
	if message != "" {
		d, err := files.FindDescriptorByName(protoreflect.FullName(message))
		if err != nil {
			return nil, fmt.Errorf("%w: --protoset %s: no message %q", ErrInput, path, message)
		}
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			return nil, fmt.Errorf("%w: --protoset %s: %q is not a message", ErrInput, path, message)
		}
		return &Schema{md: md, From: path}, nil
	}
	if len(set.File) == 0 {
		return nil, fmt.Errorf("%w: --protoset %s: no files", ErrInput, path)
	}
	fd, err := files.FindFileByPath(set.File[len(set.File)-1].GetName())
	if err != nil {
		return nil, fmt.Errorf("%w: --protoset %s: %v", ErrInput, path, err)
	}
	return pickMessage(fd, "", path)
}

func readBounded(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, over %d", path, fi.Size(), limit)
	}
	return os.ReadFile(path)
}

func pickMessage(fd protoreflect.FileDescriptor, message, from string) (*Schema, error) {
	var all []string
	var walk func(ms protoreflect.MessageDescriptors)
	byName := map[string]protoreflect.MessageDescriptor{}
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			if m.IsMapEntry() {
				continue
			}
			all = append(all, string(m.FullName()))
			byName[string(m.FullName())] = m
			walk(m.Messages())
		}
	}
	walk(fd.Messages())
	if message != "" {
		if md, ok := byName[message]; ok {
			return &Schema{md: md, From: from}, nil
		}
		// A message of an imported file, by full name.
		if d := findInImports(fd, protoreflect.FullName(message)); d != nil {
			return &Schema{md: d, From: from}, nil
		}
		return nil, fmt.Errorf("%w: %s has no message %q (it has %s)", ErrInput, from, message, listNames(all))
	}
	if fd.Messages().Len() == 1 {
		return &Schema{md: fd.Messages().Get(0), From: from}, nil
	}
	return nil, fmt.Errorf("%w: %s has %d messages: name one with --message (%s)", ErrInput, from, fd.Messages().Len(), listNames(all))
}

func findInImports(fd protoreflect.FileDescriptor, name protoreflect.FullName) protoreflect.MessageDescriptor {
	imps := fd.Imports()
	for i := range imps.Len() {
		f := imps.Get(i).FileDescriptor
		if d := f.Messages().ByName(name.Name()); d != nil && d.FullName() == name {
			return d
		}
	}
	return nil
}

func listNames(names []string) string {
	sort.Strings(names)
	if len(names) > 8 {
		names = append(names[:8], "…")
	}
	return strings.Join(names, ", ")
}

// oneLine keeps the first line of a compiler's error (it reports every
// error it found, one a line).
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// format is protobuf for this schema: each sample is read into a
// dynamicpb message by protojson (the JSON mapping a gRPC gateway or
// Connect uses), encoded and decoded by wirebench's protobuf codec, and
// read back through protojson for the comparison.
func (s *Schema) format() *format {
	c := codec.MustLookup("protobuf").Codec
	md := s.md
	return &format{
		name: "protobuf", library: "google.golang.org/protobuf (dynamicpb)", codec: c,
		how:       "dynamicpb " + string(md.FullName()) + ", read back through protojson (64-bit ints compared by value)",
		intString: true,
		own:       ownProto(md),
		msg:       md,
		toGo: func(v Value) (any, error) {
			m := dynamicpb.NewMessage(md)
			if err := protojson.Unmarshal(appendJSON(nil, v), m); err != nil {
				return nil, fmt.Errorf("%w: does not fit %s: %v", errSchema, md.FullName(), err)
			}
			return m, nil
		},
		decode: func(data []byte) (any, error) {
			m := dynamicpb.NewMessage(md)
			err := c.Unmarshal(data, m)
			return m, err
		},
		backAll: func(x any) ([]Value, error) {
			m := x.(proto.Message)
			var out []Value
			for _, protoNames := range []bool{true, false} {
				b, err := protojson.MarshalOptions{UseProtoNames: protoNames}.Marshal(m)
				if err != nil {
					return nil, err
				}
				v, err := parseValue(b, 10000)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			return out, nil
		},
	}
}

// numbers spells v's 64-bit integer fields as JSON numbers: protojson
// writes them as strings (JavaScript's numbers cannot hold them), and a
// record written in protobuf is then served in every other format as a
// number, as the file has it.
func numbers(md protoreflect.MessageDescriptor, v Value) Value {
	if v.Kind != Object {
		return v
	}
	out := Value{Kind: Object, Obj: make([]Member, len(v.Obj))}
	for i, m := range v.Obj {
		out.Obj[i] = m
		fd := md.Fields().ByJSONName(m.Key)
		if fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(m.Key))
		}
		if fd == nil {
			continue
		}
		conv := func(e Value) Value { return fieldNumbers(fd, e) }
		if fd.IsMap() {
			conv = func(e Value) Value { return fieldNumbers(fd.MapValue(), e) }
		}
		switch {
		case (fd.IsList() || fd.IsMap()) && (m.Val.Kind == Array || m.Val.Kind == Object):
			c := m.Val
			if c.Kind == Array {
				c.Arr = make([]Value, len(m.Val.Arr))
				for j, e := range m.Val.Arr {
					c.Arr[j] = conv(e)
				}
			} else {
				c.Obj = make([]Member, len(m.Val.Obj))
				for j, e := range m.Val.Obj {
					c.Obj[j] = Member{Key: e.Key, Val: conv(e.Val)}
				}
			}
			out.Obj[i].Val = c
		default:
			out.Obj[i].Val = conv(m.Val)
		}
	}
	return out
}

func fieldNumbers(fd protoreflect.FieldDescriptor, v Value) Value {
	switch fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if v.Kind == String && v.Str != "" && isInteger(v.Str) {
			if _, err := strconv.ParseFloat(v.Str, 64); err == nil {
				return Value{Kind: Number, Str: v.Str}
			}
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return numbers(fd.Message(), v)
	}
	return v
}
