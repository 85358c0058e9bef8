package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// PayloadLabSchema names the result of `wirebench payload --out`: every
// format's size, codec cost and round trip on the user's own samples.
const PayloadLabSchema = "wirebench.payload/v1"

// ErrPayloadLab reports a payload result that cannot be read.
var ErrPayloadLab = errors.New("payload: bad result")

// PayloadOptions are the flags a payload run was made with.
type PayloadOptions struct {
	Input     string `json:"input"`
	Whole     bool   `json:"whole"`
	Sample    int    `json:"sample"`
	Seed      uint64 `json:"seed"`
	Time      string `json:"time"`
	Compress  string `json:"compress"`
	Proto     string `json:"proto"`
	Protoset  string `json:"protoset"`
	Message   string `json:"message"`
	MaxFile   int64  `json:"max_file"`
	MaxSample int    `json:"max_sample"`
	MaxKept   int64  `json:"max_kept"`
	MaxDepth  int    `json:"max_depth"`
	// Bodies are the HAR bodies taken (requests, responses, both).
	Bodies string `json:"bodies,omitempty"`
}

// PayloadLab is one run of the payload lab. Plain data, written as the
// JSON result file.
type PayloadLab struct {
	Schema  string          `json:"schema"`
	Options *PayloadOptions `json:"options,omitempty"`
	Env     measure.Env     `json:"env"`
	Start   time.Time       `json:"start"`
	End     time.Time       `json:"end"`
	Input   PayloadInput    `json:"input"`
	Shape   *PayloadShape   `json:"shape,omitempty"`
	// Rows are one per format and compression, raw ("") first.
	Rows []PayloadRow `json:"rows"`
	// RoundTrips are one per format (compression changes nothing).
	RoundTrips []PayloadRoundTrip `json:"round_trips"`
	// LeftOut are formats not measured, each with its reason ("protobuf:
	// no schema; give --proto FILE --message NAME or --protoset FILE").
	LeftOut  []PayloadLeftOut `json:"left_out,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
}

// PayloadInput says what was read and what of it was measured.
type PayloadInput struct {
	Files []string `json:"files"`
	Kind  string   `json:"kind"` // json, har, wirebench, mixed
	// Read samples were read; Kept were measured: all, or when Read is
	// over the --sample bound a uniform random subset (Sampled).
	Read    int   `json:"samples_read"`
	Kept    int   `json:"samples_kept"`
	Sampled bool  `json:"sampled,omitempty"`
	Bytes   int64 `json:"bytes_read"`
	// Skipped recorded bodies that are not JSON; Malformed records the
	// recording's reader skipped.
	Skipped   int `json:"skipped_bodies,omitempty"`
	Malformed int `json:"malformed_records,omitempty"`
}

// PayloadRow is one format under one compression.
type PayloadRow struct {
	Format  string `json:"format"`  // json, json-fast, toon, cbor, msgpack, protobuf
	Library string `json:"library"` // encoding/json, github.com/goccy/go-json, ...
	// Compression is "" (none), gzip, zstd or br; each message is
	// compressed on its own, as an HTTP body is.
	Compression string `json:"compression"`
	// Samples is how many samples the format encoded (the others it could
	// not: see its round trip's encode errors).
	Samples int `json:"samples"`
	// Bytes per message over the samples.
	Bytes PayloadBytes `json:"bytes"`
	// Encode is the codec's encode plus the compression; Decode the
	// decompression plus the codec's decode; per message.
	Encode PayloadCPU `json:"encode"`
	Decode PayloadCPU `json:"decode"`
	// Own is the library's own cost on the same samples and Go values,
	// raw rows only: what its own benchmarks time.
	Own *PayloadOwn `json:"own,omitempty"`
}

// PayloadOwn is a format library's own cost on the same data: its Marshal
// and Unmarshal called directly in a tight loop into the same Go value,
// as the library's own benchmarks do, timed in batches that alternate
// with the batches of the row's Encode and Decode (so a busy machine
// slows both alike).
type PayloadOwn struct {
	// Calls are the calls timed ("json.Marshal(v); json.Unmarshal(b, &v), v any").
	Calls  string     `json:"calls"`
	Encode PayloadCPU `json:"encode"`
	Decode PayloadCPU `json:"decode"`
	// EncodeRatio and DecodeRatio are wirebench's time over the library's,
	// the median over the pairs of batches (1.00: we add nothing).
	EncodeRatio float64 `json:"encode_ratio"`
	DecodeRatio float64 `json:"decode_ratio"`
	// Adds says what wirebench's codec does beyond the library's call,
	// or "" when it makes the same call.
	Adds string `json:"adds,omitempty"`
}

// PayloadBytes is a size distribution over the samples.
type PayloadBytes struct {
	Median float64 `json:"median"`
	Min    int64   `json:"min"`
	Max    int64   `json:"max"`
	Total  int64   `json:"total"`
}

// PayloadCPU is the time one message takes, from timed loops over every
// kept sample: the median batch and the fastest and slowest, in ns per
// message, and heap allocations per message.
type PayloadCPU struct {
	Ns      float64 `json:"ns"`
	NsMin   float64 `json:"ns_min"`
	NsMax   float64 `json:"ns_max"`
	Allocs  float64 `json:"allocs"`
	Bytes   float64 `json:"alloc_bytes"`
	Batches int     `json:"batches"`
	// Loops is the passes over the samples in each batch.
	Loops int `json:"loops"`
}

// Round-trip verdicts.
const (
	// RoundTripLossless: every sample came back as it was, keys in order.
	RoundTripLossless = "lossless"
	// RoundTripSpelling: the same values came back spelled differently
	// (a float's digits, key order, a 64-bit int as a string).
	RoundTripSpelling = "values kept"
	// RoundTripLossy: some value, type or field changed.
	RoundTripLossy = "lossy"
)

// PayloadRoundTrip is what decoding a format's encoding gave back,
// compared with the input.
type PayloadRoundTrip struct {
	Format  string          `json:"format"`
	Verdict string          `json:"verdict"`
	Samples int             `json:"samples"`
	Changed int             `json:"samples_changed"`
	Changes []PayloadChange `json:"changes,omitempty"`
	// How is how the format was decoded (the Go value it decodes into),
	// which decides much of what changes.
	How string `json:"how,omitempty"`
}

// PayloadChange is one kind of change a round trip made, counted, with
// its first occurrence.
type PayloadChange struct {
	Kind string `json:"kind"` // e.g. "int past 2^53", "float spelling"
	// Spelling is true when the value is the same, only written otherwise.
	Spelling bool   `json:"spelling,omitempty"`
	Count    int    `json:"count"`
	Sample   int    `json:"sample"` // index of the first sample it happened in
	Path     string `json:"path"`   // e.g. $.users[3].id
	Before   string `json:"before"`
	After    string `json:"after"`
}

// PayloadLeftOut is a format not measured, and why.
type PayloadLeftOut struct {
	Format string `json:"format"`
	Reason string `json:"reason"`
}

// PayloadShape describes the samples: what explains why a format wins.
type PayloadShape struct {
	Samples int `json:"samples"`
	// Depth of nesting (a scalar is 0, {"a":1} is 1): median and max.
	DepthMedian float64 `json:"depth_median"`
	DepthMax    int     `json:"depth_max"`
	// Values counts the leaves and containers, by kind.
	Objects int64 `json:"objects"`
	Arrays  int64 `json:"arrays"`
	Numbers int64 `json:"numbers"`
	// Integers is the numbers without fraction or exponent; Big those past
	// 2^53 (exact in int64, not in a float64).
	Integers int64 `json:"integers"`
	BigInts  int64 `json:"big_ints"`
	Strings  int64 `json:"strings"`
	Bools    int64 `json:"bools"`
	Nulls    int64 `json:"nulls"`
	// Binary counts strings that look like base64 data (16+ characters),
	// Timestamps strings that parse as RFC 3339.
	Binary     int64 `json:"binary_strings"`
	Timestamps int64 `json:"timestamps"`
	// Shares of the input's bytes: in keys (names and their quotes), in
	// string values, in numbers, in the rest (punctuation, literals).
	KeyBytes    int64 `json:"key_bytes"`
	StringBytes int64 `json:"string_bytes"`
	NumberBytes int64 `json:"number_bytes"`
	OtherBytes  int64 `json:"other_bytes"`
	// Keys is the members written, DistinctKeys the names among them:
	// Keys / DistinctKeys is how often a name repeats.
	Keys         int64 `json:"keys"`
	DistinctKeys int   `json:"distinct_keys"`
	// UniformArrays are arrays of two or more objects whose members are
	// all primitives with the same keys in the same order (what TOON
	// writes as a table); ObjectArrays every array of 2+ objects, and
	// UniformItems the elements of the uniform ones.
	ObjectArrays  int64 `json:"object_arrays"`
	UniformArrays int64 `json:"uniform_arrays"`
	UniformItems  int64 `json:"uniform_items"`
	ArrayItems    int64 `json:"array_items"`
}

// WritePayloadLab writes p as indented JSON.
func WritePayloadLab(w io.Writer, p *PayloadLab) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// ReadPayloadLab reads a payload result file.
func ReadPayloadLab(rd io.Reader) (*PayloadLab, error) {
	var p PayloadLab
	dec := json.NewDecoder(io.LimitReader(rd, MaxFileSize))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayloadLab, err)
	}
	if p.Schema != PayloadLabSchema {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrPayloadLab, p.Schema, PayloadLabSchema)
	}
	return &p, nil
}

// FromPayloadLab makes a payload lab run a study for the report: no
// cells, no trials, the lab itself.
func FromPayloadLab(p *PayloadLab) *Study {
	return &Study{
		Schema: StudySchema, Study: "payload", Title: "wirebench payload: " + strings.Join(p.Input.Files, ", "),
		Question:  "Which wire format suits these payloads: how many bytes, how much CPU, and what does a round trip change?",
		SingleRun: true, Env: p.Env, Start: p.Start, End: p.End,
		PayloadLab: p, Warnings: p.Warnings,
	}
}
