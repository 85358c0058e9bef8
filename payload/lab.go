package payload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Limits of the input, the defaults of Options (docs/payload.md).
const (
	// DefaultMaxFileSize bounds one input file: a file is streamed, so
	// this bounds the time of a run, not its memory.
	DefaultMaxFileSize = 1 << 30
	// DefaultMaxSample bounds one sample (a document, an array element, a
	// line, a recorded body): what is held in memory at once while reading.
	DefaultMaxSample = 16 << 20
	// DefaultSamples is how many samples are kept and measured; more are
	// sampled uniformly, and the result says so.
	DefaultSamples = 1000
	// DefaultMaxKept bounds the memory of the samples kept to measure
	// (their JSON and their parsed trees, estimated): with large samples
	// fewer than --sample are kept, and the output says how many.
	DefaultMaxKept = 256 << 20
	// DefaultTime is the time of each timed loop (one format's encode, or
	// decode, or one compression of it).
	DefaultTime = 200 * time.Millisecond
	// Batches per timed loop: the median and range are over them.
	Batches = 5
)

// DefaultMaxDepth is the codecs' own depth limit: a deeper sample would
// be refused by the decoders, whatever the lab accepted.
var DefaultMaxDepth = codec.DefaultLimits.MaxDepth

// Options configure a run. The zero value of each field is its default.
type Options struct {
	// Input is the kind of every file: InputAuto guesses from the name and
	// the first bytes.
	Input string
	// Whole reads a top-level JSON array as one sample (a list response)
	// instead of a list of samples.
	Whole bool
	// Bodies are the HAR bodies taken: BodiesRequests ("" too),
	// BodiesResponses or BodiesBoth.
	Bodies      string
	MaxFileSize int64
	MaxSample   int
	MaxDepth    int
	// Samples bounds the samples measured (a uniform random subset of
	// more), Seed picks it.
	Samples int
	MaxKept int64
	Seed    uint64
	// Time is each timed loop's time; negative skips timing (sizes and
	// round trips only).
	Time time.Duration
	// Compressions to measure, from Compressions; nil: all of them.
	Compressions []string
	// Schema is the protobuf message the samples are, if any.
	Schema *Schema
	// Progress, if set, is told each step (for a terminal line).
	Progress func(step string)
	// ReadProgress, if set, is told how far each file's reading is, every
	// quarter of a second and at its end.
	ReadProgress func(ReadProgress)
}

func (o *Options) fill() {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxSample <= 0 {
		o.MaxSample = DefaultMaxSample
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.Samples <= 0 {
		o.Samples = DefaultSamples
	}
	if o.MaxKept <= 0 {
		o.MaxKept = DefaultMaxKept
	}
	if o.Time == 0 {
		o.Time = DefaultTime
	}
	if o.Compressions == nil {
		o.Compressions = Compressions
	}
}

// Run reads the samples in paths and measures every format on them.
// Bad input is an error wrapping ErrInput, before anything is measured.
func Run(ctx context.Context, paths []string, o Options) (*results.PayloadLab, error) {
	o.fill()
	comps, err := newCompressors(o.Compressions)
	if err != nil {
		return nil, err
	}
	lab := &results.PayloadLab{Schema: results.PayloadLabSchema, Start: time.Now(), Env: measure.Environment(ctx)}
	res := &reservoir{n: o.Samples, maxCost: o.MaxKept, rng: rand.New(rand.NewPCG(o.Seed, 0x7061796c6f6164))}
	shape := newShapeAcc()
	st, err := readInputs(paths, &o, res, shape)
	if err != nil {
		return nil, err
	}
	lab.Input = results.PayloadInput{Files: st.Files, Kind: st.Kind, Read: st.Read, Kept: st.Kept,
		Sampled: st.Read > st.Kept, Bytes: st.Bytes, Skipped: st.Skipped, Malformed: st.Malformed}
	lab.Shape = shape.result()
	samples := res.kept
	slices.SortFunc(samples, func(a, b Sample) int { return a.Index - b.Index })

	// The compact JSON row follows the libraries' JSON rows.
	formats := genericFormats()
	formats = slices.Insert(formats, 2, compactFormat())
	if o.Schema != nil {
		formats = append(formats, o.Schema.format())
	} else {
		lab.LeftOut = append(lab.LeftOut, results.PayloadLeftOut{Format: "protobuf",
			Reason: "no schema: give --proto FILE.proto --message pkg.Msg, or --protoset FILE --message pkg.Msg"})
	}
	for _, f := range formats {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if o.Progress != nil {
			o.Progress(f.name)
		}
		rows, rt, err := measureFormat(f, samples, comps, &o)
		if err != nil {
			return nil, err
		}
		lab.Rows = append(lab.Rows, rows...)
		lab.RoundTrips = append(lab.RoundTrips, rt)
	}
	lab.End = time.Now()
	return lab, nil
}

// measureFormat encodes every sample in f, checks the round trip, sizes
// the encodings raw and compressed and times the codec and compressions.
func measureFormat(f *format, samples []Sample, comps []*compressor, o *Options) ([]results.PayloadRow, results.PayloadRoundTrip, error) {
	rt := results.PayloadRoundTrip{Format: f.name, How: f.how, Samples: len(samples)}
	ch := newChangesFor(f)
	var ins []any
	// decs are the encodings that decode: the decode is timed on them (a
	// format may write what it cannot read back, TOON a duplicate key).
	var encs, decs [][]byte
	for i := range samples {
		s := &samples[i]
		ch.sample, ch.changed = s.Index, false
		in, err := f.toGo(s.Val)
		if errors.Is(err, errSchema) {
			return nil, rt, fmt.Errorf("%w: %s %v", ErrInput, s.where(), err)
		}
		var enc []byte
		if err == nil {
			enc, err = f.codec.Marshal(in)
		}
		if err != nil {
			ch.addText(ChangeEncode, cut(s.where(), 60), cut(err.Error(), 120))
			rt.Changed++
			continue
		}
		out, err := f.decode(enc)
		var backs []Value
		if err == nil {
			backs, err = f.readBack(out)
		}
		if err != nil {
			ch.addText(ChangeDecode, cut(s.where(), 60), cut(err.Error(), 120))
		} else {
			ch.compare(s.Val, closest(s.Val, backs, f.intString))
			decs = append(decs, enc)
		}
		if ch.changed {
			rt.Changed++
		}
		ins = append(ins, in)
		encs = append(encs, enc)
	}
	rt.Changes = ch.list()
	rt.Verdict = results.RoundTripLossless
	for _, c := range rt.Changes {
		if !c.Spelling {
			rt.Verdict = results.RoundTripLossy
			break
		}
		rt.Verdict = results.RoundTripSpelling
	}

	raw := results.PayloadRow{Format: f.name, Library: f.library, Samples: len(encs), Bytes: sizes(encs)}
	if o.Time >= 0 && len(encs) > 0 {
		if err := timeCodec(f, &raw, ins, decs, o.Time); err != nil {
			return nil, rt, err
		}
	}
	rows := []results.PayloadRow{raw}
	for _, c := range comps {
		row, err := compressRow(raw, c, encs, o)
		if err != nil {
			return nil, rt, err
		}
		rows = append(rows, row)
	}
	return rows, rt, nil
}

// timeCodec times f's encode of ins and decode of encs (those that
// decode) into raw and, in alternating batches, the library's own calls
// on the same values.
func timeCodec(f *format, raw *results.PayloadRow, ins []any, encs [][]byte, budget time.Duration) error {
	pass := func(marshal func(any) ([]byte, error)) func() error {
		return func() error {
			for _, in := range ins {
				if _, err := marshal(in); err != nil {
					return err
				}
			}
			return nil
		}
	}
	unpass := func(decode func([]byte) (any, error)) func() error {
		return func() error {
			for _, b := range encs {
				if _, err := decode(b); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var err error
	if f.own == nil {
		if raw.Encode, err = timeLoop(budget, Batches, len(ins), pass(f.codec.Marshal)); err != nil {
			return fmt.Errorf("payload: timing %s encode: %w", f.name, err)
		}
		if len(encs) == 0 {
			return nil
		}
		if raw.Decode, err = timeLoop(budget, Batches, len(encs), unpass(f.decode)); err != nil {
			return fmt.Errorf("payload: timing %s decode: %w", f.name, err)
		}
		return nil
	}
	own := &results.PayloadOwn{Calls: f.own.calls, Adds: f.own.adds}
	enc := func(m func(any) ([]byte, error)) func(int) error {
		return func(i int) error { _, err := m(ins[i]); return err }
	}
	dec := func(d func([]byte) (any, error)) func(int) error {
		return func(i int) error { _, err := d(encs[i]); return err }
	}
	if raw.Encode, own.Encode, own.EncodeRatio, err = timePair(budget, Batches, len(ins), enc(f.codec.Marshal), enc(f.own.marshal)); err != nil {
		return fmt.Errorf("payload: timing %s encode: %w", f.name, err)
	}
	if len(encs) == 0 {
		raw.Own = own
		return nil
	}
	if raw.Decode, own.Decode, own.DecodeRatio, err = timePair(budget, Batches, len(encs), dec(f.decode), dec(f.own.decode)); err != nil {
		return fmt.Errorf("payload: timing %s decode: %w", f.name, err)
	}
	raw.Own = own
	return nil
}

// closest is the reading of a decoded value with the fewest changes.
func closest(want Value, backs []Value, intString bool) Value {
	if len(backs) == 1 {
		return backs[0]
	}
	best, bestN := 0, -1
	for i, b := range backs {
		c := newChanges()
		c.intString = intString
		c.compare(want, b)
		if bestN < 0 || c.total < bestN {
			best, bestN = i, c.total
		}
	}
	return backs[best]
}

// compressRow sizes and times one compression of a format's encodings;
// its CPU is the codec's plus the compression's.
func compressRow(raw results.PayloadRow, c *compressor, encs [][]byte, o *Options) (results.PayloadRow, error) {
	row := raw
	row.Compression = c.name
	row.Own = nil // the library's own cost is the codec's alone: the raw row's
	comp := make([][]byte, len(encs))
	var buf, back bytes.Buffer
	for i, e := range encs {
		buf.Reset()
		if err := c.comp(&buf, e); err != nil {
			return row, fmt.Errorf("payload: %s %s: %w", raw.Format, c.name, err)
		}
		comp[i] = bytes.Clone(buf.Bytes())
		back.Reset()
		if err := c.decomp(&back, comp[i]); err != nil || !bytes.Equal(back.Bytes(), e) {
			return row, fmt.Errorf("payload: %s %s does not give back what it compressed (%v)", raw.Format, c.name, err)
		}
	}
	row.Bytes = sizes(comp)
	if o.Time < 0 || len(encs) == 0 {
		return row, nil
	}
	ct, err := timeLoop(o.Time, Batches, len(encs), func() error {
		for _, e := range encs {
			buf.Reset()
			if err := c.comp(&buf, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return row, err
	}
	dt, err := timeLoop(o.Time, Batches, len(encs), func() error {
		for _, e := range comp {
			buf.Reset()
			if err := c.decomp(&buf, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return row, err
	}
	row.Encode, row.Decode = addCPU(raw.Encode, ct), addCPU(raw.Decode, dt)
	return row, nil
}

// addCPU is the cost of two steps one after the other: the medians and
// the ends of the ranges add (the range stays an honest bound).
func addCPU(a, b results.PayloadCPU) results.PayloadCPU {
	return results.PayloadCPU{Ns: a.Ns + b.Ns, NsMin: a.NsMin + b.NsMin, NsMax: a.NsMax + b.NsMax,
		Allocs: a.Allocs + b.Allocs, Bytes: a.Bytes + b.Bytes, Batches: a.Batches, Loops: min(a.Loops, b.Loops)}
}

func sizes(encs [][]byte) results.PayloadBytes {
	if len(encs) == 0 {
		return results.PayloadBytes{}
	}
	n := make([]float64, len(encs))
	var b results.PayloadBytes
	b.Min = int64(len(encs[0]))
	for i, e := range encs {
		l := int64(len(e))
		n[i] = float64(l)
		b.Total += l
		b.Min, b.Max = min(b.Min, l), max(b.Max, l)
	}
	slices.Sort(n)
	b.Median = median(n)
	return b
}
