package typo

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"http", "http", 0}, {"htp", "http", 1}, {"htpt", "http", 1}, {"", "abc", 3},
		{"kitten", "sitting", 3}, {"tirals", "trials", 1}, {"concurency", "concurrency", 1},
		{"héllo", "hello", 1}, // runes, not bytes
		{strings.Repeat("a", 65), "a", 1 << 20},
	} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
