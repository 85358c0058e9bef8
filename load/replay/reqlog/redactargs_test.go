package reqlog

import (
	"slices"
	"strings"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	in := []string{"load", "-n", "3", "-H", "Authorization: Bearer abc123", "-H", "Accept: application/json",
		"--header=X-Api-Key: k", "--auth-token", "T0ken", "--password=hunter2", "--api-key", "-", "--key", "c.key",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "--h3-retry-after", "16",
		"https://u:pw@example.com/reset/a1b2c3d4e5f6a7b8c9d0?token=x&page=2", "-d", "5s", "Referer: /reset/a1b2c3d4e5f6a7b8c9d0"}
	want := []string{"load", "-n", "3", "-H", "Authorization: REDACTED", "-H", "Accept: application/json",
		"--header=X-Api-Key: REDACTED", "--auth-token", "REDACTED", "--password=REDACTED", "--api-key", "-", "--key", "c.key",
		"REDACTED", "--h3-retry-after", "16",
		"https://u:REDACTED@example.com/reset/REDACTED?token=REDACTED&page=2", "-d", "5s", "Referer: /reset/REDACTED"}
	got, n := RedactArgs(in)
	if !slices.Equal(got, want) {
		t.Errorf("RedactArgs:\n got %q\nwant %q", got, want)
	}
	if n != 9 {
		t.Errorf("%d redacted, want 9", n)
	}
	if in[4] != "Authorization: Bearer abc123" {
		t.Error("RedactArgs changed its input")
	}
}

func TestRedactOptionsHeaderLines(t *testing.T) {
	in := `{"url":"http://h/x?api_key=K","header":["Authorization: Bearer abc","Accept: */*","note: a password reset"],"method":"GET"}`
	got, n := RedactOptions([]byte(in))
	want := `{"url":"http://h/x?api_key=REDACTED","header":["Authorization: REDACTED","Accept: */*","note: a password reset"],"method":"GET"}`
	if string(got) != want || n != 2 {
		t.Errorf("RedactOptions: %d\n got %s\nwant %s", n, got, want)
	}
	if got, n := RedactOptions([]byte(`{"a":`)); string(got) != `{"a":` || n != 0 {
		t.Errorf("cut JSON: %s, %d", got, n)
	}
}

// FuzzRedactArgs: any command line keeps its length, redacts again to
// itself, and keeps no Authorization value.
func FuzzRedactArgs(f *testing.F) {
	f.Add("-H\x00Authorization: Bearer x\x00http://h/p?token=1")
	f.Add("--password=x\x00--auth-token\x00y")
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		got, _ := RedactArgs(args)
		if len(got) != len(args) {
			t.Fatalf("%d args, want %d", len(got), len(args))
		}
		again, _ := RedactArgs(got)
		if !slices.Equal(again, got) {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
		for _, a := range got {
			if name, v, ok := strings.Cut(a, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "authorization") &&
				strings.TrimSpace(v) != "" && strings.TrimSpace(v) != Redacted && !strings.HasPrefix(v, "//") {
				t.Fatalf("kept %q", a)
			}
		}
	})
}
