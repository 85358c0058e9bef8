package grpcapi

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// ServerCodec is the option NewServer installs: requests decode through
// package codec's protobuf codec, so gRPC applies the same decoding limits
// as REST (codec.Limits), and a request that does not decode reaches our
// error table as InvalidArgument. grpc-go itself reports any codec failure
// as Internal, before a handler or interceptor runs, which our own table
// says is wrong for a malformed request.
func ServerCodec() grpc.ServerOption { return grpc.ForceServerCodecV2(serverCodec{}) }

// serverCodec marshals with grpc-go's proto codec (its pooled buffers) and
// unmarshals with codec's protobuf codec. A *pendingRequest (see
// decodeErrors) receives the decoding error instead of failing the call.
type serverCodec struct{}

var (
	grpcProto  = encoding.GetCodecV2(grpcproto.Name)
	protoCodec = codec.MustLookup("protobuf").Codec
)

func (serverCodec) Name() string { return grpcproto.Name }

func (serverCodec) Marshal(v any) (mem.BufferSlice, error) { return grpcProto.Marshal(v) }

func (serverCodec) Unmarshal(data mem.BufferSlice, v any) error {
	var b []byte
	if len(data) == 1 {
		// One buffer (a message in one DATA frame: every small call)
		// is decoded where it is, without a copy into a pooled buffer.
		b = data[0].ReadOnlyData()
	} else {
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		b = buf.ReadOnlyData()
	}
	if p, ok := v.(*pendingRequest); ok {
		p.err = protoCodec.Unmarshal(b, p.msg)
		return nil
	}
	return protoCodec.Unmarshal(b, v)
}

// pendingRequest carries a request message through grpc-go's decoding and
// brings back the codec's error, so a handler can answer it.
type pendingRequest struct {
	msg any
	err error
}

// ProtoReflect makes a pendingRequest a proto.Message standing for its
// message, so that a server without ServerCodec (grpc-go's own proto
// codec) still decodes requests into it: Register then works on any
// *grpc.Server, with grpc-go's codes for malformed requests.
func (p *pendingRequest) ProtoReflect() protoreflect.Message {
	return p.msg.(proto.Message).ProtoReflect()
}

// decodeErrors returns a copy of sd whose unary handlers report a request
// that does not decode as api.ErrMalformed (InvalidArgument). Failures of
// the transport itself (size, decompression) keep grpc-go's codes.
func decodeErrors(sd *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *sd
	out.Methods = slices.Clone(sd.Methods)
	for i := range out.Methods {
		h := sd.Methods[i].Handler
		name := sd.ServiceName + "/" + sd.Methods[i].MethodName
		out.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			d := decoders.Get().(*unaryDecoder)
			d.dec, d.name = dec, name
			resp, err := h(srv, ctx, d.fn, ic)
			*d = unaryDecoder{fn: d.fn} // hold nothing of the call while pooled
			decoders.Put(d)
			return resp, err
		}
	}
	return &out
}

// unaryDecoder is one unary call's decoding through a pendingRequest. It is
// pooled, with its decode method bound once, so that decodeErrors costs a
// call no allocation (a closure over dec and a pendingRequest, two per call
// before). The generated handlers call dec before they return, and nothing
// on our servers keeps the message grpc-go's RecvMsg was given (a stats
// handler could: Register's servers have none).
type unaryDecoder struct {
	dec  func(any) error
	name string
	p    pendingRequest
	fn   func(any) error // decode
}

var decoders = sync.Pool{New: func() any {
	d := new(unaryDecoder)
	d.fn = d.decode
	return d
}}

func (d *unaryDecoder) decode(v any) error {
	d.p = pendingRequest{msg: v}
	if err := d.dec(&d.p); err != nil {
		return err
	}
	if d.p.err != nil {
		return statusErr(fmt.Errorf("%w: %s request: %v", api.ErrMalformed, d.name, d.p.err))
	}
	return nil
}
