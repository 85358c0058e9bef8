package h2grpc

// gRPC's header encodings (PROTOCOL-HTTP2.md in grpc/grpc).

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// parseTimeout reads grpc-timeout: at most 8 digits and a unit (H, M, S,
// m, u, n). A value too large for a Duration is the largest Duration.
func parseTimeout(v string) (time.Duration, error) {
	if len(v) < 2 || len(v) > 9 {
		return 0, errors.New("want 1 to 8 digits and a unit")
	}
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 64)
	if err != nil || v[0] == '+' {
		return 0, errors.New("not a number")
	}
	var unit time.Duration
	switch v[len(v)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, errors.New("unknown unit")
	}
	if n > uint64(math.MaxInt64/int64(unit)) {
		return math.MaxInt64, nil
	}
	return time.Duration(n) * unit, nil
}

// encodeGrpcMessage percent-encodes what is not printable ASCII, and '%'.
func encodeGrpcMessage(msg string) string {
	plain := true
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c < ' ' || c > '~' || c == '%' {
			plain = false
			break
		}
	}
	if plain {
		return msg
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c < ' ' || c > '~' || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// statusDetails is grpc-status-details-bin for s, "" without details.
func statusDetails(s *status.Status) string {
	if s.Code() == codes.OK {
		return "" // no details, and no copy of the status to find out
	}
	p := s.Proto()
	if len(p.GetDetails()) == 0 {
		return ""
	}
	b, err := proto.Marshal(p)
	if err != nil {
		return ""
	}
	return encodeBin(string(b))
}

func encodeBin(v string) string { return base64.RawStdEncoding.EncodeToString([]byte(v)) }

// decodeBin accepts padded and unpadded base64, as gRPC peers send both.
func decodeBin(v string) ([]byte, error) {
	if len(v)%4 == 0 {
		return base64.StdEncoding.DecodeString(v)
	}
	return base64.RawStdEncoding.DecodeString(v)
}

// statusOK ends every call that succeeds (a Status is immutable).
var statusOK = status.New(codes.OK, "")

// isReserved: headers gRPC itself uses, never metadata.
func isReserved(name string) bool {
	switch name {
	case "content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding",
		"grpc-message", "grpc-status", "grpc-status-details-bin", "grpc-message-type", "grpc-tags-bin", "grpc-trace-bin":
		return true
	}
	return strings.HasPrefix(name, ":")
}

var codeStrings = func() []string {
	s := make([]string, codes.Unauthenticated+1)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func codeString(c codes.Code) string {
	if int(c) < len(codeStrings) {
		return codeStrings[c]
	}
	return strconv.FormatUint(uint64(c), 10)
}

func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, h := range f.RegularFields() {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

// splitPath splits "/pkg.Service/Method"; "" for a malformed path.
func splitPath(path string) (service, method string) {
	if !strings.HasPrefix(path, "/") {
		return "", ""
	}
	i := strings.LastIndexByte(path, '/')
	if i <= 0 || i == len(path)-1 {
		return "", ""
	}
	return path[1:i], path[i+1:]
}
