package study

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/lazy"
	"github.com/wirebench/wirebench/internal/typo"
)

// MaxPorts is how many free ports one cell may ask for: {port} and {port2}
// up to {port9}.
const MaxPorts = 9

// placeholderRE matches our placeholders, valid or not ({port10}).
var placeholderRE = lazy.Regexp(`\{(port[0-9]*|wirebench|worktree)\}`)

// braceWordRE finds {word}s, to catch misspelt placeholders ({prot});
// other words in braces ({print} in an awk script) are left alone.
var braceWordRE = lazy.Regexp(`\{([A-Za-z][A-Za-z0-9_]*)\}`)

// nearPlaceholder reports whether name looks like a misspelt placeholder.
func nearPlaceholder(name string) bool {
	name = strings.ToLower(strings.TrimRight(name, "0123456789"))
	return typo.Distance(name, "port") <= 1 || typo.Distance(name, "wirebench") <= 2 || typo.Distance(name, "worktree") <= 2
}

// vars are the values substituted into a cell's templates for one trial.
type vars struct {
	ports     []int  // {port} is ports[0], {port2} ports[1], ...
	wirebench string // {wirebench}: the wirebench executable
	// worktree is {worktree}, the checkout of the cell's rev (rev.go);
	// directories under repo, the study's repository, map into it (dir).
	worktree, repo string
}

// expand substitutes the placeholders of s. Placeholders without a value
// (a port the trial did not allocate) are left as they are; validate
// rejects them before any trial runs.
func (v vars) expand(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	return placeholderRE().ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		switch name {
		case "wirebench", "worktree":
			if val := map[string]string{"wirebench": v.wirebench, "worktree": v.worktree}[name]; val != "" {
				return val
			}
			return m
		}
		i, ok := portIndex(name)
		if !ok || i > len(v.ports) {
			return m
		}
		return strconv.Itoa(v.ports[i-1])
	})
}

func (v vars) expandAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = v.expand(s)
	}
	return out
}

// portIndex maps "port" to 1 and "port2".."port9" to 2..9.
func portIndex(name string) (int, bool) {
	if name == "port" {
		return 1, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "port"))
	if err != nil || n < 2 || n > MaxPorts || strconv.Itoa(n) != name[4:] {
		return 0, false
	}
	return n, true
}

// portsUsed returns how many ports the templates need (the highest index
// used), or an error naming a malformed placeholder.
func portsUsed(templates ...string) (int, error) {
	n := 0
	for _, s := range templates {
		for _, m := range braceWordRE().FindAllStringSubmatch(s, -1) {
			if !placeholderRE().MatchString(m[0]) && nearPlaceholder(m[1]) {
				return 0, fmt.Errorf("unknown placeholder %s (have {port}, {port2} ... {port%d}, {wirebench}, {worktree})", m[0], MaxPorts)
			}
		}
		for _, m := range placeholderRE().FindAllString(s, -1) {
			name := m[1 : len(m)-1]
			if name == "wirebench" || name == "worktree" {
				continue
			}
			i, ok := portIndex(name)
			if !ok {
				return 0, fmt.Errorf("unknown placeholder %s (have {port}, {port2} ... {port%d}, {wirebench}, {worktree})", m, MaxPorts)
			}
			n = max(n, i)
		}
	}
	return n, nil
}
