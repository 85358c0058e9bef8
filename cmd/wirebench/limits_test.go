package main

import (
	"strings"
	"testing"
)

// TestLoadLimits: every number of load has a range; huge, negative and
// zero values are one-line usage errors (exit 2) naming the flag, before
// anything is allocated (-c 9223372036854775807 panicked in makeslice).
func TestLoadLimits(t *testing.T) {
	t.Parallel()
	const url = "http://127.0.0.1:1/"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "9223372036854775807"}, "-c 9223372036854775807: want 1..10000"},
		{[]string{"-c", "100000000"}, "-c 100000000: want 1..10000"},
		{[]string{"-c", "10001"}, "-c 10001: want 1..10000"},
		{[]string{"-c", "0"}, "-c 0: want 1..10000"},
		{[]string{"-c", "-1"}, "-c -1: want 1..10000"},
		{[]string{"-n", "-1"}, "-n -1: want 0..1000000000000"},
		{[]string{"-n", "9223372036854775807"}, "-n 9223372036854775807: want 0.."},
		{[]string{"-r", "-1"}, "-r -1: want 0..1e+07"},
		{[]string{"-r", "1e300"}, "-r 1e+300: want 0..1e+07"},
		{[]string{"-r", "NaN"}, "-r NaN: want"},
		{[]string{"-r", "Inf"}, "-r +Inf: want"},
		{[]string{"-d", "200000h"}, "-d 200000h0m0s: want 0s..168h0m0s"},
		{[]string{"-t", "0"}, "-t 0s: want 1ms..1h0m0s"},
		{[]string{"-t", "2h"}, "-t 2h0m0s: want 1ms..1h0m0s"},
		{[]string{"--graceful-stop", "2h"}, "--graceful-stop 2h0m0s: want 0s..1h0m0s"},
		{[]string{"--conns", "0"}, "--conns 0: want 1..10000"},
		{[]string{"--conns", "100000000"}, "--conns 100000000: want 1..10000"},
		{[]string{"--messages", "0"}, "--messages 0: want 1..1000000"},
		{[]string{"--messages", "9223372036854775807"}, "--messages 9223372036854775807: want"},
		{[]string{"--batch", "-5"}, "--batch -5: want 1..10000"},
		{[]string{"--barrier-lead", "0"}, "--barrier-lead 0s: want"},
		{[]string{"--barrier-timeout", "100000h"}, "--barrier-timeout 100000h0m0s: want"},
		{[]string{"--stages", "1s:100000000"}, "--stages: stage 1 target 1e+08: want 0..10000 VUs"},
		{[]string{"--open", "--stages", "1s:1e300"}, "--stages: stage 1 target 1e+300: want 0..1e+07 requests/s"},
		{[]string{"--stages", "100h:1,100h:1"}, "--stages: 200h0m0s in all, want at most 168h0m0s"},
		{[]string{"--scenario", "kv-get", "-P", "100000000"}, "-P 100000000: want 1..4096"},
		{[]string{"--scenario", "kv-get", "--value-size", "-1"}, "--value-size -1: want 1..16777216"},
		{[]string{"--segment", "0/9223372036854775807"}, "segment"},
	} {
		code, out, errs := runLoadCLI(t, append(append([]string{"load", "-q"}, tc.args...), url)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("load %v: exit %d, want 2 and one line with %q; stdout %q stderr %q", tc.args, code, tc.want, out, errs)
		}
	}
}

func TestOtherCommandLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"study", "formats", "--trials", "-1"}, "--trials -1: want 0..100"},
		{[]string{"study", "formats", "--trials", "1000000"}, "--trials 1000000: want 0..100"},
		{[]string{"study", "formats", "--duration", "200h"}, "--duration 200h0m0s: want 0s..1h0m0s"},
		{[]string{"study", "formats", "--warmup", "-1s"}, "--warmup -1s: want 0s..1h0m0s"},
		{[]string{"study", "bulk-upsert", "--records", "9223372036854775807"}, "--records: want 1.."},
		{[]string{"merge", "--wait", "1000h", "x.json"}, "--wait 1000h0m0s: want 0s..24h0m0s"},
		{[]string{"toon", "encode", "--indent", "1000000000"}, "--indent 1000000000: want 1..64"},
		{[]string{"toon", "encode", "--indent", "0"}, "--indent 0: want 1..64"},
		{[]string{"gen", "airports", "-n", "-1"}, "-n: want 0.."},
		{[]string{"serve", "--seed-users", "9223372036854775807"}, "--seed-users 9223372036854775807: want 0..1000000"},
		{[]string{"serve", "--seed-todos", "-1"}, "--seed-todos -1: want 0..1000000"},
		{[]string{"serve", "--rate-limit", "NaN"}, "--rate-limit NaN: want 0..1e+09"},
		{[]string{"serve", "--rate-limit", "Inf"}, "--rate-limit +Inf: want 0..1e+09"},
		{[]string{"gen", "airports", "-n", "9223372036854775807"}, "-n: want 0.."},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("wirebench %v: exit %d, want 2 and one line with %q; stderr %q", tc.args, code, tc.want, errs)
		}
	}
}
