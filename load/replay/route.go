package replay

import (
	"fmt"
	"strings"
	"sync"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// MaxEndpoints bounds the route templates a replay reports apart; the
// requests of any later template count under "other". Each template is
// an operation with its own latency and service histograms (272 KiB) in
// every shard of the run's stats that sees it (at most 16), so the bound
// is also a memory bound.
const MaxEndpoints = 64

// Other is the name of the endpoint past MaxEndpoints.
const Other = "other"

// Template folds the ids out of a request target's path: a segment that
// is all digits, a UUID (8-4-4-4-12 hex), or hex of at least 8
// characters with a digit in it becomes {id}. The query is dropped.
// "/users/42?x=1" → "/users/{id}"; "/todos/3f2a…-…" → "/todos/{id}".
// An absolute URL keeps only its path.
func Template(target string) string {
	_, p, _ := reqlog.SplitAbsolute(target)
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	changed := false
	for i, s := range segs {
		if isID(s) {
			segs[i], changed = "{id}", true
		}
	}
	if !changed {
		return p
	}
	return strings.Join(segs, "/")
}

func isID(s string) bool {
	if s == "" {
		return false
	}
	digits, hex := true, true
	hasDigit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		isDig := c >= '0' && c <= '9'
		hasDigit = hasDigit || isDig
		digits = digits && isDig
		hex = hex && (isDig || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
	}
	switch {
	case digits:
		return true
	case hex && len(s) >= 8 && hasDigit:
		return true
	}
	return isUUID(s)
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// routes assigns each "METHOD template" an operation index, the first
// MaxEndpoints in order of first sight, then Other. Safe for concurrent use.
type routes struct {
	mu    sync.Mutex
	index map[string]int
	names []string
}

func newRoutes() *routes { return &routes{index: map[string]int{}} }

// op returns the operation index of method and target.
func (r *routes) op(method, target string) int {
	key := method + " " + printable(Template(target))
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.index[key]; ok {
		return i
	}
	if len(r.names) >= MaxEndpoints {
		return MaxEndpoints
	}
	r.index[key] = len(r.names)
	r.names = append(r.names, key)
	return len(r.names) - 1
}

// MaxName bounds an endpoint's name: a longer template is cut and
// marked, so that a long recorded path fills no terminal or report.
const MaxName = 200

// printable is an endpoint name as every report may show it: bytes
// outside printable ASCII (C1 controls are UTF-8 too) percent-encoded,
// as a server would see them, cut at MaxName.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < MaxName; i++ {
		if c := s[i]; c > ' ' && c < 0x7f {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() >= MaxName && len(s) > MaxName {
		return b.String()[:MaxName] + "…"
	}
	return b.String()
}

// name names operation i.
func (r *routes) name(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < len(r.names) {
		return r.names[i]
	}
	return Other
}
