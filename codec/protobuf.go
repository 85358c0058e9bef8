package codec

import (
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/pb"
)

// protobufCodec is google.golang.org/protobuf. The api types are converted
// to the messages of package wirebench.v1 (pb) and back; proto.Message
// values pass through untouched, so the codec also serves gRPC; those
// without generated code (dynamicpb) are written in field-number order,
// as protoc writes them (marshalInOrder).
type protobufCodec struct{}

func (protobufCodec) Name() string { return "protobuf" }

func (p protobufCodec) Marshal(v any) ([]byte, error) {
	var m proto.Message
	switch v := v.(type) {
	case proto.Message:
		if mt := v.ProtoReflect().ProtoMethods(); mt == nil || mt.Marshal == nil {
			return marshalInOrder(v)
		}
		m = v
	case *api.User:
		m = pb.FromUser(v)
	case *api.UserList:
		m = pb.FromUserList(v)
	case *api.Todo:
		m = pb.FromTodo(v)
	case *api.TodoList:
		m = pb.FromTodoList(v)
	case *api.EchoRequest:
		m = &pb.EchoRequest{FirstMessage: v.FirstMessage, SecondMessage: v.SecondMessage}
	case *api.EchoResponse:
		m = &pb.EchoResponse{Message: v.Message}
	case *api.Error:
		m = &pb.Error{Error: v.Error, Code: v.Code}
	default:
		return nil, errType(p.Name(), v)
	}
	return proto.Marshal(m)
}

func (p protobufCodec) Unmarshal(data []byte, v any) (err error) {
	if err := scanProtobuf(data, DefaultLimits); err != nil {
		return err
	}
	defer recoverDecode("protobuf", &err)
	switch v := v.(type) {
	case proto.Message:
		return protoUnmarshal.Unmarshal(data, v)
	case *api.User:
		return unmarshalVia(data, func(m *pb.User) { pb.ToUser(m, v) })
	case *api.UserList:
		return unmarshalVia(data, func(m *pb.UserList) { pb.ToUserList(m, v) })
	case *api.Todo:
		return unmarshalVia(data, func(m *pb.Todo) { pb.ToTodo(m, v) })
	case *api.TodoList:
		return unmarshalVia(data, func(m *pb.TodoList) { pb.ToTodoList(m, v) })
	case *api.EchoRequest:
		return unmarshalVia(data, func(m *pb.EchoRequest) {
			*v = api.EchoRequest{FirstMessage: m.FirstMessage, SecondMessage: m.SecondMessage}
		})
	case *api.EchoResponse:
		return unmarshalVia(data, func(m *pb.EchoResponse) { *v = api.EchoResponse{Message: m.Message} })
	case *api.Error:
		return unmarshalVia(data, func(m *pb.Error) { *v = api.Error{Error: m.Error, Code: m.Code} })
	}
	return errType(p.Name(), v)
}

// protoUnmarshal applies DefaultLimits (limits.go): the library's own
// recursion limit is 10,000 levels.
var protoUnmarshal = proto.UnmarshalOptions{RecursionLimit: DefaultLimits.MaxDepth}

// unmarshalVia decodes data into a fresh message of type M and hands it to
// set, which converts it into the api value.
func unmarshalVia[M any, PM interface {
	*M
	proto.Message
}](data []byte, set func(PM)) error {
	m := PM(new(M))
	if err := protoUnmarshal.Unmarshal(data, m); err != nil {
		return err
	}
	set(m)
	return nil
}

func init() { Register(protobufCodec{}, "application/x-protobuf", "application/protobuf") }
