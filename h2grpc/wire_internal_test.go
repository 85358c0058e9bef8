package h2grpc

import (
	"math"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// The header encodings, pinned value by value at their edges (the
// end-to-end tests reach them only with ordinary values).

func TestParseTimeout(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1H", time.Hour, true},
		{"2M", 2 * time.Minute, true},
		{"3S", 3 * time.Second, true},
		{"4m", 4 * time.Millisecond, true},
		{"5u", 5 * time.Microsecond, true},
		{"6n", 6, true},
		{"0S", 0, true},
		{"99999999n", 99999999, true}, // 8 digits: the longest
		{"99999999H", math.MaxInt64, true},
		// 2562047 hours is the largest whole number of hours a Duration holds.
		{"2562047H", 2562047 * time.Hour, true},
		{"2562048H", math.MaxInt64, true},
		{"153722867M", 0, false}, // 9 digits
		{"S", 0, false},
		{"", 0, false},
		{"1", 0, false},
		{"1s", 0, false},
		{"+1S", 0, false},
		{"-1S", 0, false},
		{"1.5S", 0, false},
	} {
		got, err := parseTimeout(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestEncodeGrpcMessage(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"plain text ~!":    "plain text ~!",
		" ":                " ",
		"~":                "~",
		"\x1f":             "%1F",
		"\x7f":             "%7F",
		"100%":             "100%25",
		"é":                "%C3%A9",
		"a\nb":             "a%0Ab",
		"tab\there, % ok~": "tab%09here, %25 ok~",
	} {
		if got := encodeGrpcMessage(in); got != want {
			t.Errorf("encodeGrpcMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeBin(t *testing.T) {
	for in, want := range map[string]string{
		"YWJj":     "abc", // a multiple of 4 either way
		"YWJjZA==": "abcd",
		"YWJjZA":   "abcd",
		"YWI=":     "ab",
		"YWI":      "ab",
		"":         "",
	} {
		got, err := decodeBin(in)
		if err != nil || string(got) != want {
			t.Errorf("decodeBin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"Y", "YW=", "YWJjZ===", "!!!!"} {
		if _, err := decodeBin(bad); err == nil {
			t.Errorf("decodeBin(%q): no error", bad)
		}
	}
	if got := encodeBin("abcd"); got != "YWJjZA" {
		t.Errorf("encodeBin = %q, want unpadded YWJjZA", got)
	}
}

func TestCodeString(t *testing.T) {
	for c, want := range map[codes.Code]string{
		codes.OK: "0", codes.Canceled: "1", codes.Internal: "13",
		codes.Unauthenticated: "16", 17: "17", 1000: "1000",
	} {
		if got := codeString(c); got != want {
			t.Errorf("codeString(%d) = %q, want %q", c, got, want)
		}
	}
}

func TestSplitPath(t *testing.T) {
	for in, want := range map[string][2]string{
		"/pkg.Svc/Method": {"pkg.Svc", "Method"},
		"/a/b/c":          {"a/b", "c"},
		"/Svc/M":          {"Svc", "M"},
		"pkg.Svc/Method":  {"", ""},
		"/pkg.Svc/":       {"", ""},
		"/pkg.Svc":        {"", ""},
		"/":               {"", ""},
		"":                {"", ""},
		"//Method":        {"", "Method"},
	} {
		s, m := splitPath(in)
		if s != want[0] || m != want[1] {
			t.Errorf("splitPath(%q) = %q, %q; want %q, %q", in, s, m, want[0], want[1])
		}
	}
}

func TestIsReserved(t *testing.T) {
	for _, name := range []string{"content-type", "te", "grpc-timeout", "grpc-status", ":path", ":authority"} {
		if !isReserved(name) {
			t.Errorf("%s: not reserved", name)
		}
	}
	for _, name := range []string{"x-user", "grpc-custom", "authorization", "path"} {
		if isReserved(name) {
			t.Errorf("%s: reserved", name)
		}
	}
}
