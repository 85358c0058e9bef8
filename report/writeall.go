package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wirebench/wirebench/results"
)

// renderers are the files WriteAll produces, in order; results.json
// first, so the raw data exists even if a renderer fails.
var renderers = []struct {
	name  string
	write func(io.Writer, *results.Study, *Report) error
}{
	{"results.json", func(w io.Writer, r *results.Study, _ *Report) error { return r.Write(w) }},
	{"report.md", func(w io.Writer, _ *results.Study, rep *Report) error { return WriteMarkdown(w, rep) }},
	{"report.csv", func(w io.Writer, _ *results.Study, rep *Report) error { return WriteCSV(w, rep) }},
	{"report.html", func(w io.Writer, _ *results.Study, rep *Report) error { return WriteHTML(w, rep) }},
}

// WriteAll writes results.json, report.md, report.csv and report.html into
// dir (created if missing). Each file is written to a temporary name and
// renamed, so a reader never sees half a report.
func WriteAll(dir string, r *results.Study) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	rep := Build(r)
	for _, rd := range renderers {
		var buf bytes.Buffer
		if err := rd.write(&buf, r, rep); err != nil {
			return fmt.Errorf("report: %s: %w", rd.name, err)
		}
		if err := writeFileAtomic(filepath.Join(dir, rd.name), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}
