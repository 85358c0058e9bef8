package payload

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Reading a file reports its progress: bytes read against its size,
// growing, the samples so far, and once at the end, done, the whole file.
func TestReadProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.jsonl")
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "{\"id\":%d,\"name\":\"user %d\",\"tags\":[\"a\",\"b\"]}\n", i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []ReadProgress
	o := Options{ReadProgress: func(p ReadProgress) { got = append(got, p) }}
	o.fill()
	res := &reservoir{n: 10, maxCost: o.MaxKept, rng: rand.New(rand.NewPCG(1, 2))}
	if _, err := readInputs([]string{path}, &o, res, newShapeAcc()); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no progress reported")
	}
	last := got[len(got)-1]
	if !last.Done || last.Read != int64(b.Len()) || last.Size != int64(b.Len()) || last.Samples != 20000 || last.File != path {
		t.Errorf("last report %+v, want done, %d of %d bytes, 20000 samples", last, b.Len(), b.Len())
	}
	for i := 1; i < len(got); i++ {
		if got[i].Read < got[i-1].Read || got[i].Samples < got[i-1].Samples || got[i-1].Done {
			t.Errorf("report %d %+v after %+v", i, got[i], got[i-1])
		}
	}
}

// The line: a bar, the share, the bytes, the time so far and left at the
// rate so far, the samples.
func TestFormatReadProgress(t *testing.T) {
	p := ReadProgress{File: "big.jsonl", Read: 400 << 20, Size: 1000 << 20, Samples: 812345, Elapsed: 12 * time.Second}
	want := "big.jsonl [========>           ]  40%  400.0 MiB of 1000 MiB  12s  ETA 18s  812,345 samples"
	if got := FormatReadProgress(p); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if left := (ReadProgress{Size: 10}).Left(); left >= 0 {
		t.Errorf("nothing read: time left %v, want unknown", left)
	}
	p.Read, p.Done = p.Size, true
	if got := FormatReadProgress(p); !strings.Contains(got, "100%") || !strings.Contains(got, "ETA done") {
		t.Errorf("done: %q", got)
	}
}
