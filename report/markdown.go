package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// WriteMarkdown renders report.md: the question and its answer first (one
// finding per cell against its baseline), then per group a narrow main
// table with every other metric behind an expandable section; every
// number with its spread and every comparison with its evidence.
func WriteMarkdown(w io.Writer, rep *Report) error {
	w = printableWriter(w)
	bw := bufio.NewWriter(w)
	r := rep.Results
	fmt.Fprintf(bw, "# %s\n\n", mdEscape(title(r)))
	for _, v := range verdict(rep) { // before anything else: a failed run says so first
		fmt.Fprintf(bw, "> **%s**\n\n", mdEscape(v))
	}
	if r.Quick && r.HasLoad() {
		fmt.Fprintf(bw, "> **Quick run** (%s). Read these numbers as a smoke test, not as a result.\n\n", trialsLine(r))
	}
	fmt.Fprintf(bw, "%s\n\n", mdEscape(metaLine(rep)))
	writeMDHeadline(bw, rep)

	for _, g := range rep.Groups {
		writeMDGroup(bw, rep, g)
	}
	if len(rep.Groups) > 0 {
		fmt.Fprintf(bw, "%s\n\n", mdEscape(tableNote(rep)))
	}
	for _, n := range r.Notes { // the study's own sections, Markdown already
		fmt.Fprintf(bw, "%s\n\n", strings.TrimSpace(n))
	}

	if len(r.Payloads) > 0 {
		sets := payloadSets(r.Payloads)
		fmt.Fprintf(bw, "## Payload sizes\n\n%s\n\n", mdEscape(payloadNote(sets)))
		for _, s := range sets {
			fmt.Fprintf(bw, "### %s\n\n", mdName(mdEscape(s.Dataset)))
			writeMDTable(bw, payloadTable(s))
			fmt.Fprintln(bw)
		}
	}

	if r.PayloadLab != nil {
		writeMDPayloadLab(bw, r.PayloadLab)
	}

	if len(r.Links) > 0 {
		fmt.Fprintf(bw, "## Links\n\n%s\n\n", mdEscape(linksNote(r)))
		writeMDTable(bw, linksTable(r))
		fmt.Fprintln(bw)
	}

	fmt.Fprintf(bw, "## Environment\n\n| | |\n|---|---|\n")
	for _, kv := range envRows(r) {
		fmt.Fprintf(bw, "| %s | %s |\n", kv[0], mdEscape(kv[1]))
	}
	fmt.Fprintln(bw)

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

// writeMDHeadline states the question, the baselines and every finding.
func writeMDHeadline(w io.Writer, rep *Report) {
	r := rep.Results
	if q := question(r); q != "" {
		fmt.Fprintf(w, "**Question:** %s", mdEscape(q))
		if b := baselines(rep); b != "" {
			fmt.Fprintf(w, " **Baseline:** %s.", mdEscape(b))
		}
		fmt.Fprint(w, "\n\n")
	}
	if las := linkAnswers(rep); las != nil {
		for _, a := range las { // one line per link of the study's links axis
			fmt.Fprintf(w, "**Answer on %s:** %s\n\n", mdEscape(a.link), mdEscape(a.line))
		}
	} else if a := answerLine(rep); a != "" {
		fmt.Fprintf(w, "**Answer:** %s\n\n", mdEscape(a))
	}
	if r.SingleRun && len(rep.Groups) == 1 && len(rep.Groups[0].Cells) == 1 {
		g := rep.Groups[0]
		fmt.Fprintf(w, "**%s** (%s). %s\n\n", mdEscape(singleRunLine(g.Cells[0])), mdEscape(g.Load), mdEscape(singleNote(r)))
		return
	}
	var lines []string
	for _, g := range rep.Groups {
		for _, f := range g.Findings() {
			l := f.Text
			if len(rep.Groups) > 1 {
				l = g.Name + ": " + l
			}
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "## Findings\n\n")
	for _, l := range lines {
		fmt.Fprintf(w, "- %s\n", mdEscape(l))
	}
	fmt.Fprintln(w)
}

func writeMDGroup(w io.Writer, rep *Report, g Group) {
	r := rep.Results
	fmt.Fprintf(w, "## %s\n\n", mdName(mdEscape(g.Name)))
	if g.Load != "" {
		fmt.Fprintf(w, "Load: %s.", mdEscape(g.Load))
		if len(g.Cells) > 1 {
			fmt.Fprintf(w, " Baseline: %s.", mdName(mdEscape(g.Cells[0].Cell.Label)))
		}
		fmt.Fprint(w, "\n\n")
	}
	writeMDTable(w, mainTable(g))
	fmt.Fprintln(w)
	if groupHasCapacity(g) {
		fmt.Fprintf(w, "### Capacity\n\n")
		if l := quotaLine(g); l != "" {
			fmt.Fprintf(w, "%s\n\n", mdEscape(l))
		}
		writeMDTable(w, capacityTable(g))
		fmt.Fprintln(w)
		if r.SingleRun && len(g.Cells) == 1 && len(g.Cells[0].Capacity) == 1 {
			fmt.Fprintf(w, "### Capacity search steps\n\n")
			writeMDTable(w, stepsTable(g.Cells[0].Capacity[0]))
			fmt.Fprintln(w)
		}
	}
	if r.SingleRun && len(g.Cells) == 1 {
		if res, ok := singleRun(r); ok {
			fmt.Fprintf(w, "### Latency distribution\n\n")
			writeMDTable(w, latencyDistribution(res))
			fmt.Fprintln(w)
			if st := slowestTable(res); len(st.Rows) > 0 {
				fmt.Fprintf(w, "### Slowest requests\n\n")
				writeMDTable(w, st)
				fmt.Fprintln(w)
			}
		}
	}
	mdDetails(w, "All metrics: "+g.Name, func() { writeMDTable(w, groupTable(g)) })
	if hasOpTable(g) {
		mdDetails(w, "Per operation: "+g.Name, func() { writeMDTable(w, groupOpTable(g, r.SingleRun)) })
	}
	if st := groupSlowestTable(g); !r.SingleRun && len(st.Rows) > 0 {
		mdDetails(w, "Slowest requests: "+g.Name, func() { writeMDTable(w, st) })
	}
}

// mdDetails wraps a section in <details>, which GitHub and most Markdown
// renderers show collapsed; plain-text readers still see the table.
func mdDetails(w io.Writer, summary string, body func()) {
	fmt.Fprintf(w, "<details><summary>%s</summary>\n\n", htmlEscaper.Replace(summary))
	body()
	fmt.Fprint(w, "\n</details>\n\n")
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// title is the study's title, or one made from its name.
func title(r *results.Study) string {
	if r.Title != "" {
		return r.Title
	}
	return "wirebench study " + r.Study
}

// metaLine says when the study ran and what it ran.
func metaLine(rep *Report) string {
	r := rep.Results
	when := fmt.Sprintf("%s, %s", r.Start.UTC().Format("2006-01-02 15:04 MST"), r.End.Sub(r.Start).Round(time.Second))
	if r.PayloadLab != nil {
		return fmt.Sprintf("Payload lab, %s.", when)
	}
	if r.SingleRun && r.Study == "capacity" {
		return fmt.Sprintf("Capacity search, %s.", when)
	}
	if what := mergedFrom(r); what != "" {
		return fmt.Sprintf("Load test %s, %s.", what, when)
	}
	if r.SingleRun {
		return fmt.Sprintf("Load run, %s.", when)
	}
	line := fmt.Sprintf("Study `%s`, %s; %s", r.Study, when, trialsLine(r))
	if r.HasLoad() {
		line += fmt.Sprintf(", seed %d", r.Seed)
	}
	return line + "."
}

// tableNote explains the tables' notation.
func tableNote(rep *Report) string {
	r := rep.Results
	var b strings.Builder
	if r.SingleRun {
		b.WriteString("Numbers are from one run. Latency percentiles are from the run's histogram. ")
	} else {
		b.WriteString(spreadNote() + " Latency percentiles are per trial, then the median across trials. ")
	}
	b.WriteString("bytes/req is every response byte on the socket per request (IEC units: 1 KiB = 1024 B); " +
		"in all metrics, body is the payload and wire is everything on the socket. ")
	b.WriteString(answerNote(rep))
	if !r.SingleRun {
		fmt.Fprintf(&b, "\"vs baseline\" compares each cell's trials with the baseline's (Mann-Whitney U test): "+
			"a change with its p-value when significant at α = %v; ~ when enough trials found no significant difference; "+
			"? when too few trials were run for the test to decide (it needs %d or more per cell), with the observed change. ",
			stats.Alpha, minTrials())
		if ext := externalCells(r); !r.Sampled() {
			b.WriteString("No server process was sampled, so server CPU and memory are not shown. ")
		} else if len(ext) > 0 {
			fmt.Fprintf(&b, "%s measured a server that was already running (given by URL): no process of theirs was sampled, so they show no server CPU or memory. ",
				strings.Join(ext, ", "))
		}
	}
	if slices.ContainsFunc(rep.Groups, hasOpTable) {
		b.WriteString(opNote(r.SingleRun))
	}
	return strings.TrimSpace(b.String())
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
		row = esc(row)
		if len(row) > 0 {
			row[0] = mdName(row[0]) // a cell's label or an endpoint: a name, shown as written
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

// mdName is a name from outside (a cell's label, a recording's endpoint,
// a group's or dataset's name), already mdEscape'd, shown as written:
// emphasis ('*', '_'), code ('`'), a link's '[' and an entity's '&' are
// escaped too ("GET /a*b*" is not "GET /a<em>b</em>", "&amp;" not "&").
// Our own text keeps its marks: a range's "[1,000/s, 1,040/s)" reads as
// written.
func mdName(s string) string {
	return mdNameMarks.Replace(s)
}

var mdNameMarks = strings.NewReplacer("`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "&", "&amp;")

// mdEscape keeps user text (labels, error messages, a recording's
// endpoints) from breaking tables or becoming markup: a '<' that could
// open an HTML tag, comment or autolink (a letter, '/', '!' or '?'
// follows) is written &lt;, so p99<20ms still reads as written.
func mdEscape(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '<' && i+1 < len(s) {
			c := s[i+1]
			if 'a' <= c|0x20 && c|0x20 <= 'z' || c == '/' || c == '!' || c == '?' {
				b.WriteString("&lt;")
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// externalCells lists the cells whose server was already running.
func externalCells(r *results.Study) []string {
	var out []string
	for _, c := range r.Cells {
		if c.External != "" {
			out = append(out, c.Label)
		}
	}
	return out
}
