package measure

import "testing"

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {11.25, "11.2 B"}, {1023, "1023 B"}, {1024, "1.000 KiB"},
		{1234, "1.205 KiB"}, {44.1 * (1 << 20), "44.10 MiB"}, {2.5 * (1 << 30), "2.500 GiB"},
		{3 * (1 << 40), "3.000 TiB"}, {-2048, "-2.000 KiB"},
	}
	for _, tt := range tests {
		if got := FormatBytes(tt.v); got != tt.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
