package payload

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// listModel is the protobuf list response of a dataset: a message
// `RecordList { repeated Msg records = 1; }` built at run time beside the
// user's schema, as the reference API's UserList wraps User, so that
// protobuf's list is a list message as every other format's is an object
// with one array.
type listModel struct {
	md    protoreflect.MessageDescriptor
	field protoreflect.FieldDescriptor
	// svc is the records' gRPC service, beside the list message.
	svc protoreflect.ServiceDescriptor
}

func newListModel(s *Schema) (*listModel, error) {
	msg := s.md
	file := msg.ParentFile()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("wirebench_records_list.proto"),
		Package:    proto.String("wirebench.records"),
		Dependency: []string{file.Path(), emptypb.File_google_protobuf_empty_proto.Path()},
		Syntax:     proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("RecordList"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String(listMember), JsonName: proto.String(listMember), Number: proto.Int32(1),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
				Type:     descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
				TypeName: proto.String("." + string(msg.FullName())),
			}},
		}, {
			Name: proto.String("RecordKey"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("key"), JsonName: proto.String("key"), Number: proto.Int32(1),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			}},
		}},
		// The REST routes' five operations as a gRPC service of the
		// user's message (grpcapi.RegisterRecords serves it).
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("Records"),
			Method: []*descriptorpb.MethodDescriptorProto{
				rpc("List", ".google.protobuf.Empty", ".wirebench.records.RecordList"),
				rpc("Get", ".wirebench.records.RecordKey", "."+string(msg.FullName())),
				rpc("Create", "."+string(msg.FullName()), "."+string(msg.FullName())),
				rpc("Update", "."+string(msg.FullName()), "."+string(msg.FullName())),
				rpc("Delete", ".wirebench.records.RecordKey", ".google.protobuf.Empty"),
			},
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
	if err := reg(emptypb.File_google_protobuf_empty_proto); err != nil {
		return nil, fmt.Errorf("the list message of %s: %w", msg.FullName(), err)
	}
	if err := reg(file); err != nil {
		return nil, fmt.Errorf("the list message of %s: %w", msg.FullName(), err)
	}
	fd, err := protodesc.NewFile(fdp, files)
	if err != nil {
		return nil, fmt.Errorf("the list message of %s: %w", msg.FullName(), err)
	}
	md := fd.Messages().Get(0)
	return &listModel{md: md, field: md.Fields().Get(0), svc: fd.Services().Get(0)}, nil
}

func rpc(name, in, out string) *descriptorpb.MethodDescriptorProto {
	return &descriptorpb.MethodDescriptorProto{Name: proto.String(name), InputType: proto.String(in), OutputType: proto.String(out)}
}

// Service is the records' gRPC service, wirebench.records.Records: List
// (google.protobuf.Empty → RecordList), Get (RecordKey → the record),
// Create and Update (the record → the record), Delete (RecordKey →
// Empty). Nil without a schema or when protobuf is not served.
func (d *Dataset) Service() protoreflect.ServiceDescriptor {
	if d.list == nil || d.byName["protobuf"] == nil {
		return nil
	}
	return d.list.svc
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

// Expected is a record prepared to check replies in one format: in
// protobuf, the message the file's record is, which a reply is compared
// with by proto.Equal first (the fast way, on the client's hot path),
// the records' change-by-change comparison naming what differs only when
// it is not equal.
type Expected struct {
	Val Value
	f   *format
	msg proto.Message
}

// Expect prepares v to check replies in format.
func (d *Dataset) Expect(format string, v Value) (*Expected, error) {
	f, err := d.served(format)
	if err != nil {
		return nil, err
	}
	e := &Expected{Val: v, f: f}
	if f.name == "protobuf" {
		x, err := f.toGo(v)
		if err != nil {
			return nil, stripSchema(err)
		}
		e.msg = x.(proto.Message)
	}
	return e, nil
}

// CheckExpected decodes body, a reply in e's format, and compares it with e.
func (d *Dataset) CheckExpected(body []byte, e *Expected) error {
	if e.msg != nil {
		m := dynamicpb.NewMessage(e.msg.ProtoReflect().Descriptor())
		if e.f.codec.Unmarshal(body, m) == nil && proto.Equal(m, e.msg) {
			return nil
		}
	}
	return d.check(e.f, body, e.Val)
}

// protoListEqual reports whether body, a protobuf list reply, holds the
// loaded records first, in order and equal, and at most extra more.
func (d *Dataset) protoListEqual(body []byte, extra int) bool {
	f := d.byName["protobuf"]
	m := dynamicpb.NewMessage(d.list.md)
	if f.codec.Unmarshal(body, m) != nil {
		return false
	}
	l := m.Get(d.list.field).List()
	if l.Len() < len(d.originals) || l.Len() > len(d.originals)+extra {
		return false
	}
	for i, r := range d.originals {
		if !proto.Equal(l.Get(i).Message().Interface(), r.goVal["protobuf"].(proto.Message)) {
			return false
		}
	}
	return true
}

// ListLen decodes body, a list response in format, and counts its
// records, whatever they hold: the count a run checks once it is over
// (every copy a client created deleted again).
func (d *Dataset) ListLen(format string, body []byte) (int, error) {
	f, err := d.served(format)
	if err != nil {
		return 0, err
	}
	if f.name == "protobuf" && d.list != nil {
		m := dynamicpb.NewMessage(d.list.md)
		if err := f.codec.Unmarshal(body, m); err != nil {
			return 0, fmt.Errorf("cannot decode: %w", err)
		}
		return m.Get(d.list.field).List().Len(), nil
	}
	x, err := f.decode(body)
	if err != nil {
		return 0, fmt.Errorf("cannot decode: %w", err)
	}
	backs, err := f.readBack(x)
	if err != nil {
		return 0, err
	}
	for _, b := range backs {
		if l, ok := member(b, listMember); ok && l.Kind == Array {
			return len(l.Arr), nil
		}
	}
	return 0, fmt.Errorf("no %q array in the list", listMember)
}

// ListKeys decodes body, a list response in format, and returns its
// records' keys, spelled as Record and WithKey spell them: what a run split
// in segments checks once it is over (the file's records all there, none of
// its own copies left).
func (d *Dataset) ListKeys(format string, body []byte) ([]string, error) {
	f, err := d.served(format)
	if err != nil {
		return nil, err
	}
	f = d.listFormat(f)
	x, err := f.decode(body)
	if err != nil {
		return nil, fmt.Errorf("cannot decode: %w", err)
	}
	backs, err := f.readBack(x)
	if err != nil {
		return nil, err
	}
	var list Value
	for _, b := range backs { // the reading that spells the key as the dataset does
		if l, ok := member(b, listMember); ok && l.Kind == Array {
			if _, keyed := member(firstOr(l.Arr), d.Key); keyed || list.Kind != Array {
				list = l
			}
		}
	}
	if list.Kind != Array {
		return nil, fmt.Errorf("no %q array in the list", listMember)
	}
	keys := make([]string, 0, len(list.Arr))
	for _, e := range list.Arr {
		kv, ok := member(e, d.Key)
		if !ok {
			return nil, fmt.Errorf("a record without its key %q", d.Key)
		}
		ks, _, _ := keyString(kv)
		if kv.Kind == String && d.keyNumber {
			ks = kv.Str // protojson's int64 as a string
		}
		keys = append(keys, ks)
	}
	return keys, nil
}

// CheckMessage compares m, a decoded protobuf reply (gRPC's), with e: by
// proto.Equal first, change by change only when it differs.
func (d *Dataset) CheckMessage(m proto.Message, e *Expected) error {
	if e.msg != nil && proto.Equal(m, e.msg) {
		return nil
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	return d.check(e.f, b, e.Val)
}

// CheckListMessage is CheckList of a decoded RecordList (gRPC's List).
func (d *Dataset) CheckListMessage(m proto.Message, extra int) error {
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	return d.CheckList("protobuf", b, extra)
}
