package grpcany

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	// Before protocompile's init: see the package.
	_ "github.com/wirebench/wirebench/internal/protofeatures"
)

// Method is one method resolved from its descriptors.
type Method struct {
	Desc protoreflect.MethodDescriptor
	// Path is the HTTP/2 :path of the method: /pkg.Service/Method.
	Path string
	// Types resolves the message types the descriptors know (for
	// google.protobuf.Any in JSON).
	Types *dynamicpb.Types
}

// Name is the method's full name, pkg.Service/Method: the run's
// operation name.
func (m *Method) Name() string { return strings.TrimPrefix(m.Path, "/") }

// Kind is unary, server-stream, client-stream or bidi.
func (m *Method) Kind() string {
	switch {
	case m.Desc.IsStreamingClient() && m.Desc.IsStreamingServer():
		return KindBidi
	case m.Desc.IsStreamingServer():
		return KindServerStream
	case m.Desc.IsStreamingClient():
		return KindClientStream
	}
	return KindUnary
}

// Method kinds.
const (
	KindUnary        = "unary"
	KindServerStream = "server-stream"
	KindClientStream = "client-stream"
	KindBidi         = "bidi"
)

// SplitMethod reads pkg.Service/Method, or ghz's pkg.Service.Method, into
// the service's full name and the method's.
func SplitMethod(s string) (service, method string, err error) {
	s = strings.TrimPrefix(s, "/")
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		i = strings.LastIndexByte(s, '.')
	}
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("%w: --grpc %q: want pkg.Service/Method", ErrOptions, s)
	}
	return s[:i], s[i+1:], nil
}

// descriptors is where a method's descriptors come from: a registry of
// files (compiled, a protoset, or fetched by reflection).
type descriptors interface {
	FindDescriptorByName(protoreflect.FullName) (protoreflect.Descriptor, error)
}

// find looks the method up in files; services lists the services known,
// for the message naming what there is.
func find(files descriptors, services []string, full, source string) (*Method, error) {
	svc, name, err := SplitMethod(full)
	if err != nil {
		return nil, err
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(svc))
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		slices.Sort(services)
		return nil, fmt.Errorf("%w: unknown service %s in %s (services: %s)", ErrOptions, svc, source, list(services))
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		var have []string
		for i := range sd.Methods().Len() {
			have = append(have, string(sd.Methods().Get(i).Name()))
		}
		return nil, fmt.Errorf("%w: service %s has no method %s (methods: %s)", ErrOptions, svc, name, list(have))
	}
	m := &Method{Desc: md, Path: "/" + svc + "/" + name}
	return m, nil
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// compile compiles .proto files in process (protocompile: no protoc at
// run time) and finds the method. A file is named as given when it lies
// under an import path, else by its base name with its folder as one more
// import path, as ghz and protoc's users expect.
func compile(ctx context.Context, protos, importPaths []string, method string) (*Method, error) {
	paths := slices.Clone(importPaths)
	names := make([]string, len(protos))
	for i, p := range protos {
		names[i] = p
		rel := ""
		for _, ip := range importPaths {
			if r, err := filepath.Rel(ip, p); err == nil && !strings.HasPrefix(r, "..") {
				rel = r
				break
			}
		}
		if rel == "" {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("%w: --proto: %v", ErrOptions, err)
			}
			rel = filepath.Base(p)
			if dir := filepath.Dir(p); !slices.Contains(paths, dir) {
				paths = append(paths, dir)
			}
		}
		names[i] = filepath.ToSlash(rel)
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}),
	}
	files, err := c.Compile(ctx, names...)
	if err != nil {
		// protocompile's errors read file:line:col: message.
		return nil, fmt.Errorf("%w: --proto does not compile: %v", ErrOptions, err)
	}
	var services []string
	eachService(files, func(sd protoreflect.ServiceDescriptor) { services = append(services, string(sd.FullName())) })
	m, err := find(files.AsResolver(), services, method, strings.Join(protos, ", "))
	if err != nil {
		return nil, err
	}
	reg := new(protoregistry.Files)
	for _, f := range files {
		addDeps(reg, f)
	}
	m.Types = dynamicpb.NewTypes(reg)
	return m, nil
}

// addDeps registers f and its imports (once each).
func addDeps(reg *protoregistry.Files, f protoreflect.FileDescriptor) {
	if _, err := reg.FindFileByPath(f.Path()); err == nil {
		return
	}
	imps := f.Imports()
	for i := range imps.Len() {
		addDeps(reg, imps.Get(i).FileDescriptor)
	}
	reg.RegisterFile(f) //nolint:errcheck // a clash leaves the first, which the method's file links to
}

func eachService(files linker.Files, fn func(protoreflect.ServiceDescriptor)) {
	for _, f := range files {
		for i := range f.Services().Len() {
			fn(f.Services().Get(i))
		}
	}
}

// protoset reads a FileDescriptorSet (protoc --descriptor_set_out
// --include_imports, buf build -o) and finds the method.
func protoset(file, method string) (*Method, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: --protoset: %v", ErrOptions, err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%w: --protoset %s: not a FileDescriptorSet: %v", ErrOptions, file, err)
	}
	return fromProtos(set.File, method, "--protoset "+file)
}

// fromProtos links file descriptor protos (a protoset's, or reflection's)
// and finds the method.
func fromProtos(fds []*descriptorpb.FileDescriptorProto, method, source string) (*Method, error) {
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: fds})
	if err != nil {
		var missing string
		if errors.Is(err, protoregistry.NotFound) {
			missing = " (were its imports included? protoc needs --include_imports)"
		}
		return nil, fmt.Errorf("%w: %s: %v%s", ErrOptions, source, err, missing)
	}
	var services []string
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			services = append(services, string(f.Services().Get(i).FullName()))
		}
		return true
	})
	m, err := find(files, services, method, source)
	if err != nil {
		return nil, err
	}
	m.Types = dynamicpb.NewTypes(files)
	return m, nil
}
