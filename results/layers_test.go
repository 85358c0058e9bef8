package results

import (
	"strings"
	"testing"
)

// Every field is in Total and in Add (positional: a new field breaks the
// literal until it is added here too).
func TestLayersTotalAndAdd(t *testing.T) {
	a := Layers{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	if a.Total() != 66 || a.Add(a).Total() != 132 || a.Add(a) != (Layers{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}) {
		t.Fatalf("Total %d, Add %+v", a.Total(), a.Add(a))
	}
}

// Merge sums the segments' splits (read back from their files) when
// every segment has one, and keeps none when one lacks it.
func TestMergeLayers(t *testing.T) {
	a, b := emptyResult(Segment{1, 2}), emptyResult(Segment{2, 2})
	a.Layers = &Split{In: Layers{Message: 10, QUIC: 3, H3Frames: 2, QPACK: 5}, Out: Layers{QUIC: 1}}
	b.Layers = &Split{In: Layers{Message: 1, QUIC: 1, H3Frames: 1, QPACK: 1}, Out: Layers{QPACK: 4}}
	m, err := Merge(throughFile(t, a), throughFile(t, b))
	if err != nil {
		t.Fatal(err)
	}
	want := Split{In: Layers{Message: 11, QUIC: 4, H3Frames: 3, QPACK: 6}, Out: Layers{QUIC: 1, QPACK: 4}}
	if m.Layers == nil || *m.Layers != want {
		t.Fatalf("merged %+v, want %+v", m.Layers, want)
	}
	b.Layers = nil
	if m, err := Merge(a, b); err != nil || m.Layers != nil {
		t.Fatalf("a segment without a split: merged %+v (%v)", m.Layers, err)
	}
}

// The summary prints an HTTP/3 run's bytes per request by layer, and
// nothing for a run without a split or with a stream section (which
// prints its own).
func TestWriteLayerSummary(t *testing.T) {
	r := emptyResult(Segment{})
	r.Requests = 2
	var buf strings.Builder
	if err := WriteLayerSummary(&buf, r); err != nil || buf.Len() != 0 {
		t.Fatalf("no split: %q (%v)", buf.String(), err)
	}
	r.Layers = &Split{In: Layers{Message: 210, QUIC: 48, H3Frames: 10, QPACK: 104}, Out: Layers{QUIC: 38, H3Frames: 4, QPACK: 70}}
	if err := WriteLayerSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bytes per request by layer", "QUIC", "24.0", "19.0", "HTTP/3 headers (QPACK)", "52.0", "35.0", "total", "186.0", "56.0"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "HTTP/2") || strings.Contains(buf.String(), "unparsed") {
		t.Errorf("summary shows layers the run has not:\n%s", buf.String())
	}
	buf.Reset()
	r.Stream = &Stream{}
	if err := WriteLayerSummary(&buf, r); err != nil || buf.Len() != 0 {
		t.Fatalf("a stream run: %q (%v)", buf.String(), err)
	}
}
