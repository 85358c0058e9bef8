// Package pb holds the generated protobuf and gRPC code for package
// wirebench.v1, and the conversions between its messages and package api.
//
// Regenerate with `go generate ./pb` (needs protoc, protoc-gen-go and
// protoc-gen-go-grpc; see .ci/run for the versions CI installs).
package pb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative wirebench.proto
