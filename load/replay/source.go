// Package replay sends recorded traffic again at its recorded times:
// readers for HAR 1.2, combined access logs, JSON-lines logs and
// wirebench's own request log (reqlog), an open-loop schedule of their
// times × 1/speed (load.Pacer), and a scenario whose VUs send each
// recorded request through the HTTP/1.1 and h2 clients, with results
// per endpoint (route templates, ids folded). docs/replay.md.
package replay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// ErrReplay is a recording that cannot be replayed at all (no file, an
// unknown format, a bad field map); bad lines are counted, not errors.
var ErrReplay = errors.New("replay")

// Source is a stream of recorded requests, in file order.
// Not safe for concurrent use.
type Source interface {
	// Next returns the next well-formed request, or io.EOF.
	Next() (reqlog.Request, error)
	// Malformed counts what Next skipped.
	Malformed() *reqlog.Malformed
}

// Formats a recording may be in.
const (
	FormatAuto   = ""
	FormatHAR    = "har"
	FormatAccess = "access" // nginx/Apache combined
	// FormatCombined names FormatAccess by its log format's name.
	FormatCombined = "combined"
	FormatJSONL    = "jsonl"
	FormatReqlog   = "wirebench"
)

// Open opens a recording: format "" guesses from the name and the first
// line (.har or a '{' document with "log": HAR; {"wirebench": our log;
// another '{' line: JSON lines, read with fields; else an access log).
// The caller closes the returned closer.
func Open(path, format string, fields FieldMap) (Source, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrReplay, err)
	}
	src, err := NewSource(f, path, format, fields)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return src, f, nil
}

// NewSource reads a recording from r; name helps guess the format.
func NewSource(r io.Reader, name, format string, fields FieldMap) (Source, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if format == FormatAuto {
		format = sniff(br, name)
	}
	switch format {
	case FormatHAR:
		return newHARReader(br), nil
	case FormatReqlog:
		return reqlogSource{reqlog.NewReader(br)}, nil
	case FormatJSONL:
		return newJSONLReader(br, fields), nil
	case FormatAccess, FormatCombined:
		return newAccessReader(br), nil
	case FormatGRPC: // grpcrec.go
		return newGRPCReader(br), nil
	}
	return nil, fmt.Errorf("%w: unknown format %q (want har, combined, jsonl, wirebench or grpc)", ErrReplay, format)
}

func sniff(br *bufio.Reader, name string) string {
	if strings.HasSuffix(strings.ToLower(name), ".har") {
		return FormatHAR
	}
	head, _ := br.Peek(4096)
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	line, _, _ := bytes.Cut(head, []byte("\n"))
	switch {
	case bytes.HasPrefix(line, []byte(`{"wirebench"`)):
		return FormatReqlog
	case bytes.HasPrefix(head, []byte("{")) && !bytes.HasSuffix(bytes.TrimSpace(line), []byte("}")):
		return FormatHAR // a pretty-printed document, not one object per line
	case bytes.HasPrefix(head, []byte("{")) && bytes.Contains(line, []byte(`"log"`)) && bytes.Contains(line, []byte(`"entries"`)):
		return FormatHAR
	case bytes.HasPrefix(line, []byte(`{"grpc"`)) || bytes.HasPrefix(line, []byte("{")) && bytes.Contains(line, []byte(`"grpc":`)) && !bytes.Contains(line, []byte(`"method"`)):
		return FormatGRPC
	case bytes.HasPrefix(head, []byte("{")):
		return FormatJSONL
	}
	return FormatAccess
}

type reqlogSource struct{ r *reqlog.Reader }

func (s reqlogSource) Next() (reqlog.Request, error) { return s.r.Next() }
func (s reqlogSource) Malformed() *reqlog.Malformed  { return &s.r.Bad }
