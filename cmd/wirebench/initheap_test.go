package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// initBudget bounds the heap every package's init allocates in the
// binary, the server's process included: live heap there is marked on
// every GC cycle and moves the GC's goal, so the server's cost per
// request against a bare handler depends on it (docs/server-cost.md).
// 967 kB on 2026-11-29: protodesc, descriptorpb and protocompile (for
// .proto files compiled at run time) 423 kB of it; 781 kB since
// protocompile finds its C++ and Java feature files registered lazily
// (internal/protofeatures) instead of building them; 686 kB on
// 2026-11-30 since export writes remote write, OTLP and the scrape
// endpoint's formats itself (759 kB with prompb, gogo/protobuf, the OTLP
// protos, client_model and expfmt).
const initBudget = 720_000

// initBounds bound named packages whose init was made cheap, so that it
// stays so: protocompile built two file descriptors (196 kB) unless the
// program registered them first; httpapi made its zstd encoder (8 kB),
// gate its metric table (5 kB), reqlog its secret names (6.7 kB), link
// its presets (2.2 kB), export its histogram bounds (2 kB), kv/resp its
// command table (4.3 kB).
var initBounds = map[string]int{
	"github.com/bufbuild/protocompile":                  16_000,
	"github.com/wirebench/wirebench/httpapi":            2_000,
	"github.com/wirebench/wirebench/gate":               2_000,
	"github.com/wirebench/wirebench/load/replay/reqlog": 2_000,
	"github.com/wirebench/wirebench/link":               1_000,
	"github.com/wirebench/wirebench/export":             500,
	"github.com/wirebench/wirebench/kv/resp":            500,
}

var initLine = regexp.MustCompile(`^init (\S+) @.* ([0-9]+) bytes, ([0-9]+) allocs$`)

// TestInitHeapBudget: GODEBUG=inittrace=1 prints each package's init
// allocations; their sum stays under initBudget. A 1-MiB global made at
// init (load/replay's filler, made on first use since) went unnoticed
// for a session: a guard on named packages cannot see a new one.
func TestInitHeapBudget(t *testing.T) {
	cmd := exec.Command(testkit.Binary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wirebench version: %v\n%s", err, out)
	}
	type pkg struct {
		name  string
		bytes int
	}
	var pkgs []pkg
	total := 0
	for line := range strings.Lines(string(out)) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		b, _ := strconv.Atoi(m[2])
		pkgs = append(pkgs, pkg{m[1], b})
		total += b
		if bound, ok := initBounds[m[1]]; ok && b > bound {
			t.Errorf("%s's init allocates %d bytes, over its bound of %d", m[1], b, bound)
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("inittrace printed %d package inits: the format changed?\n%s", len(pkgs), out)
	}
	if total > initBudget {
		slices.SortFunc(pkgs, func(a, b pkg) int { return b.bytes - a.bytes })
		var top strings.Builder
		for _, p := range pkgs[:min(8, len(pkgs))] {
			fmt.Fprintf(&top, "\n  %9d  %s", p.bytes, p.name)
		}
		t.Errorf("package inits allocate %d bytes, over the budget of %d; the largest:%s", total, initBudget, top.String())
	}
	t.Logf("package inits: %d bytes over %d packages", total, len(pkgs))
}
