package gate

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/wirebench/wirebench/results"
)

// Formats are the renderings of a Result: text for a terminal or a CI
// log, github for a pull-request comment (Markdown, the verdict first),
// json for tools.
var Formats = []string{"text", "github", "json"}

// Write renders r in format; links (the full report's address, say) are
// listed at the end of the github and text forms.
func Write(w io.Writer, r *Result, format string, links ...string) error {
	switch format {
	case "text":
		return writeText(w, r, links)
	case "github":
		return writeGitHub(w, r, links)
	case "json":
		return results.EncodeJSON(w, r, "  ")
	}
	return fmt.Errorf("%w: format %q (want %s)", ErrOptions, format, strings.Join(Formats, ", "))
}

// row is one metric's table row, shared by text and github.
func row(c Check) []string {
	m, _ := MetricByName(c.Metric)
	if c.Verdict == Skipped {
		return []string{c.Metric, "—", "—", "—", fmt.Sprintf("%+g%%", c.Tolerance), "—", "skipped"}
	}
	return []string{c.Metric, m.Format(float64(c.Base)), m.Format(float64(c.Change)),
		fmt.Sprintf("%s [%s … %s]", pct(float64(c.Delta)), pct(float64(c.Lo)), pct(float64(c.Hi))),
		fmt.Sprintf("%+g%%", c.Tolerance), mdeText(c), string(c.Verdict)}
}

func mdeText(c Check) string {
	if math.IsInf(float64(c.MDE), 0) {
		return "none"
	}
	return pct(float64(c.MDE))
}

func sideText(s Side) string {
	out := s.Cell
	switch {
	case s.Rev != "" && s.Commit != "":
		out += fmt.Sprintf(" (rev %s = %.12s)", s.Rev, s.Commit)
	case s.Rev != "":
		out += " (rev " + s.Rev + ")"
	}
	out += fmt.Sprintf(", %d trials", s.Trials)
	if s.Failed > 0 {
		out += fmt.Sprintf(" (%d failed)", s.Failed)
	}
	return out
}

func writeText(w io.Writer, r *Result, links []string) error {
	var b strings.Builder
	fmt.Fprintln(&b, r.Summary)
	fmt.Fprintf(&b, "\nbase:   %s\nchange: %s\n\n", sideText(r.Base), sideText(r.Change))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tbase\tchange\tΔ [%g%% CI]\ttolerance\tMDE\tverdict\n", confidence(r)*100)
	for _, c := range r.Checks {
		fmt.Fprintln(tw, strings.Join(row(c), "\t"))
	}
	tw.Flush()
	fmt.Fprintln(&b, "\nwhy:")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %s: %s\n", c.Metric, c.Why)
	}
	writeNoise(&b, r, "", "  ")
	for _, l := range links {
		fmt.Fprintf(&b, "\nfull report: %s\n", l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var verdictMark = map[Verdict]string{Pass: "✅ pass", Regression: "❌ regression", Undecidable: "❔ undecidable", Skipped: "➖ skipped"}

func writeGitHub(w io.Writer, r *Result, links []string) error {
	var b strings.Builder
	title := map[Verdict]string{Pass: "✅ No regression", Regression: "❌ Regression", Undecidable: "❔ Undecidable"}[r.Verdict]
	fmt.Fprintf(&b, "### %s — wirebench gate (exit %d)\n\n", title, r.ExitCode)
	fmt.Fprintf(&b, "**%s**\n\n", md(r.Summary))
	fmt.Fprintf(&b, "Base **%s** · change **%s**\n\n", md(sideText(r.Base)), md(sideText(r.Change)))
	fmt.Fprintf(&b, "| metric | base | change | Δ (%g%% CI) | tolerance | MDE | verdict |\n|---|--:|--:|--:|--:|--:|---|\n", confidence(r)*100)
	for _, c := range r.Checks {
		cells := row(c)
		cells[6] = verdictMark[c.Verdict]
		if c.Verdict == Regression {
			cells[3] = "**" + cells[3] + "**"
		}
		for i := range cells {
			cells[i] = md(cells[i])
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(&b, "\nΔ is change/base − 1 (Hodges-Lehmann, with its distribution-free interval); MDE is the smallest change this run catches 80%% of the time. A regression must lie beyond its tolerance at α = %g after Holm's correction over the metrics; a pass must lie within it.\n", r.Alpha)
	fmt.Fprintf(&b, "\n<details><summary>Why, and the noise control</summary>\n\n")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "- **%s**: %s\n", c.Metric, md(c.Why))
	}
	fmt.Fprintln(&b)
	writeNoise(&b, r, "- ", "  - ")
	fmt.Fprintf(&b, "\n</details>\n")
	if len(links) > 0 {
		fmt.Fprintln(&b)
		for _, l := range links {
			fmt.Fprintf(&b, "[Full report](%s)\n", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNoise lists the noise statement; bullet prefixes each line (text:
// none), sub its warnings.
func writeNoise(b *strings.Builder, r *Result, bullet, sub string) {
	n := r.Noise
	if bullet == "" {
		fmt.Fprintln(b, "\nnoise control:")
		bullet = "  "
		sub = "    - "
	}
	fmt.Fprintf(b, "%sCPU pinning: %s\n", bullet, n.Pinning)
	fmt.Fprintf(b, "%strials: %s, %s\n", bullet, n.Trials, n.Order)
	fmt.Fprintf(b, "%smachine: %s\n", bullet, n.Machine)
	if n.AA != nil {
		var parts []string
		for _, c := range n.AA.Checks {
			parts = append(parts, fmt.Sprintf("%s %s [%s … %s]", c.Metric, pct(float64(c.Delta)), pct(float64(c.Lo)), pct(float64(c.Hi))))
		}
		fmt.Fprintf(b, "%sA/A pair (%s, the base's build again): %s\n", bullet, n.AA.Cell, strings.Join(parts, "; "))
	}
	if len(n.Warnings) > 0 {
		fmt.Fprintf(b, "%swarnings:\n", bullet)
		for _, w := range n.Warnings {
			fmt.Fprintf(b, "%s%s\n", sub, w)
		}
	}
}

func confidence(r *Result) float64 { return math.Round((1-2*r.Alpha)*1000) / 1000 }

// md escapes what would break a Markdown table cell.
func md(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }
