package study

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/grpcany"
)

// grpcLoad reads a load that calls one gRPC method (grpc:, proto:,
// import_paths:, protoset:, data:, data_file:, protocol:, expect:,
// messages:; headers: are its metadata) at url, host:port. What needs the
// server — reflection, and checking the request against the message — is
// done when each run starts; what the file alone decides is checked here.
func (p *parser) grpcLoad(ls *loadSpec, l *LoadSpec, n *yaml.Node, path string, line func(string) int) {
	for _, k := range []string{"method", "body", "body_file", "expect_status", "expect_body_contains", "scenario", "format", "compression", "flow", "replay", "speed", "as_format", "loop", "no_keepalive"} {
		if isSet(n, k) {
			p.errorf(line(k), "%s.%s: does not apply to a grpc: method (its request is data: or data_file:, its checks expect:)", path, k)
		}
	}
	if _, _, err := grpcany.SplitMethod(ls.GRPC); err != nil {
		p.errorf(line("grpc"), "%s.grpc: %q: want pkg.Service/Method", path, ls.GRPC)
		return
	}
	switch ls.Protocol {
	case "", grpcany.GRPC, grpcany.GRPCWeb, grpcany.Connect:
	default:
		p.errorf(line("protocol"), "%s.protocol: %q: want grpc, grpc-web or connect", path, ls.Protocol)
		return
	}
	switch {
	case len(ls.Proto) > 0 && ls.Protoset != "":
		p.errorf(line("protoset"), "%s: proto and protoset exclude each other", path)
		return
	case ls.Data != "" && ls.DataFile != "":
		p.errorf(line("data_file"), "%s: data and data_file exclude each other", path)
		return
	case ls.Messages < 0:
		p.errorf(line("messages"), "%s.messages: %d is negative", path, ls.Messages)
		return
	}
	co := p.connOptions(ls)
	co.Transport, co.NoKeepAlive = "", false // gRPC's own, by protocol (both refused above)
	o := &grpcany.Options{
		Options:  co,
		Method:   ls.GRPC,
		Data:     ls.Data,
		Protocol: ls.Protocol,
		Expect:   ls.Expect,
		Messages: ls.Messages,
		Metadata: headerList(ls.Headers),
	}
	if ls.Transport != "" && ls.Transport != conn.GRPC {
		p.errorf(line("transport"), "%s.transport: a grpc: method runs over gRPC's own (protocol: grpc, grpc-web or connect)", path)
		return
	}
	for _, f := range ls.Proto {
		o.Protos = append(o.Protos, p.path(f))
	}
	for _, d := range ls.ImportPaths {
		o.ImportPaths = append(o.ImportPaths, p.path(d))
	}
	if ls.Protoset != "" {
		o.Protoset = p.path(ls.Protoset)
	}
	if ls.DataFile != "" {
		o.DataFile = p.path(ls.DataFile)
	}
	l.GRPC = o
}
