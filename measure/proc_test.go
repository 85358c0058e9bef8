package measure

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in  string
		user, sys time.Duration
		wantErr   bool
	}{
		{"plain", "42 (wirebench) S 1 42 42 0 -1 4194304 100 0 0 0 250 37 0 0 20 0 8 0", 2500 * time.Millisecond, 370 * time.Millisecond, false},
		{"spaces and parens in comm", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 30 * time.Millisecond, 40 * time.Millisecond, false},
		{"truncated", "7 (x) R 1 2", 0, 0, true},
		{"no comm", "garbage", 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, s, err := parseStat([]byte(tc.in))
			if (err != nil) != tc.wantErr || u != tc.user || s != tc.sys {
				t.Errorf("parseStat = %v, %v, %v; want %v, %v, err %v", u, s, err, tc.user, tc.sys, tc.wantErr)
			}
		})
	}
}

func TestSampleProc(t *testing.T) {
	t.Parallel()
	s, err := SampleSelf()
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() || s.RSS <= 0 || s.PeakRSS < s.RSS {
		t.Errorf("sample %+v: want our pid, RSS > 0, peak >= RSS", s)
	}
	if _, err := SampleProc(-1); !errors.Is(err, ErrProc) {
		t.Errorf("SampleProc(-1) = %v, want ErrProc", err)
	}
}

// ParseStat reads the parent too (the browser's process tree walks it),
// with a command name holding spaces and parentheses.
func TestParseStatParent(t *testing.T) {
	st, err := ParseStat([]byte("4242 (a b) c)) S 17 4242 4242 0 -1 4194560 1 0 0 0 250 130 0 0 20 0 1 0 100 0 0\n"))
	if err != nil || st.PPID != 17 || st.User != 2500*time.Millisecond || st.System != 1300*time.Millisecond {
		t.Fatalf("ParseStat = %+v, %v; want ppid 17, 2.5s user, 1.3s system", st, err)
	}
	if _, err := ParseStat([]byte("4242 (x) S zz 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 1 0 0\n")); err == nil {
		t.Error("a bad ppid parsed")
	}
}
