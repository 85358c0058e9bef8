package load

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/race"
)

// The check-site convention (docs/testing.md, "Every response check has a
// named mutant"): a client records that a request failed, and why, only by
// setting an Outcome's failure reason where it checks — an assignment to a
// field named Fail (o.Fail = "check: …", outs[i].Fail = reason) or a Fail:
// field of a composite literal, with a value other than "". Helpers such as
// grpcFail or failAll set it in their own body, which is then the site.
// The guard of a site is the condition of the innermost if (or case of a
// tagless switch) around it in the same function.
//
// TestEveryCheckSiteHasMutants walks load/ and every package below it and
// wants, for each site, two named mutants in scripts/mutants/*.txt: one
// that blanks the reason (its old text covers the site and the site is
// gone from the mutated file) and, for a guarded site, one that changes
// the guard (its old text overlaps the condition, not the site). CI plants
// them (scripts/plant.py); this test makes sure they exist, so a new check
// cannot land without its mutants. On failure it prints the lines to add.

// checkSite is one place a failure reason is set.
type checkSite struct {
	file       string // relative to the module root, slash-separated
	line       int
	start, end int    // byte offsets of the statement or key: value
	text       string // its source, whitespace collapsed
	// guard is the byte range of the guarding condition; gStart < 0 when
	// the site is unconditional within its function.
	gStart, gEnd int
}

// mutant is one line of scripts/mutants/*.txt.
type mutant struct {
	where          string // mutants file:line
	file, old, new string
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// findCheckSites returns the check sites of one Go source.
func findCheckSites(file string, src []byte) ([]checkSite, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		return nil, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var sites []checkSite
	var stack []ast.Node
	add := func(n ast.Node) {
		s := checkSite{file: file, line: fset.Position(n.Pos()).Line, start: off(n.Pos()), end: off(n.End()), gStart: -1}
		s.text = collapse(string(src[s.start:s.end]))
		// The innermost if or tagless-switch case around n, within n's function.
	walk:
		for i := len(stack) - 1; i >= 0; i-- {
			switch g := stack[i].(type) {
			case *ast.FuncLit, *ast.FuncDecl:
				break walk
			case *ast.IfStmt:
				if n.Pos() >= g.Body.Pos() {
					s.gStart, s.gEnd = off(g.Cond.Pos()), off(g.Cond.End())
					break walk
				}
			case *ast.CaseClause:
				if len(g.List) > 0 {
					s.gStart, s.gEnd = off(g.List[0].Pos()), off(g.List[len(g.List)-1].End())
				}
				break walk
			}
		}
		sites = append(sites, s)
	}
	blank := func(e ast.Expr) bool {
		l, ok := e.(*ast.BasicLit)
		return ok && (l.Value == `""` || l.Value == "``")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, l := range x.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Fail" && len(x.Rhs) == len(x.Lhs) && !blank(x.Rhs[i]) {
					add(x)
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Fail" && !blank(x.Value) && len(stack) > 0 {
				if _, lit := stack[len(stack)-1].(*ast.CompositeLit); lit {
					add(x)
				}
			}
		}
		stack = append(stack, n)
		return true
	})
	return sites, nil
}

// loadCheckSites walks the load tree (dir is load/ itself) and returns
// every site, file names relative to the module root.
func loadCheckSites(t *testing.T, root string) (map[string][]byte, []checkSite) {
	t.Helper()
	srcs := map[string][]byte{}
	var all []checkSite
	err := filepath.WalkDir(filepath.Join(root, "load"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sites, err := findCheckSites(rel, src)
		if err != nil {
			return err
		}
		srcs[rel] = src
		all = append(all, sites...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srcs, all
}

// readMutants reads every scripts/mutants/*.txt, as scripts/plant.py does.
func readMutants(t *testing.T, root string) []mutant {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "scripts", "mutants", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no scripts/mutants/*.txt")
	}
	unescape := strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace
	var ms []mutant
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p := strings.Split(line, "|||")
			if len(p) != 3 {
				t.Errorf("%s:%d: want file|||old|||new", filepath.Base(f), i+1)
				continue
			}
			ms = append(ms, mutant{fmt.Sprintf("%s:%d", filepath.Base(f), i+1), p[0], unescape(p[1]), unescape(p[2])})
		}
	}
	return ms
}

func TestEveryCheckSiteHasMutants(t *testing.T) {
	if race.Enabled {
		t.Skip("a walk of the source files on one goroutine, nothing for the race detector (CI's race step): the main suite runs it")
	}
	root := ".."
	srcs, sites := loadCheckSites(t, root)
	if len(sites) < 50 { // the walk must see the clients (70 sites when written)
		t.Fatalf("found only %d check sites under load/", len(sites))
	}
	perFile := map[string][]checkSite{}
	for _, s := range sites {
		perFile[s.file] = append(perFile[s.file], s)
	}
	blanked := map[checkSite]bool{}
	guarded := map[checkSite]bool{}
	for _, m := range readMutants(t, root) {
		if !strings.HasPrefix(m.file, "load/") {
			continue
		}
		src, ok := srcs[m.file]
		if !ok {
			t.Errorf("%s: mutant of %s, which is not a source file under load/", m.where, m.file)
			continue
		}
		if n := strings.Count(string(src), m.old); n != 1 {
			t.Errorf("%s: stale mutant: %q occurs %d times in %s (want once)", m.where, m.old, n, m.file)
			continue
		}
		start := strings.Index(string(src), m.old)
		end := start + len(m.old)
		mutated := string(src[:start]) + m.new + string(src[end:])
		after, err := findCheckSites(m.file, []byte(mutated))
		if err != nil {
			t.Errorf("%s: the mutated %s does not parse: %v", m.where, m.file, err)
			continue
		}
		for _, s := range perFile[m.file] {
			covers := start <= s.start && s.end <= end
			if covers && countText(after, s.text) < countText(perFile[m.file], s.text) {
				blanked[s] = true
			}
			if !covers && s.gStart >= 0 && start < s.gEnd && s.gStart < end {
				guarded[s] = true
			}
		}
	}
	var missing []string
	for _, s := range sites {
		if !blanked[s] {
			missing = append(missing, fmt.Sprintf("%s:%d: no mutant blanks %q; e.g.\n\t%s", s.file, s.line, s.text, suggestBlank(srcs[s.file], s)))
		}
		if s.gStart >= 0 && !guarded[s] {
			missing = append(missing, fmt.Sprintf("%s:%d: no mutant switches off the guard of %q; e.g.\n\t%s", s.file, s.line, s.text, suggestGuard(srcs[s.file], s)))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
	if !t.Failed() {
		counts := map[string]int{}
		for _, s := range sites {
			counts[filepath.Dir(s.file)]++
		}
		t.Logf("%d check sites, each with its named mutants: %v", len(sites), counts)
	}
}

func countText(sites []checkSite, text string) int {
	n := 0
	for _, s := range sites {
		if s.text == text {
			n++
		}
	}
	return n
}

// unique widens src[start:end] to whole lines, then line by line (down,
// or up: a guard's context must not reach its site) until it occurs once
// in src, and returns its bounds.
func unique(src []byte, start, end int, down bool) (int, int) {
	s := string(src)
	for start > 0 && s[start-1] != '\n' {
		start--
	}
	for end < len(s) && s[end] != '\n' {
		end++
	}
	for strings.Count(s, s[start:end]) > 1 {
		if down && end < len(s) || start == 0 {
			end++
			for end < len(s) && s[end] != '\n' {
				end++
			}
		} else {
			start--
			for start > 0 && s[start-1] != '\n' {
				start--
			}
		}
	}
	return start, end
}

var escape = strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace

// suggestBlank is a mutants line that blanks s's reason.
func suggestBlank(src []byte, s checkSite) string {
	a, b := unique(src, s.start, s.end, true)
	stmt := string(src[s.start:s.end])
	var blank string
	if k, _, ok := strings.Cut(stmt, "="); ok && !strings.HasPrefix(stmt, "Fail:") {
		blank = k + `= ""`
	} else {
		blank = `Fail: ""`
	}
	old := string(src[a:b])
	return s.file + "|||" + escape(old) + "|||" + escape(strings.Replace(old, stmt, blank, 1))
}

// suggestGuard is a mutants line that switches s's guard off.
func suggestGuard(src []byte, s checkSite) string {
	a, b := unique(src, s.gStart, s.gEnd, false)
	cond := string(src[s.gStart:s.gEnd])
	old := string(src[a:b])
	// not "false" alone: a variable used only in the condition would be unused
	off := "(" + cond + ") && false"
	return s.file + "|||" + escape(old) + "|||" + escape(strings.Replace(old, cond, off, 1))
}
