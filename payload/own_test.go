package payload

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// labFormats are every format the lab measures on testdata/orders.jsonl,
// protobuf from its schema, with the samples as each format's Go values
// and encodings (the samples a format cannot carry left out).
func labFormats(t testing.TB) (fs []*format, ins map[string][]any, encs map[string][][]byte) {
	t.Helper()
	s, err := CompileProto(context.Background(), "testdata/order.proto", nil, "shop.v1.Order")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{}
	o.fill()
	res := &reservoir{n: 100, maxCost: o.MaxKept}
	if _, err := readInputs([]string{"testdata/orders.jsonl"}, &o, res, newShapeAcc()); err != nil {
		t.Fatal(err)
	}
	fs = append(genericFormats(), s.format())
	ins, encs = map[string][]any{}, map[string][][]byte{}
	for _, f := range fs {
		for _, smp := range res.kept {
			in, err := f.toGo(smp.Val)
			if err != nil {
				continue
			}
			enc, err := f.codec.Marshal(in)
			if err != nil {
				continue
			}
			ins[f.name] = append(ins[f.name], in)
			encs[f.name] = append(encs[f.name], enc)
		}
		if len(ins[f.name]) == 0 {
			t.Fatalf("%s: no sample of testdata/orders.jsonl encoded", f.name)
		}
	}
	return fs, ins, encs
}

// The library's own calls, timed beside the codec, do the same work on
// the same values: the same bytes (the same length where the order is
// random: cbor and msgpack do not sort a map's keys, nor dynamicpb its
// fields), and decoding the codec's
// bytes gives back the same reading. Otherwise the ratio would compare
// two different jobs.
func TestOwnCallsDoTheSameWork(t *testing.T) {
	fs, ins, encs := labFormats(t)
	for _, f := range fs {
		if f.own == nil {
			t.Errorf("%s: no library's own calls to compare with", f.name)
			continue
		}
		for i, in := range ins[f.name] {
			ours := encs[f.name][i]
			theirs, err := f.own.marshal(in)
			if err != nil {
				t.Fatalf("%s: the library's own marshal: %v", f.name, err)
			}
			sorted := f.name != "cbor" && f.name != "msgpack" && f.name != "protobuf"
			if sorted && !bytes.Equal(ours, theirs) || len(ours) != len(theirs) {
				t.Errorf("%s sample %d: the library's own bytes differ from the codec's:\n%q\n%q", f.name, i, theirs, ours)
			}
			a, err := f.decode(ours)
			if err != nil {
				t.Fatal(err)
			}
			b, err := f.own.decode(ours)
			if err != nil {
				t.Fatalf("%s: the library's own decode: %v", f.name, err)
			}
			ra, err := f.readBack(a)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := f.readBack(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ra, rb) {
				t.Errorf("%s sample %d: the library's own decode reads %v, the codec's %v", f.name, i, rb, ra)
			}
		}
	}
}

// A run puts the library's own cost beside the codec's on the raw rows
// only (a compressed row's CPU adds the compression, which no codec
// library's benchmark has), protobuf included.
func TestRunReportsOwnCost(t *testing.T) {
	s, err := CompileProto(context.Background(), "testdata/order.proto", nil, "shop.v1.Order")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := Run(context.Background(), []string{"testdata/orders.jsonl"}, Options{Time: 5 * time.Millisecond, Compressions: []string{"gzip"}, Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	raw := 0
	for _, r := range lab.Rows {
		switch {
		case r.Compression != "" && r.Own != nil:
			t.Errorf("%s %s: the library's own cost on a compressed row", r.Format, r.Compression)
		case r.Compression == "" && r.Format == compactName:
			raw++
			if r.Own != nil {
				t.Errorf("%s: own %+v, want none (the writer is wirebench's)", r.Format, r.Own)
			}
		case r.Compression == "":
			raw++
			if r.Own == nil || r.Own.Encode.Ns <= 0 || r.Own.Decode.Ns <= 0 || r.Own.EncodeRatio <= 0 || r.Own.DecodeRatio <= 0 || r.Own.Calls == "" {
				t.Errorf("%s: own %+v, want the library's own times and the ratios", r.Format, r.Own)
			}
		}
	}
	if raw != 7 {
		t.Errorf("%d raw rows, want 7 (6 formats and protobuf)", raw)
	}
}

// timePair's ratio is the ratio of the two passes' costs: a pass doing
// twice the work of the other is about 2×. A timing test: wall-clock.
func TestTimePairRatio(t *testing.T) {
	testkit.NeedTiming(t)
	spin := func(n int) func() error {
		return func() error {
			x := 0
			for i := range n {
				x += i * i
			}
			sink = x
			return nil
		}
	}
	a, b, r, err := timePair(50*time.Millisecond, 5, 1, func(int) error { return spin(200_000)() }, func(int) error { return spin(100_000)() })
	if err != nil {
		t.Fatal(err)
	}
	if r < 1.6 || r > 2.5 || a.Ns <= b.Ns {
		t.Errorf("ratio %.2f (a %.0f ns, b %.0f ns), want about 2", r, a.Ns, b.Ns)
	}
}

var sink int

// BenchmarkCodecs times every format's codec as the lab runs it
// ("wirebench") and the library's own calls ("own") on the same values
// of testdata/orders.jsonl, one message an op, the way the libraries'
// own benchmarks loop: compare them with benchstat,
//
//	go test -run '^$' -bench Codecs -count 10 ./payload | tee b.txt
//
// The lab's own table (wirebench payload) does the same in alternating
// batches; docs/payload.md says where the two differ and why.
func BenchmarkCodecs(b *testing.B) {
	fs, ins, encs := labFormats(b)
	for _, f := range fs {
		for _, side := range []struct {
			name    string
			marshal func(any) ([]byte, error)
			decode  func([]byte) (any, error)
		}{{"wirebench", f.codec.Marshal, f.decode}, {"own", f.own.marshal, f.own.decode}} {
			in, enc := ins[f.name], encs[f.name]
			b.Run(f.name+"/encode/"+side.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := side.marshal(in[i]); err != nil {
						b.Fatal(err)
					}
					if i++; i == len(in) {
						i = 0
					}
				}
			})
			b.Run(f.name+"/decode/"+side.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := side.decode(enc[i]); err != nil {
						b.Fatal(err)
					}
					if i++; i == len(enc) {
						i = 0
					}
				}
			})
		}
	}
}
