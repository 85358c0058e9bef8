package toon

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/internal/testkit"
)

// wideHeader is a table header with n distinct columns (plus a repeat of
// the first when dup) and one row of n cells.
func wideHeader(n int, dup bool) []byte {
	var sb strings.Builder
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
	}
	if dup {
		names = append(names, "f0")
	}
	fmt.Fprintf(&sb, "x[1]{%s}:\n  %s", strings.Join(names, ","), strings.TrimSuffix(strings.Repeat("1,", len(names)), ","))
	return []byte(sb.String())
}

// TestWideHeaderIsLinear: the duplicate-field check compared every name
// with every other, so one 100k-column header (889 KB) cost 20 s of CPU
// (issue 10 item 2). The bound is 50x what a linear check takes here, so a
// noisy 2-core box stays far inside it while the quadratic check
// (~20 s) fails.
func TestWideHeaderIsLinear(t *testing.T) {
	for _, dup := range []bool{false, true} {
		doc := wideHeader(100_000, dup)
		start := time.Now()
		var v any
		err := Unmarshal(doc, &v)
		if dup != errors.Is(err, ErrDuplicateKey) {
			t.Errorf("dup=%v: err = %v", dup, err)
		}
		var u api.User
		_ = Unmarshal(doc, &u)
		if d := time.Since(start); testkit.Timing() && d > 3*time.Second {
			t.Errorf("dup=%v: %d-byte header took %v", dup, len(doc), d)
		}
	}
	if err := Unmarshal([]byte("x[2]{a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,a}:\n  1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8"), new(any)); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("18 fields with a repeat: %v", err)
	}
}

// TestLengthOverflow: an array length past MaxInt is reported as such,
// not as a count mismatch against a saturated 9223372036854775807.
func TestLengthOverflow(t *testing.T) {
	for _, n := range []string{"9223372036854775808", "99999999999999999999999"} {
		for _, lenient := range []bool{false, true} {
			err := UnmarshalOptions{Lenient: lenient}.Unmarshal([]byte("x["+n+"]: 1,2"), new(any))
			if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "overflows") || strings.Contains(err.Error(), "9223372036854775807 ") {
				t.Errorf("length %s lenient=%v: err = %v", n, lenient, err)
			}
		}
	}
	var v any
	if err := Unmarshal([]byte("x[9223372036854775807]: 1"), &v); !errors.Is(err, ErrCount) {
		t.Errorf("MaxInt length: err = %v, want ErrCount", err)
	}
}

// TestEncoderAcceptsWhatDecoderAccepts: a value decoded within the default
// depth encodes with the default options (toon encode refused 500 nested
// arrays, which the reader accepts, as it counted []any elements twice).
func TestEncoderAcceptsWhatDecoderAccepts(t *testing.T) {
	shapes := map[string]func(any) any{
		"arrays":          func(x any) any { return []any{x} },
		"objects":         func(x any) any { return Object{{"a", x}} },
		"objects in list": func(x any) any { return []any{Object{{"a", x}}, 1} },
	}
	for leaf, wrap := range map[string]func(any) any{"empty array": func(x any) any { return []any{} }, "empty object": func(x any) any { return Object{} }} {
		shapes["arrays around an "+leaf] = func(x any) any {
			if x == "x" {
				return wrap(x)
			}
			return []any{x}
		}
	}
	for name, wrap := range shapes {
		// The deepest value the decoder accepts, found by halving.
		lo, hi := 1, 2*DefaultMaxDepth+2
		for lo < hi {
			mid := (lo + hi + 1) / 2
			data, err := MarshalOptions{MaxDepth: 1 << 20}.Marshal(nest(wrap, mid))
			if err != nil {
				t.Fatal(err)
			}
			if Unmarshal(data, new(any)) == nil {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo < DefaultMaxDepth/2 {
			t.Fatalf("%s: decoder accepts only %d levels", name, lo)
		}
		data, _ := MarshalOptions{MaxDepth: 1 << 20}.Marshal(nest(wrap, lo))
		var back any
		if err := Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if _, err := Marshal(back); err != nil {
			t.Errorf("%s: decoder accepts %d levels, encoder refuses them: %v", name, lo, err)
		}
		if _, err := ToJSON(back); err != nil {
			t.Errorf("%s: %d levels: ToJSON: %v", name, lo, err)
		}
		// One level more is refused by both, so whatever encodes reads back.
		if _, err := Marshal(nest(wrap, lo+1)); !errors.Is(err, ErrDepth) {
			t.Errorf("%s: encoder accepts %d levels, decoder only %d (err %v)", name, lo+1, lo, err)
		}
	}
}

func nest(wrap func(any) any, n int) any {
	var v any = "x"
	for range n {
		v = wrap(v)
	}
	return v
}
