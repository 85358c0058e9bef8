// Package grpcany calls any gRPC method of any server: the method's
// descriptors are resolved at run time — .proto files compiled in process
// (protocompile: no protoc needed), a FileDescriptorSet (--protoset), or
// the server's reflection (v1, else v1alpha) — and its requests are
// dynamic messages built from a JSON template (CallData: ghz's names) or
// a file of JSON lines. Unary calls run on the lean gRPC client
// (load/h2) or grpc-go, streams (server, client, bidi) on grpc-go; all
// connect through load/conn.
//
// New makes a load.Scenario whose one operation is the method; every
// response is checked — status OK, then the Expect checks on its fields —
// and a failure is counted by its reason. Bad input (an unknown service
// or method, a .proto that does not compile, a template that does not fit
// the request message, reflection refused) is an ErrOptions error from
// New, before any load.
package grpcany
