package codec

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/vmihailenco/msgpack/v5"
)

// benchBodies are the records of examples/data/shipments.json, each
// encoded alone (compact JSON, msgpack) as a client sends it.
func benchBodies(tb testing.TB) (js, mp [][]byte) {
	raw, err := os.ReadFile("../examples/data/shipments.json")
	if err != nil {
		tb.Fatal(err)
	}
	var recs []any
	if err := json.Unmarshal(raw, &recs); err != nil {
		tb.Fatal(err)
	}
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			tb.Fatal(err)
		}
		m, err := msgpack.Marshal(r)
		if err != nil {
			tb.Fatal(err)
		}
		js, mp = append(js, j), append(mp, m)
	}
	return js, mp
}

// BenchmarkScanShare reports what the limit scan costs against the
// library's own decode of the same bodies (into an any, as the payload lab
// times it): scan/decode is the median over units of ~20 µs run in turn by
// the scan and the library, so another process's noise moves both alike.
//
//	go test -run '^$' -bench ScanShare ./codec
func BenchmarkScanShare(b *testing.B) {
	js, mp := benchBodies(b)
	for _, tc := range []struct {
		name   string
		bodies [][]byte
		scan   func([]byte, Limits) error
		decode func([]byte, any) error
	}{
		{"json/encoding-json", js, scanJSON, json.Unmarshal},
		{"json/goccy", js, scanJSON, gojson.Unmarshal},
		{"msgpack", mp, scanMsgpack, msgpack.Unmarshal},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var bytes int
			for _, x := range tc.bodies {
				bytes += len(x)
			}
			unit := func(f func(x []byte)) time.Duration {
				start := time.Now()
				for _, x := range tc.bodies {
					f(x)
				}
				return time.Since(start)
			}
			scan := func(x []byte) {
				if err := tc.scan(x, DefaultLimits); err != nil {
					b.Fatal(err)
				}
			}
			decode := func(x []byte) {
				var v any
				if err := tc.decode(x, &v); err != nil {
					b.Fatal(err)
				}
			}
			var ratios []float64
			var scanned time.Duration
			for b.Loop() {
				s, d := unit(scan), unit(decode)
				scanned += s
				ratios = append(ratios, float64(s)/float64(d))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "scan/decode")
			b.ReportMetric(float64(bytes)*float64(b.N)/scanned.Seconds()/1e6, "scanMB/s")
		})
	}
}

// BenchmarkScan times the scanners alone on the shipments' bodies.
func BenchmarkScan(b *testing.B) {
	js, mp := benchBodies(b)
	for _, tc := range []struct {
		name   string
		bodies [][]byte
		scan   func([]byte, Limits) error
	}{{"json", js, scanJSON}, {"msgpack", mp, scanMsgpack}} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			for _, x := range tc.bodies {
				n += len(x)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				for _, x := range tc.bodies {
					if err := tc.scan(x, DefaultLimits); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
