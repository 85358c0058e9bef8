package main

import (
	"strings"
	"testing"
)

// TestArrivalsFlags: --arrivals takes uniform or poisson, applies to an
// open loop, and its seed to Poisson; capacity's help says it defaults
// to Poisson.
func TestArrivalsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "-r", "10", "--arrivals", "bursty", "http://127.0.0.1:1/"}, `--arrivals "bursty": want uniform or poisson`},
		{[]string{"load", "-c", "2", "--arrivals", "poisson", "http://127.0.0.1:1/"}, "--arrivals applies to an open loop"},
		{[]string{"load", "-r", "10", "--arrivals-seed", "3", "http://127.0.0.1:1/"}, "--arrivals-seed applies to --arrivals poisson"},
		{[]string{"capacity", "--slo", "p99<5ms", "--arrivals", "bursty", "http://127.0.0.1:1/"}, `--arrivals "bursty": want uniform or poisson`},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("wirebench %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	_, out, _ := runCLI(t, "capacity", "-h")
	if !strings.Contains(out, "(default \"poisson\")") {
		t.Errorf("capacity -h does not state the Poisson default:\n%s", out)
	}
}
