package payload

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// listModel is the protobuf list response of a dataset: a message
// `RecordList { repeated Msg records = 1; }` built at run time beside the
// user's schema, as the reference API's UserList wraps User, so that
// protobuf's list is a list message as every other format's is an object
// with one array.
type listModel struct {
	md    protoreflect.MessageDescriptor
	field protoreflect.FieldDescriptor
}

func newListModel(s *Schema) (*listModel, error) {
	msg := s.md
	file := msg.ParentFile()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("wirebench_records_list.proto"),
		Package:    proto.String("wirebench.records"),
		Dependency: []string{file.Path()},
		Syntax:     proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("RecordList"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String(listMember), JsonName: proto.String(listMember), Number: proto.Int32(1),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
				Type:     descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
				TypeName: proto.String("." + string(msg.FullName())),
			}},
		}},
	}
	files := new(protoregistry.Files)
	var reg func(f protoreflect.FileDescriptor) error
	reg = func(f protoreflect.FileDescriptor) error {
		if _, err := files.FindFileByPath(f.Path()); err == nil {
			return nil
		}
		imps := f.Imports()
		for i := range imps.Len() {
			if err := reg(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		return files.RegisterFile(f)
	}
	if err := reg(file); err != nil {
		return nil, fmt.Errorf("the list message of %s: %w", msg.FullName(), err)
	}
	fd, err := protodesc.NewFile(fdp, files)
	if err != nil {
		return nil, fmt.Errorf("the list message of %s: %w", msg.FullName(), err)
	}
	md := fd.Messages().Get(0)
	return &listModel{md: md, field: md.Fields().Get(0)}, nil
}

// message is the list of recs' protobuf messages.
func (l *listModel) message(recs []*record) proto.Message {
	m := dynamicpb.NewMessage(l.md)
	list := m.Mutable(l.field).List()
	for _, r := range recs {
		list.Append(protoreflect.ValueOfMessage(r.goVal["protobuf"].(proto.Message).ProtoReflect()))
	}
	return m
}

// listFormat is f for list responses: protobuf decodes them into the list
// message; the other formats' models hold any value.
func (d *Dataset) listFormat(f *format) *format {
	if f.name != "protobuf" || d.list == nil {
		return f
	}
	lf := *f
	md := d.list.md
	lf.decode = func(data []byte) (any, error) {
		m := dynamicpb.NewMessage(md)
		err := f.codec.Unmarshal(data, m)
		return m, err
	}
	return &lf
}
