package results

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// segmentOf is segment i of n of one test, as Run and the CLI record it.
func segmentOf(i, n int) *Load {
	r := emptyResult(Segment{I: i, N: n})
	test := Options{Rate: 400, Duration: 10 * time.Second, Concurrency: 40, StartAt: time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)}
	r.Test = &test
	r.Options.Rate = 100
	r.Config = Config{Scenario: "raw", Raw: NewClientOptions(map[string]string{"url": "http://127.0.0.1:8080/"}),
		Thresholds: []string{"p99<50ms"}, Args: []string{"--segment", fmt.Sprintf("%d/%d", i, n)}}
	return r
}

func parts(rs ...*Load) []Part {
	ps := make([]Part, len(rs))
	for i, r := range rs {
		ps[i] = Part{Name: fmt.Sprintf("s%d.json", i), Result: r}
	}
	return ps
}

func TestCheckSegments(t *testing.T) {
	t.Parallel()
	four := func() []*Load { return []*Load{segmentOf(1, 4), segmentOf(2, 4), segmentOf(3, 4), segmentOf(4, 4)} }
	if err := CheckSegments(parts(four()...)); err != nil {
		t.Fatalf("the four segments of one test: %v", err)
	}
	rs := four()
	if err := CheckSegments(parts(rs[3], rs[1], rs[0], rs[2])); err != nil {
		t.Errorf("in another order: %v", err)
	}
	// A merge of two segments and the two others are one test too.
	half, err := Merge(rs[0], rs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSegments(parts(half, rs[2], rs[3])); err != nil {
		t.Errorf("a partial merge and the rest: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func([]*Load) []*Load
		want string // in the error
	}{
		{"missing", func(rs []*Load) []*Load { return rs[:3] }, "segments 4/4 missing (have 3 of 4)"},
		{"duplicate", func(rs []*Load) []*Load { return append(rs, segmentOf(2, 4)) }, "segment 2/4 is in both s1.json and s4.json"},
		{"other rate", func(rs []*Load) []*Load { rs[2].Test.Rate = 500; return rs }, "s0.json and s2.json were run with different options: rate 400 vs 500"},
		{"other start", func(rs []*Load) []*Load { rs[1].Test.StartAt = rs[1].Test.StartAt.Add(time.Second); return rs }, "start_at"},
		{"other scenario", func(rs []*Load) []*Load { rs[3].Scenario = "crud"; return rs }, `s3.json is scenario "crud"`},
		{"other target", func(rs []*Load) []*Load {
			rs[1].Config.Raw = NewClientOptions(map[string]string{"url": "http://127.0.0.1:9090/"})
			return rs
		}, "different configurations: raw"},
		{"other thresholds", func(rs []*Load) []*Load { rs[1].Config.Thresholds = []string{"p99<1s"}; return rs }, "thresholds"},
		{"other split", func(rs []*Load) []*Load { return append(rs[:3], segmentOf(4, 5)) }, "s3.json holds segment 4/5, but s0.json is of a 4-way split"},
		{"a whole run", func(rs []*Load) []*Load { rs[0].Test = nil; return rs }, "s0.json is not a segment of a test"},
		{"nothing", func([]*Load) []*Load { return nil }, "nothing to merge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSegments(parts(tc.edit(four())...))
			if !errors.Is(err, ErrNotOneTest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrNotOneTest with %q", err, tc.want)
			}
		})
	}
	// args differ between segments by nature (--segment, --out): not a mismatch.
	rs = four()
	rs[2].Config.Args = []string{"--out", "elsewhere.json"}
	if err := CheckSegments(parts(rs...)); err != nil {
		t.Errorf("different args: %v", err)
	}
}

// TestMergeKeepsTest: the merge of a whole test carries the test's
// options exactly; an incomplete merge keeps the shares added up.
func TestMergeKeepsTest(t *testing.T) {
	t.Parallel()
	rs := []*Load{segmentOf(1, 3), segmentOf(2, 3), segmentOf(3, 3)}
	for i, r := range rs {
		r.CPU.Allocs, r.CPU.AllocBytes = int64(10*(i+1)), int64(1000*(i+1))
	}
	m, err := Merge(rs...)
	if err != nil {
		t.Fatal(err)
	}
	if m.CPU.Allocs != 60 || m.CPU.AllocBytes != 6000 {
		t.Errorf("client allocations %d, %d bytes: want the segments' sums 60, 6000", m.CPU.Allocs, m.CPU.AllocBytes)
	}
	if m.Options.Rate != 400 || m.Test == nil || m.Options.StartAt != rs[0].Test.StartAt {
		t.Errorf("complete merge: options %+v", m.Options)
	}
	m, err = Merge(rs[:2]...)
	if err != nil {
		t.Fatal(err)
	}
	if m.Options.Rate != 200 || m.Test == nil {
		t.Errorf("merge of 2 of 3: rate %g, want the two shares (200)", m.Options.Rate)
	}
}

// TestReadResults: JSON Lines, indented files and both concatenated read
// alike; a bad value is named by its place.
func TestReadResults(t *testing.T) {
	t.Parallel()
	var stream bytes.Buffer
	for i := 1; i <= 3; i++ {
		if err := segmentOf(i, 3).WriteJSONLine(&stream); err != nil {
			t.Fatal(err)
		}
	}
	if n := bytes.Count(stream.Bytes(), []byte("\n")); n != 3 {
		t.Fatalf("3 results in %d lines", n)
	}
	segmentOf(1, 1).WriteJSON(&stream) // an indented one after them
	rs, err := ReadLoads(bytes.NewReader(stream.Bytes()))
	if err != nil || len(rs) != 4 || rs[2].Options.Segment != (Segment{3, 3}) || rs[0].Test.Rate != 400 {
		t.Fatalf("read %d results: %v", len(rs), err)
	}
	if rs, err := ReadLoads(strings.NewReader("")); err != nil || len(rs) != 0 {
		t.Errorf("empty stream: %v, %d", err, len(rs))
	}
	bad := stream.String() + `{"schema":"other"}` + "\n"
	if _, err := ReadLoads(strings.NewReader(bad)); !errors.Is(err, ErrLoad) || !strings.Contains(err.Error(), "result 5") {
		t.Errorf("bad fifth value: %v", err)
	}
	if _, err := ReadLoads(strings.NewReader(stream.String()[:stream.Len()/2])); !errors.Is(err, ErrLoad) {
		t.Errorf("truncated stream: %v", err)
	}
}

func FuzzReadResults(f *testing.F) {
	var b bytes.Buffer
	segmentOf(1, 2).WriteJSONLine(&b)
	f.Add(b.String())
	f.Add(`{"schema":"wirebench.load/v1"}` + "\n" + `[1]`)
	f.Add("null\n{}")
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ReadLoads(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Latency == nil || r.Service == nil || r.Lag == nil || r.Schema != LoadSchema {
				t.Fatalf("accepted a result without its histograms or schema: %+v", r)
			}
			_ = CheckSegments([]Part{{Name: "a", Result: r}, {Name: "b", Result: r}}) // must not panic
		}
	})
}
