// Package bulk reads and writes bulk bodies of airports one record at a
// time, in every format POST /airports accepts, so that neither the server
// nor the client ever holds a whole body:
//
//	dec, err := bulk.NewDecoder(bulk.FormatJSON, r)
//	for {
//		var a bulk.Airport
//		if err := dec.Next(&a); err == io.EOF {
//			break
//		} else if err != nil {
//			return err // a *RecordError naming the record's index and field
//		}
//	}
//
// Formats: a JSON array of objects, NDJSON, a TOON table
// (airports[N]{iata_code,name,city,country}:), length-delimited protobuf
// (each message prefixed by its varint length, as protodelim and Java's
// writeDelimitedTo write it) and CSV with a header line. Each decoder holds
// one record and a fixed read buffer; Limits bound each field.
package bulk

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Airport is one record: the airports table's four columns.
type Airport struct {
	IATACode string `json:"iata_code" toon:"iata_code"`
	Name     string `json:"name" toon:"name"`
	City     string `json:"city" toon:"city"`
	Country  string `json:"country" toon:"country"`
}

// Field names, in column order.
var Fields = []string{"iata_code", "name", "city", "country"}

// Sentinel errors; a decoder's errors wrap one of them inside a *RecordError.
var (
	ErrSyntax  = errors.New("malformed body")
	ErrMissing = errors.New("missing field")
	ErrInvalid = errors.New("invalid field")
	ErrFormat  = errors.New("unknown bulk format")
	// ErrRead marks a failure to read the body itself (wrapped with the
	// reader's error), as opposed to a bad record.
	ErrRead = errors.New("reading the body")
)

// Limits on one record. They bound a decoder's memory: a record is never
// longer than MaxKey + 3*MaxText bytes of text plus framing.
const (
	MaxKey  = 64   // bytes of iata_code
	MaxText = 1024 // bytes of name, city, country each
	// MaxRecord bounds one record's encoding (a protobuf message, a CSV
	// line, an NDJSON line with whitespace): beyond, the record is refused
	// without being read whole.
	MaxRecord = 16 << 10
)

// RecordError is a bad record: its index (0-based, in body order), the
// field at fault ("" when the record's framing is broken) and why.
type RecordError struct {
	Index int
	Field string
	Err   error
}

func (e *RecordError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("record %d: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("record %d: field %q: %v", e.Index, e.Field, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Decoder reads records one at a time. Next fills a and returns io.EOF
// after the last record; any other error is a *RecordError, after which
// the Decoder is done. A Decoder is not safe for concurrent use.
type Decoder interface {
	Next(a *Airport) error
}

// Encoder writes records one at a time; n is the record count announced
// to formats that declare it (TOON). Close writes the trailer (JSON's ']')
// and does not close the underlying writer.
type Encoder interface {
	Write(a *Airport) error
	Close() error
}

// Formats.
const (
	FormatJSON     = "json"
	FormatNDJSON   = "ndjson"
	FormatTOON     = "toon"
	FormatProtobuf = "protobuf"
	FormatCSV      = "csv"
)

// Formats lists every format, in the order studies show them.
func Formats() []string {
	return []string{FormatJSON, FormatNDJSON, FormatTOON, FormatProtobuf, FormatCSV}
}

// MediaType is the Content-Type a client sends for format f.
func MediaType(f string) string {
	switch f {
	case FormatJSON:
		return "application/json"
	case FormatNDJSON:
		return "application/x-ndjson"
	case FormatTOON:
		return "text/toon"
	case FormatProtobuf:
		return "application/x-protobuf-delimited"
	case FormatCSV:
		return "text/csv"
	}
	return ""
}

// FormatOf maps a Content-Type (parameters ignored) to its format.
func FormatOf(contentType string) (string, error) {
	mt, _, _ := strings.Cut(contentType, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "application/json":
		return FormatJSON, nil
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/jsonlines":
		return FormatNDJSON, nil
	case "text/toon", "application/toon":
		return FormatTOON, nil
	case "application/x-protobuf-delimited", "application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf":
		return FormatProtobuf, nil
	case "text/csv", "application/csv":
		return FormatCSV, nil
	}
	return "", fmt.Errorf("%w: Content-Type %q", ErrFormat, contentType)
}

// NewDecoder returns a decoder of format f reading r. It reads r through
// its own fixed-size buffer. When reading r fails (a body limit, a
// timeout, a closed connection), Next returns that error, wrapped in a
// *RecordError with the index of the record being read.
func NewDecoder(f string, r io.Reader) (Decoder, error) {
	er := &errReader{r: r}
	d, err := newDecoder(f, er)
	if err != nil {
		return nil, err
	}
	return &guard{d: d, r: er}, nil
}

func newDecoder(f string, r io.Reader) (Decoder, error) {
	switch f {
	case FormatJSON:
		return newJSONDecoder(r, true), nil
	case FormatNDJSON:
		return newJSONDecoder(r, false), nil
	case FormatTOON:
		return newTOONDecoder(r), nil
	case FormatProtobuf:
		return newPBDecoder(r), nil
	case FormatCSV:
		return newCSVDecoder(r), nil
	}
	return nil, fmt.Errorf("%w: %q", ErrFormat, f)
}

// NewEncoder returns an encoder of format f writing n records to w.
func NewEncoder(f string, w io.Writer, n int) (Encoder, error) {
	switch f {
	case FormatJSON:
		return newJSONEncoder(w, true), nil
	case FormatNDJSON:
		return newJSONEncoder(w, false), nil
	case FormatTOON:
		return newTOONEncoder(w, n)
	case FormatProtobuf:
		return newPBEncoder(w), nil
	case FormatCSV:
		return newCSVEncoder(w)
	}
	return nil, fmt.Errorf("%w: %q", ErrFormat, f)
}

// Validate checks a decoded record: every field present, non-empty, valid
// UTF-8 and within its limit. It names the first bad field.
func (a *Airport) Validate(index int) error { return a.validate(index, true) }

// validate is Validate for decoders that have checked UTF-8 as they read
// (checkUTF8 false), which spares a second pass over every byte.
func (a *Airport) validate(index int, checkUTF8 bool) error {
	for i, v := range [4]string{a.IATACode, a.Name, a.City, a.Country} {
		max := MaxText
		if i == 0 {
			max = MaxKey
		}
		var err error
		switch {
		case v == "":
			err = fmt.Errorf("%w: empty", ErrMissing)
		case len(v) > max:
			err = fmt.Errorf("%w: %d bytes, over the limit of %d", ErrInvalid, len(v), max)
		case checkUTF8 && !utf8.ValidString(v):
			err = fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
		}
		if err != nil {
			return &RecordError{Index: index, Field: Fields[i], Err: err}
		}
	}
	return nil
}

// fieldOf is the index in Fields of the field named name, or -1 (a
// switch on string(name) does not allocate).
func fieldOf(name []byte) int {
	switch string(name) {
	case "iata_code":
		return 0
	case "name":
		return 1
	case "city":
		return 2
	case "country":
		return 3
	}
	return -1
}

// errReader remembers the first error other than io.EOF from r, so that
// a decoder's syntax error caused by it can be reported as what it was.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

type guard struct {
	d Decoder
	r *errReader
}

func (g *guard) Next(a *Airport) error {
	err := g.d.Next(a)
	if err == nil || err == io.EOF || g.r.err == nil {
		return err
	}
	idx := 0
	var re *RecordError
	if errors.As(err, &re) {
		idx = re.Index
	}
	return &RecordError{Index: idx, Err: fmt.Errorf("%w: %w", ErrRead, g.r.err)}
}
