package grpcapi

//lint:file-ignore SA1019 v1alpha is served beside v1 for clients that still ask for it.

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Server reflection (grpc.reflection.v1 and v1alpha), as grpc-go's
// reflection package answers it, so that grpcurl and ghz need no .proto
// files, but without that package: it imports protodesc, whose init
// unpacks descriptor.proto (~180 kB of live heap with descriptorpb) that
// every GC cycle of a server under load marks again, REST or gRPC
// (issue 17). Here nothing is built before the first reflection call:
// a file's serialized FileDescriptorProto is the one protoc-gen-go
// embedded, read through the generated (deprecated) Descriptor methods.
// Files built at run time (RegisterRecords) have none: theirs is written
// with protodesc, which the binary links for compiling .proto files.

// reflection answers reflection streams for the services of srv.
type reflection struct {
	srv interface {
		GetServiceInfo() map[string]grpc.ServiceInfo
	}
	rpb.UnimplementedServerReflectionServer
}

// registerReflection adds both reflection versions to s.
func registerReflection(s Registrar) {
	r := &reflection{srv: s}
	rpb.RegisterServerReflectionServer(s, r)
	rpbalpha.RegisterServerReflectionServer(s, alphaReflection{r: r})
}

// runtimeFiles are the files of services registered with their file
// descriptor as metadata (RegisterRecords: built at run time, in no
// global registry), with their imports.
func (r *reflection) runtimeFiles() *protoregistry.Files {
	files := new(protoregistry.Files)
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if _, err := files.FindFileByPath(fd.Path()); err == nil {
			return
		}
		imps := fd.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).FileDescriptor)
		}
		_ = files.RegisterFile(fd) // a clash leaves the first: lookups find it
	}
	for _, info := range r.srv.GetServiceInfo() {
		if fd, ok := info.Metadata.(protoreflect.FileDescriptor); ok {
			add(fd)
		}
	}
	return files
}

// errNoDescriptor says a file's descriptor cannot be served.
var errNoDescriptor = errors.New("no serialized descriptor")

// rawDescriptor is the serialized FileDescriptorProto of fd, as generated
// code embeds it (gzipped) behind the Descriptor method of its messages
// and the EnumDescriptor method of its enums. A file that declares
// neither (only services or extensions) has none to offer.
func rawDescriptor(fd protoreflect.FileDescriptor) ([]byte, error) {
	if g, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path()); err != nil || g != fd {
		// A file built at run time (the user's records' schema and the
		// service around it): no generated code embeds it, so its
		// descriptor is written from what was compiled.
		return proto.Marshal(protodesc.ToFileDescriptorProto(fd))
	}
	var gz []byte
	ms, es := fd.Messages(), fd.Enums()
	if ms.Len() > 0 {
		if mt, err := protoregistry.GlobalTypes.FindMessageByName(ms.Get(0).FullName()); err == nil {
			if d, ok := mt.Zero().Interface().(interface{ Descriptor() ([]byte, []int) }); ok {
				gz, _ = d.Descriptor()
			}
		}
	} else if es.Len() > 0 {
		if et, err := protoregistry.GlobalTypes.FindEnumByName(es.Get(0).FullName()); err == nil {
			if d, ok := et.New(0).(interface{ EnumDescriptor() ([]byte, []int) }); ok {
				gz, _ = d.EnumDescriptor()
			}
		}
	}
	if gz == nil {
		if ms.Len() == 0 && es.Len() == 0 {
			return nil, fmt.Errorf("%w for %s (it declares no message or enum)", errNoDescriptor, fd.Path())
		}
		// Registered without generated code (internal/protofeatures'
		// files, which a user's schema may import): written from the
		// descriptor, as a file built at run time is.
		return proto.Marshal(protodesc.ToFileDescriptorProto(fd))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("%s: descriptor: %w", fd.Path(), err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: descriptor: %w", fd.Path(), err)
	}
	return b, nil
}

// withImports is fd's descriptor and those of its transitive imports that
// this stream has not sent yet (fd's own is sent again if asked for), as
// grpc-go's reflection does. Placeholder files (imports that were never
// registered) are skipped; a placeholder fd is not found.
func withImports(fd protoreflect.FileDescriptor, sent map[string]bool) ([][]byte, error) {
	if fd.IsPlaceholder() {
		return nil, protoregistry.NotFound
	}
	var out [][]byte
	queue := []protoreflect.FileDescriptor{fd}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if f.IsPlaceholder() || (len(out) > 0 && sent[f.Path()]) {
			continue
		}
		b, err := rawDescriptor(f)
		if err != nil {
			return nil, err
		}
		sent[f.Path()] = true
		out = append(out, b)
		for i := range f.Imports().Len() {
			queue = append(queue, f.Imports().Get(i).FileDescriptor)
		}
	}
	return out, nil
}

// answer is the response to one request; sent is the stream's record of
// the files it has sent.
func (r *reflection) answer(in *rpb.ServerReflectionRequest, sent map[string]bool) (*rpb.ServerReflectionResponse, error) {
	out := &rpb.ServerReflectionResponse{ValidHost: in.Host, OriginalRequest: in}
	files := func(fds [][]byte, err error) {
		if err != nil {
			out.MessageResponse = &rpb.ServerReflectionResponse_ErrorResponse{ErrorResponse: &rpb.ErrorResponse{
				ErrorCode: int32(codes.NotFound), ErrorMessage: err.Error()}}
			return
		}
		out.MessageResponse = &rpb.ServerReflectionResponse_FileDescriptorResponse{
			FileDescriptorResponse: &rpb.FileDescriptorResponse{FileDescriptorProto: fds}}
	}
	switch req := in.MessageRequest.(type) {
	case *rpb.ServerReflectionRequest_FileByFilename:
		fd, err := protoregistry.GlobalFiles.FindFileByPath(req.FileByFilename)
		if err != nil {
			fd, err = r.runtimeFiles().FindFileByPath(req.FileByFilename)
		}
		if err != nil {
			files(nil, err)
			break
		}
		files(withImports(fd, sent))
	case *rpb.ServerReflectionRequest_FileContainingSymbol:
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(req.FileContainingSymbol))
		if err != nil {
			d, err = r.runtimeFiles().FindDescriptorByName(protoreflect.FullName(req.FileContainingSymbol))
		}
		if err != nil {
			files(nil, err)
			break
		}
		files(withImports(d.ParentFile(), sent))
	case *rpb.ServerReflectionRequest_FileContainingExtension:
		e := req.FileContainingExtension
		xt, err := protoregistry.GlobalTypes.FindExtensionByNumber(protoreflect.FullName(e.GetContainingType()), protoreflect.FieldNumber(e.GetExtensionNumber()))
		if err != nil {
			files(nil, err)
			break
		}
		files(withImports(xt.TypeDescriptor().ParentFile(), sent))
	case *rpb.ServerReflectionRequest_AllExtensionNumbersOfType:
		name := protoreflect.FullName(req.AllExtensionNumbersOfType)
		var nums []int32
		protoregistry.GlobalTypes.RangeExtensionsByMessage(name, func(xt protoreflect.ExtensionType) bool {
			nums = append(nums, int32(xt.TypeDescriptor().Number()))
			return true
		})
		slices.Sort(nums)
		if len(nums) == 0 { // an unknown type is not found, a known one has none
			if _, err := protoregistry.GlobalFiles.FindDescriptorByName(name); err != nil {
				files(nil, err)
				break
			}
		}
		out.MessageResponse = &rpb.ServerReflectionResponse_AllExtensionNumbersResponse{
			AllExtensionNumbersResponse: &rpb.ExtensionNumberResponse{BaseTypeName: string(name), ExtensionNumber: nums}}
	case *rpb.ServerReflectionRequest_ListServices:
		info := r.srv.GetServiceInfo()
		svcs := make([]*rpb.ServiceResponse, 0, len(info))
		for name := range info {
			svcs = append(svcs, &rpb.ServiceResponse{Name: name})
		}
		slices.SortFunc(svcs, func(a, b *rpb.ServiceResponse) int { return cmp.Compare(a.Name, b.Name) })
		out.MessageResponse = &rpb.ServerReflectionResponse_ListServicesResponse{ListServicesResponse: &rpb.ListServiceResponse{Service: svcs}}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "invalid MessageRequest: %v", in.MessageRequest)
	}
	return out, nil
}

// ServerReflectionInfo serves one v1 stream: one response per request.
func (r *reflection) ServerReflectionInfo(stream rpb.ServerReflection_ServerReflectionInfoServer) error {
	return r.serve(stream.Recv, stream.Send)
}

func (r *reflection) serve(recv func() (*rpb.ServerReflectionRequest, error), send func(*rpb.ServerReflectionResponse) error) error {
	sent := map[string]bool{}
	for {
		in, err := recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		out, err := r.answer(in, sent)
		if err != nil {
			return err
		}
		if err := send(out); err != nil {
			return err
		}
	}
}

// alphaReflection is v1alpha: the same messages under another package
// (field for field, so a v1 message re-read as v1alpha is the same).
type alphaReflection struct {
	r *reflection
	rpbalpha.UnimplementedServerReflectionServer
}

func (a alphaReflection) ServerReflectionInfo(stream rpbalpha.ServerReflection_ServerReflectionInfoServer) error {
	return a.r.serve(func() (*rpb.ServerReflectionRequest, error) {
		in, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		var v1 rpb.ServerReflectionRequest
		return &v1, convert(in, &v1)
	}, func(out *rpb.ServerReflectionResponse) error {
		var alpha rpbalpha.ServerReflectionResponse
		if err := convert(out, &alpha); err != nil {
			return err
		}
		return stream.Send(&alpha)
	})
}

// convert copies one version's message into the other's through the wire.
func convert(from, to proto.Message) error {
	b, err := proto.Marshal(from)
	if err != nil {
		return status.Errorf(codes.Internal, "reflection: %v", err)
	}
	if err := proto.Unmarshal(b, to); err != nil {
		return status.Errorf(codes.InvalidArgument, "reflection: %v", err)
	}
	return nil
}
