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
