// Package pb holds the generated protobuf and gRPC code for package
// wirebench.v1, and the conversions between its messages and package api.
// Subpackage pbconnect holds the connect-go handlers and clients (gRPC,
// gRPC-Web and the Connect protocol over net/http).
//
// Regenerate with `go generate ./pb`. It needs protoc and these plugins, at
// the versions .ci/run installs:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//	go install connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1
package pb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative --connect-go_out=. --connect-go_opt=paths=source_relative wirebench.proto
