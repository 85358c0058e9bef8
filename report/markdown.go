package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteMarkdown renders report.md: the seeds' tables, but every number
// with its spread and every comparison with its p-value.
func WriteMarkdown(w io.Writer, rep *Report) error {
	bw := bufio.NewWriter(w)
	r := rep.Results
	title := r.Title
	if title == "" {
		title = "wirebench study " + r.Study
	}
	fmt.Fprintf(bw, "# %s\n\n", mdEscape(title))
	if r.Quick {
		fmt.Fprintf(bw, "> **Quick run.** Fewer and shorter trials than a full study: read these numbers as a smoke test, not as a result.\n\n")
	}
	fmt.Fprintf(bw, "Study `%s`, %s, %s; %s, seed %d.\n\n",
		r.Study, r.Start.UTC().Format("2006-01-02 15:04 MST"), r.End.Sub(r.Start).Round(time.Second), trialsLine(rep), r.Seed)

	fmt.Fprintf(bw, "## Environment\n\n| | |\n|---|---|\n")
	for _, kv := range envRows(r) {
		fmt.Fprintf(bw, "| %s | %s |\n", kv[0], mdEscape(kv[1]))
	}
	fmt.Fprintln(bw)

	for _, g := range rep.Groups {
		fmt.Fprintf(bw, "## %s\n\n", mdEscape(g.Name))
		writeMDTable(bw, groupTable(g))
		if l := winnerLine(g); l != "" {
			fmt.Fprintf(bw, "\n**%s**\n", mdEscape(l))
		}
		fmt.Fprintln(bw)
		if hasOpTable(g) {
			fmt.Fprintf(bw, "### %s: per operation\n\n", mdEscape(g.Name))
			writeMDTable(bw, opTable(g))
			fmt.Fprintln(bw)
		}
	}
	if len(rep.Groups) > 0 {
		fmt.Fprintf(bw, "%s "+
			"Latency percentiles are per trial, then the median across trials. Bytes are per request: body is the payload, wire is everything on the socket. "+
			"\"vs base\" compares with the first row of the table (Mann-Whitney U test); ~ means no significant difference at α = %v.\n\n", spreadNote(), Alpha)
		if slices.ContainsFunc(rep.Groups, hasOpTable) {
			fmt.Fprintf(bw, "%s\n\n", opNote())
		}
	}

	if len(r.Payloads) > 0 {
		sets := payloadSets(r.Payloads)
		fmt.Fprintf(bw, "## Payload sizes\n\n%s\n\n", mdEscape(payloadNote(sets)))
		for _, s := range sets {
			fmt.Fprintf(bw, "### %s\n\n", mdEscape(s.Dataset))
			writeMDTable(bw, payloadTable(s))
			fmt.Fprintln(bw)
		}
	}

	if ws := allWarnings(rep); len(ws) > 0 {
		fmt.Fprintf(bw, "## Warnings\n\n")
		for _, w := range ws {
			fmt.Fprintf(bw, "- %s\n", mdEscape(w))
		}
		fmt.Fprintln(bw)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write markdown: %w", err)
	}
	return nil
}

func writeMDTable(w io.Writer, t table) {
	esc := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = mdEscape(c)
		}
		return out
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(esc(t.Header), " | "))
	seps := make([]string, len(t.Header))
	for i := range seps {
		seps[i] = "---:"
	}
	seps[0] = "---"
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, row := range t.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(esc(row), " | "))
	}
}

// mdEscape keeps user text (labels, error messages) from breaking tables.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
