package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/toon"
)

// TestTOONEncodeDepth: `toon encode` accepts every depth `toon decode`
// accepts and refuses one more (it refused 500 nested arrays, issue 10).
func TestTOONEncodeDepth(t *testing.T) {
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{500, true}, {toon.DefaultMaxDepth, true}, {toon.DefaultMaxDepth + 1, false}} {
		in := strings.Repeat("[", tc.depth) + strings.Repeat("]", tc.depth)
		var enc, dec, errb bytes.Buffer
		code := run(context.Background(), &cliEnv{stdin: strings.NewReader(in), stdout: &enc, stderr: &errb}, []string{"toon", "encode"})
		if (code == 0) != tc.ok {
			t.Fatalf("encode %d levels: exit %d, %s", tc.depth, code, errb.String())
		}
		if !tc.ok {
			if !strings.Contains(errb.String(), "nesting too deep") {
				t.Errorf("encode %d levels: %s", tc.depth, errb.String())
			}
			continue
		}
		if code := run(context.Background(), &cliEnv{stdin: &enc, stdout: &dec, stderr: &errb}, []string{"toon", "decode"}); code != 0 {
			t.Fatalf("decode %d levels: exit %d, %s", tc.depth, code, errb.String())
		}
	}
}
