package grpcapi

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Records is the user's records as the gRPC service serves them: a
// payload.Dataset (which this package does not import: payload reaches the
// load client, whose tests start the server). format is a codec name.
type Records interface {
	// Service is the service to serve, nil if none (no schema).
	Service() protoreflect.ServiceDescriptor
	List(format string) (any, error)
	Get(key, format string) (any, error)
	Create(body []byte, in, out string) (any, error)
	Update(body []byte, in, out string) (any, error)
	Delete(key string) error
}

// RegisterRecords serves the user's records (serve --data with a schema)
// over gRPC: the service wirebench.records.Records that d builds at run
// time around the user's message (Records.Service), its handlers
// decoding into dynamicpb messages, on the same dataset the REST routes
// serve. Server reflection finds its descriptors through the service's
// metadata, so grpcurl, ghz and load --grpc need no .proto. It does
// nothing when d has no gRPC service (no schema, protobuf not served).
func RegisterRecords(s Registrar, d Records) {
	svc := d.Service()
	if svc == nil {
		return
	}
	ms := svc.Methods()
	sd := &grpc.ServiceDesc{ServiceName: string(svc.FullName()), HandlerType: (*any)(nil),
		Metadata: svc.ParentFile()} // reflection reads the file from here
	for i := range ms.Len() {
		m := ms.Get(i)
		call := recordsCall(d, m)
		in := m.Input()
		name := "/" + string(svc.FullName()) + "/" + string(m.Name())
		sd.Methods = append(sd.Methods, grpc.MethodDesc{MethodName: string(m.Name()),
			Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
				req := dynamicpb.NewMessage(in)
				if err := dec(req); err != nil {
					return nil, status.Error(codes.InvalidArgument, status.Convert(err).Message())
				}
				h := func(ctx context.Context, req any) (any, error) { return call(req.(proto.Message)) }
				if ic == nil {
					return h(ctx, req)
				}
				return ic(ctx, req, &grpc.UnaryServerInfo{FullMethod: name}, h)
			}})
	}
	s.RegisterService(sd, struct{}{})
}

// recordsCall is method m on d: the REST routes' operations, in protobuf.
func recordsCall(d Records, m protoreflect.MethodDescriptor) func(proto.Message) (any, error) {
	const pb = "protobuf"
	key := func(req proto.Message) string {
		r := req.ProtoReflect()
		return r.Get(r.Descriptor().Fields().ByName("key")).String()
	}
	reply := func(v any, err error) (any, error) {
		if err != nil {
			return nil, statusErr(err)
		}
		return v, nil
	}
	body := func(req proto.Message) ([]byte, error) {
		b, err := proto.Marshal(req)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		return b, nil
	}
	switch m.Name() {
	case "List":
		return func(proto.Message) (any, error) { return reply(d.List(pb)) }
	case "Get":
		return func(req proto.Message) (any, error) { return reply(d.Get(key(req), pb)) }
	case "Create":
		return func(req proto.Message) (any, error) {
			b, err := body(req)
			if err != nil {
				return nil, err
			}
			return reply(d.Create(b, pb, pb))
		}
	case "Update":
		return func(req proto.Message) (any, error) {
			b, err := body(req)
			if err != nil {
				return nil, err
			}
			return reply(d.Update(b, pb, pb))
		}
	case "Delete":
		return func(req proto.Message) (any, error) {
			if err := d.Delete(key(req)); err != nil {
				return nil, statusErr(err)
			}
			return &emptypb.Empty{}, nil
		}
	}
	return func(proto.Message) (any, error) {
		return nil, status.Errorf(codes.Unimplemented, "method %s", m.Name())
	}
}
