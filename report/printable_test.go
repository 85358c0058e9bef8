package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report/reporttest"
)

// TestReportsEscapeControlBytes: a cell label and a warning holding ESC
// sequences, BEL and NUL (a recording's or a server's text) come out of
// every format escaped.
func TestReportsEscapeControlBytes(t *testing.T) {
	r := reporttest.Results(reporttest.Options{})
	r.Cells[0].Label = "evil\x1b[2J\x1b]0;title\x07\x00"
	r.Warnings = append(r.Warnings, "warn\x1b[31mred\x7f")
	for name, write := range map[string]func(*bytes.Buffer) error{
		"md":   func(b *bytes.Buffer) error { return WriteMarkdown(b, Build(r)) },
		"csv":  func(b *bytes.Buffer) error { return WriteCSV(b, Build(r)) },
		"html": func(b *bytes.Buffer) error { return WriteHTML(b, Build(r)) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(b.String(), "\x1b\x07\x00\x7f") {
			t.Errorf("%s holds a control byte", name)
		}
		if !strings.Contains(b.String(), `evil\x1b[2J`) {
			t.Errorf("%s lacks the escaped label", name)
		}
	}
}

// TestMarkdownEscapesHTML: an endpoint or label holding HTML (a hostile
// recording's target) does not become markup in the Markdown report,
// while a comparison such as p99<20ms reads as written.
func TestMarkdownEscapesHTML(t *testing.T) {
	for in, want := range map[string]string{
		"GET /u/<script>alert(1)</script>": `GET /u/&lt;script>alert(1)&lt;/script>`,
		"<!-- x -->":                       `&lt;!-- x -->`,
		"<http://evil>":                    `&lt;http://evil>`,
		"p99<20ms, a < b":                  "p99<20ms, a < b",
		"a|b":                              `a\|b`,
	} {
		if got := mdEscape(in); got != want {
			t.Errorf("mdEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMarkdownShowsNamesAsWritten: a cell label (a recording's endpoint)
// holding emphasis, code, a link and an entity is shown as written in
// the Markdown report's tables, not rendered as markup.
func TestMarkdownShowsNamesAsWritten(t *testing.T) {
	r := reporttest.Results(reporttest.Options{})
	r.Cells[0].Label = "GET /a*b*_c_ `x` &amp; [l](u)"
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Build(r)); err != nil {
		t.Fatal(err)
	}
	want := "| GET /a\\*b\\*\\_c\\_ \\`x\\` &amp;amp; \\[l](u) |"
	if !strings.Contains(b.String(), strings.TrimSuffix(want, " |")) {
		t.Errorf("md lacks %s in\n%s", want, b.String())
	}
}
