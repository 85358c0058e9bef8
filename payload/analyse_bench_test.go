package payload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	gojson "github.com/goccy/go-json"
)

// shipmentLines writes n JSON lines like the 1 GB file docs/payload.md
// measures: a shipment with a timestamp, a route object and 1–5 parcels,
// seeded.
func shipmentLines(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	airports := []string{"DUB", "AMS", "ATH", "VIE", "LIS", "OSL", "HEL", "MAD", "CDG", "FRA"}
	statuses := []string{"created", "in_transit", "delivered", "returned"}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"id":%d,"created":"2026-%02d-%02dT%02d:%02d:%02dZ","route":{"from":%q,"to":%q,"legs":%d},"status":%q,"parcels":[`,
			1000+i, 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60),
			airports[rng.IntN(len(airports))], airports[rng.IntN(len(airports))], 1+rng.IntN(3), statuses[rng.IntN(len(statuses))])
		for j := range 1 + rng.IntN(5) {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"sku":"P-%04d","kg":%d.%02d,"fragile":%t}`, rng.IntN(10000), rng.IntN(30), rng.IntN(100), rng.IntN(2) == 0)
		}
		fmt.Fprintf(&b, "],\"insured\":%t}\n", rng.IntN(2) == 0)
	}
	return b.Bytes()
}

// BenchmarkAnalyse reads a file of JSON lines as the lab does (split,
// check, count the shape of every line, keep a sample) beside
// the libraries' own decode of the same lines into an `any`: the
// analysis against the codecs' own time on the same bytes,
//
//	go test -run '^$' -bench Analyse -count 6 ./payload | tee a.txt
//
// (MB/s is the file's bytes; compare the ns/op of the sub-benchmarks).
// It keeps 100 of 40,000 lines, so that about 2% of the lines are parsed
// into a tree for the reservoir (0.3% of the 1 GB file's 3 million lines
// for --sample 1000): the share of a large file. WIREBENCH_ANALYSE_FILE
// names a file of JSON lines to read instead, with the lab's default
// sample (docs/payload.md's 1 GB: -benchtime 1x).
func BenchmarkAnalyse(b *testing.B) {
	path, samples := os.Getenv("WIREBENCH_ANALYSE_FILE"), DefaultSamples
	var size int64
	if path == "" {
		data := shipmentLines(40000, 1)
		path, samples, size = filepath.Join(b.TempDir(), "shipments.jsonl"), 100, int64(len(data))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	} else {
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
	}
	lines := func(b *testing.B, decode func([]byte, any) error) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(bufio.NewReaderSize(f, 64<<10))
		sc.Buffer(nil, DefaultMaxSample)
		for sc.Scan() {
			var v any
			if err := decode(sc.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("wirebench", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			o := Options{Samples: samples}
			o.fill()
			res := &reservoir{n: o.Samples, maxCost: o.MaxKept, rng: rand.New(rand.NewPCG(1, 2))}
			if _, err := readInputs([]string{path}, &o, res, newShapeAcc()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goccy", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			lines(b, gojson.Unmarshal)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			lines(b, json.Unmarshal)
		}
	})
}
