package grpcany

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ErrUnreachable is a server that reflection could not reach (the run's
// failure, exit 1, not a usage error).
var ErrUnreachable = errors.New("server unreachable")

// reflectionPaths are server reflection v1, then v1alpha: the messages of
// both are the same on the wire, so v1's types speak either.
var reflectionPaths = []string{
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}

// reflect asks the server for the method's descriptors by server
// reflection: the file defining the service, then any import the server
// did not send with it.
func reflect(ctx context.Context, cc *grpc.ClientConn, addr, method string) (*Method, error) {
	svc, _, err := SplitMethod(method)
	if err != nil {
		return nil, err
	}
	var codesSeen []string
	for _, path := range reflectionPaths {
		r, err := newReflector(ctx, cc, path)
		if err == nil {
			var fds []*descriptorpb.FileDescriptorProto
			fds, err = r.fileContaining(svc)
			if err == nil {
				r.close()
				return fromProtos(fds, method, "server reflection of "+addr)
			}
			if errors.Is(err, errNoSymbol) {
				services, lerr := r.services()
				r.close()
				if lerr != nil {
					services = []string{"(not listed: " + lerr.Error() + ")"}
				}
				return nil, fmt.Errorf("%w: unknown service %s on %s (services: %s)", ErrOptions, svc, addr, list(services))
			}
			r.close()
		}
		st, _ := status.FromError(err)
		switch st.Code() {
		case codes.Unimplemented, codes.PermissionDenied, codes.Unauthenticated:
			codesSeen = append(codesSeen, st.Code().String())
			continue
		case codes.Unavailable, codes.DeadlineExceeded:
			return nil, fmt.Errorf("%w: %s (asking its reflection for the method): %s", ErrUnreachable, addr, st.Message())
		}
		return nil, fmt.Errorf("%w: server reflection of %s failed: %v", ErrOptions, addr, err)
	}
	return nil, fmt.Errorf("%w: %s refused server reflection (v1: %s, v1alpha: %s): name the method's files with --proto or --protoset",
		ErrOptions, addr, codesSeen[0], codesSeen[len(codesSeen)-1])
}

var errNoSymbol = errors.New("symbol not found")

type reflector struct {
	st     grpc.ClientStream
	cancel context.CancelFunc
}

func newReflector(ctx context.Context, cc *grpc.ClientConn, path string) (*reflector, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, path)
	if err != nil {
		cancel()
		return nil, err
	}
	return &reflector{st: st, cancel: cancel}, nil
}

func (r *reflector) close() {
	r.st.CloseSend() //nolint:errcheck // the stream is cancelled next
	r.cancel()
}

func (r *reflector) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	if err := r.st.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	resp := new(rpb.ServerReflectionResponse)
	if err := r.st.RecvMsg(resp); err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		if codes.Code(e.ErrorCode) == codes.NotFound {
			return nil, errNoSymbol
		}
		return nil, status.Error(codes.Code(e.ErrorCode), e.ErrorMessage)
	}
	return resp, nil
}

// fileContaining fetches the file defining symbol and every file it
// imports, transitively.
func (r *reflector) fileContaining(symbol string) ([]*descriptorpb.FileDescriptorProto, error) {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}})
	if err != nil {
		return nil, err
	}
	have := map[string]*descriptorpb.FileDescriptorProto{}
	var order []*descriptorpb.FileDescriptorProto
	add := func(resp *rpb.ServerReflectionResponse) error {
		for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("server reflection sent a bad file descriptor: %v", err)
			}
			if _, ok := have[fd.GetName()]; !ok {
				have[fd.GetName()] = fd
				order = append(order, fd)
			}
		}
		return nil
	}
	if err := add(resp); err != nil {
		return nil, err
	}
	for i := 0; i < len(order); i++ {
		for _, dep := range order[i].GetDependency() {
			if _, ok := have[dep]; ok {
				continue
			}
			resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, fmt.Errorf("server reflection: import %s: %w", dep, err)
			}
			if err := add(resp); err != nil {
				return nil, err
			}
		}
	}
	return order, nil
}

// services lists the services the server reflects.
func (r *reflector) services() ([]string, error) {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"}})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		out = append(out, s.GetName())
	}
	return out, nil
}
