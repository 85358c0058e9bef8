package h3

import (
	"testing"
)

// The bytes firstTime calls new add up to the union of the ranges seen,
// whatever their order and overlap (retransmissions, duplicates), and a
// stream seen whole up to its FIN counts nothing more.
func FuzzCover(f *testing.F) {
	f.Add([]byte{0, 10, 5, 10, 20, 3, 0, 30})
	f.Add([]byte{10, 5, 0, 5, 0, 15})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l cover
		var union [256 + 256]bool
		var got, want int64
		k := coverKey{stream: 4}
		for i := 0; i+1 < len(b); i += 2 {
			off, n := int64(b[i]), int64(b[i+1])
			got += l.firstTime(k, off, n, false)
			for j := off; j < off+n; j++ {
				if !union[j] {
					union[j], want = true, want+1
				}
			}
		}
		if got != want {
			t.Fatalf("new bytes %d, union %d", got, want)
		}
		// The FIN at the union's end fills its holes, counted new, and
		// completes the stream: after that nothing is new.
		end := int64(len(union))
		for end > 0 && !union[end-1] {
			end--
		}
		var holes int64
		for j := range end {
			if !union[j] {
				holes++
			}
		}
		if got := l.firstTime(k, 0, end, true); got != holes {
			t.Fatalf("the whole stream added %d, holes %d", got, holes)
		}
		if l.firstTime(k, 0, end+1, false) != 0 || len(l.streams) != 0 {
			t.Fatal("a stream seen whole counted again")
		}
	})
}

func TestCoverDoneStreams(t *testing.T) {
	var l cover
	for s := int64(0); s < 400; s += 4 {
		k := coverKey{stream: s}
		// Whole in one frame, and in two (the second with the FIN).
		if l.firstTime(k, 0, 100, true) != 100 || l.firstTime(k, 50, 100, false) != 0 {
			t.Fatalf("stream %d", s)
		}
		k = coverKey{in: true, stream: s + 1}
		if l.firstTime(k, 0, 60, false) != 60 || l.firstTime(k, 40, 60, true) != 40 || l.firstTime(k, 0, 100, true) != 0 {
			t.Fatalf("stream %d in", s+1)
		}
	}
	if len(l.streams) != 0 {
		t.Fatalf("%d streams kept in full after their FIN", len(l.streams))
	}
	if got := len(l.done[0][0].w) + len(l.done[1][1].w); got != 4 {
		t.Fatalf("done bitsets of %d words for 100 streams each way, want 2 each", got)
	}
}
