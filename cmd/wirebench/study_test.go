package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestStudyCommandUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"study", "list"}, 0, "grpc-vs-rest"},
		{[]string{"study"}, 2, "want one study name"},
		{[]string{"study", "nope"}, 2, `no study "nope"`},
		{[]string{"study", "formats", "extra"}, 2, "want one study name"},
		{[]string{"study", "--client-cpus", "x", "formats"}, 2, "client-cpus"},
		{[]string{"study", "-h"}, 0, "-serve-args"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, tc.args)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("wirebench %v: exit %d, want %d; output lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, out.String(), errb.String())
		}
	}
}

func TestReorderKeepsFlagValues(t *testing.T) {
	got := strings.Join(reorder([]string{"formats", "--quick", "--trials", "3", "--out=x", "--no-pin"}), " ")
	if got != "--quick --trials 3 --out=x --no-pin formats" {
		t.Fatalf("reorder = %q", got)
	}
}
