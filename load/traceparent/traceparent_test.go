package traceparent

import (
	"errors"
	"strings"
	"testing"
)

func TestPutParseRoundTrip(t *testing.T) {
	g := NewSeededGen([32]byte{1})
	seen := map[ID]bool{}
	for i := 0; i < 1000; i++ {
		id, sp := g.Next()
		if seen[id] {
			t.Fatalf("trace ID %s repeated after %d", id, i)
		}
		seen[id] = true
		v := string(Append(nil, id, sp))
		if len(v) != Len {
			t.Fatalf("len %d", len(v))
		}
		gid, gsp, fl, err := Parse(v)
		if err != nil || gid != id || gsp != sp || fl != 1 {
			t.Fatalf("Parse(%q) = %v %v %d %v", v, gid, gsp, fl, err)
		}
	}
	if len(seen) != 1000 {
		t.Fatalf("loop ran %d times", len(seen))
	}
}

func TestParse(t *testing.T) {
	ok := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		in   string
		good bool
	}{
		{ok, true},
		{" " + ok + "\t", true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false},
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"", false},
	}
	for _, tt := range tests {
		_, _, _, err := Parse(tt.in)
		if (err == nil) != tt.good {
			t.Errorf("Parse(%q) err = %v, want good=%v", tt.in, err, tt.good)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) err %v is not ErrMalformed", tt.in, err)
		}
	}
	id, _, _, _ := Parse(ok)
	if id.String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("ID %s", id)
	}
}

func TestNextAllocatesNothing(t *testing.T) {
	g := NewGen()
	buf := []byte(Placeholder)
	if n := testing.AllocsPerRun(100, func() { id, sp := g.Next(); Put(buf, id, sp) }); n != 0 {
		t.Fatalf("Next+Put allocates %v times", n)
	}
	if !strings.HasPrefix(string(buf), "00-") {
		t.Fatal(string(buf))
	}
}

func FuzzParse(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-xyz")
	f.Fuzz(func(t *testing.T, s string) {
		id, sp, fl, err := Parse(s)
		if err != nil {
			return
		}
		// A value we accept re-serializes to its first Len bytes (version
		// aside) and parses to the same IDs.
		v := string(Append(nil, id, sp))
		id2, sp2, _, err := Parse(v)
		if err != nil || id2 != id || sp2 != sp {
			t.Fatalf("Parse(%q) ok but its re-serialization %q gives %v %v %v", s, v, id2, sp2, err)
		}
		_ = fl
	})
}
