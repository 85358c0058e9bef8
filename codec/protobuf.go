package codec

import (
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/pb"
)

// protobufCodec is google.golang.org/protobuf. The api types are converted
// to the messages of package wirebench.v1 (pb) and back; proto.Message
// values pass through untouched, so the codec also serves gRPC.
type protobufCodec struct{}

func (protobufCodec) Name() string { return "protobuf" }

func (p protobufCodec) Marshal(v any) ([]byte, error) {
	var m proto.Message
	switch v := v.(type) {
	case proto.Message:
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

func (p protobufCodec) Unmarshal(data []byte, v any) error {
	switch v := v.(type) {
	case proto.Message:
		return proto.Unmarshal(data, v)
	case *api.User:
		var m pb.User
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		pb.ToUser(&m, v)
	case *api.UserList:
		var m pb.UserList
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		pb.ToUserList(&m, v)
	case *api.Todo:
		var m pb.Todo
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		pb.ToTodo(&m, v)
	case *api.TodoList:
		var m pb.TodoList
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		pb.ToTodoList(&m, v)
	case *api.EchoRequest:
		var m pb.EchoRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		*v = api.EchoRequest{FirstMessage: m.FirstMessage, SecondMessage: m.SecondMessage}
	case *api.EchoResponse:
		var m pb.EchoResponse
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		*v = api.EchoResponse{Message: m.Message}
	case *api.Error:
		var m pb.Error
		if err := proto.Unmarshal(data, &m); err != nil {
			return err
		}
		*v = api.Error{Error: m.Error, Code: m.Code}
	default:
		return errType(p.Name(), v)
	}
	return nil
}

func init() { Register(protobufCodec{}, "application/x-protobuf", "application/protobuf") }
