package resp

import (
	"strconv"
	"testing"
)

// FuzzAtoi: the fast path of atoi answers as strconv.ParseInt does (which
// it replaced) for every input, with or without the trailing \r.
func FuzzAtoi(f *testing.F) {
	for _, s := range []string{"0", "3", "128", "-1", "+5", "007", "", "\r", "12\r", "1x", "999999999999999999",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999", " 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := atoi(b)
		s := string(b)
		if len(s) > 0 && s[len(s)-1] == '\r' {
			s = s[:len(s)-1]
		}
		want, err := strconv.ParseInt(s, 10, 64)
		wantOK := err == nil && len(s) > 0 && len(s) <= 20
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("atoi(%q) = %d, %v; ParseInt: %d, %v", b, got, ok, want, wantOK)
		}
	})
}

// TestLookupMatchesTable: the GET/SET shortcut finds what the table does,
// for every command and for names one letter away from get and set.
func TestLookupMatchesTable(t *testing.T) {
	n := 0
	for name, c := range commands() {
		if got := lookup([]byte(name)); got != c {
			t.Errorf("lookup(%q) = %v, want %v", name, got, c)
		}
		n++
	}
	if n < 30 || lookup([]byte("get")) == nil || lookup([]byte("set")) == nil {
		t.Fatalf("%d commands checked; get/set found: %v %v", n, lookup([]byte("get")), lookup([]byte("set")))
	}
	for _, name := range []string{"bet", "let", "gat", "sex", "ge", "gets", ""} {
		if got := lookup([]byte(name)); got != commands()[name] {
			t.Errorf("lookup(%q) = %v, want %v", name, got, commands()[name])
		}
	}
}
