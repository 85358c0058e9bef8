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
		var l LayerCounts
		var union [256 + 256]bool
		var got, want int64
		k := coverKey{conn: 1, stream: 4}
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
		if l.firstTime(k, 0, end+1, false) != 0 || len(l.cover) != 0 {
			t.Fatal("a stream seen whole counted again")
		}
	})
}

func TestCoverDoneStreams(t *testing.T) {
	var l LayerCounts
	for s := int64(0); s < 400; s += 4 {
		k := coverKey{conn: 1, stream: s}
		if l.firstTime(k, 0, 100, true) != 100 || l.firstTime(k, 50, 100, false) != 0 {
			t.Fatalf("stream %d", s)
		}
	}
	if len(l.cover) != 0 {
		t.Fatalf("%d streams kept in full after their FIN", len(l.cover))
	}
	l.forget(1)
	if len(l.done) != 0 {
		t.Fatal("a closed connection's streams kept")
	}
}
