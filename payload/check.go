package payload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrOptions marks options the lab cannot run with; each message names
// the option as wirebench payload's flag does.
var ErrOptions = errors.New("invalid payload options")

// Check refuses an input kind, a choice of HAR bodies or a compression
// the lab does not know.
func (o Options) Check() error {
	switch o.Input {
	case InputAuto, InputJSON, InputHAR, InputWirebench:
	default:
		return fmt.Errorf("%w: input %q: want json, har or wirebench", ErrOptions, o.Input)
	}
	switch o.Bodies {
	case "", BodiesRequests, BodiesResponses, BodiesBoth:
	default:
		return fmt.Errorf("%w: bodies %q: want requests, responses or both", ErrOptions, o.Bodies)
	}
	for _, c := range o.Compressions {
		if !slices.Contains(Compressions, c) {
			return fmt.Errorf("%w: compress %q: want gzip, zstd, br or none", ErrOptions, c)
		}
	}
	return nil
}

// ParseCompressions reads a comma-separated list of compressions; "none"
// or "" is none (not nil, which Options reads as all of them).
func ParseCompressions(s string) []string {
	out := []string{}
	if s == "none" || s == "" {
		return out
	}
	for _, c := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// LoadSchema is the samples' protobuf message: from a .proto file
// compiled at run time (importPaths: where its imports are) or from a
// FileDescriptorSet, message naming it (default: the file's only one);
// nil without either.
func LoadSchema(ctx context.Context, proto, protoset string, importPaths []string, message string) (*Schema, error) {
	switch {
	case proto != "" && protoset != "":
		return nil, fmt.Errorf("%w: give one schema: a .proto file (--proto) or a FileDescriptorSet (--protoset), not both", ErrOptions)
	case proto != "":
		return CompileProto(ctx, proto, importPaths, message)
	case protoset != "":
		return LoadProtoset(protoset, message)
	case message != "" || len(importPaths) > 0:
		return nil, fmt.Errorf("%w: a message (--message) or import paths (--proto-path) need a schema: --proto or --protoset", ErrOptions)
	}
	return nil, nil
}
