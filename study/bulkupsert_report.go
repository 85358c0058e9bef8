package study

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// Goals of issue 14, checked by the report at 1M records.
const (
	bulkGoalRSS   = 20 << 20 // streaming peak RSS, every format
	bulkGoalRatio = 0.7      // streaming rows/s against sqlite3 .import
)

// WriteBulk writes results.json, report.md, report.html (RSS over time,
// one plot per format) and rss.csv into dir.
func WriteBulk(dir string, r *BulkResults) error {
	var js bytes.Buffer
	if err := results.EncodeJSON(&js, r, " "); err != nil {
		return err
	}
	var md, page, csv strings.Builder
	BulkMarkdown(&md, r)
	bulkHTML(&page, r, md.String())
	csv.WriteString("cell,trial,t_s,rss_bytes\n")
	for _, c := range r.Cells {
		for i, t := range c.Trials {
			for _, s := range t.Samples {
				fmt.Fprintf(&csv, "%s,%d,%.3f,%d\n", c.ID(), i, s.T.Seconds(), s.RSS)
			}
		}
	}
	for name, b := range map[string]string{"results.json": js.String(), "report.md": md.String(), "report.html": page.String(), "rss.csv": csv.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cellStats are a cell's successful trials summarized with results/stats
// (median and 95% CI, or the range of the trials when too few), and the
// per-trial values that comparisons test.
type cellStats struct {
	ok, n, verified    int
	wall, cpu, rate    stats.Summary // seconds, seconds, rows/s
	peak, wire, body   stats.Summary // bytes
	walls, cpus, rates []float64
	peaks              []float64
	maxPeak            float64
}

func statsOf(c *BulkCell) cellStats {
	s := cellStats{n: len(c.Trials)}
	var wires, bodies []float64
	for _, t := range c.Trials {
		if t.Verified {
			s.verified++
		}
		if t.Error != "" {
			continue
		}
		s.ok++
		s.walls, s.cpus, s.rates = append(s.walls, t.Wall.Seconds()), append(s.cpus, t.ServerCPU.Seconds()), append(s.rates, t.RowsPerS)
		s.peaks = append(s.peaks, float64(t.PeakRSS))
		s.maxPeak = max(s.maxPeak, float64(t.PeakRSS))
		if t.Upload != nil {
			wires, bodies = append(wires, float64(t.Upload.WireSent+t.Upload.WireReceived)), append(bodies, float64(t.Upload.BodyBytes))
		}
	}
	if s.ok == 0 {
		return s
	}
	s.wall, s.cpu, s.rate, s.peak = stats.Summarize(s.walls), stats.Summarize(s.cpus), stats.Summarize(s.rates), stats.Summarize(s.peaks)
	if len(wires) > 0 {
		s.wire, s.body = stats.Summarize(wires), stats.Summarize(bodies)
	}
	return s
}

// bytesOnce is an upload's size: the same in every trial of a format, so
// without a spread.
func bytesOnce(s stats.Summary) string {
	if s.N == 0 {
		return ""
	}
	return mib(s.Center)
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func secs(v float64) string { return fmt.Sprintf("%.2f s", v) }

func rate(v float64) string { return fmt.Sprintf("%.0f", v) }

// spread prints a summary as the other reports do: the median, then its
// 95% CI in brackets, or the lowest and highest trial when there are too
// few trials for an interval; a single trial alone.
func spread(s stats.Summary, f func(float64) string) string {
	lo, hi := s.Min, s.Max
	switch {
	case s.N == 0:
		return ""
	case s.HasCI():
		lo, hi = s.Lo, s.Hi
	case s.N == 1:
		return f(s.Center)
	}
	l, h := f(lo), f(hi)
	if i := strings.LastIndexByte(h, ' '); i > 0 && strings.HasSuffix(l, h[i:]) { // "0.45–0.59 s", the unit once
		l = strings.TrimSuffix(l, h[i:])
	}
	return fmt.Sprintf("%s [%s–%s]", f(s.Center), l, h)
}

// countLabel is "1M", "100k" or "2,500": the run's size in its title.
func countLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return commas(n)
}

func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// bulkTitle is the study's title with the run's own record count: a
// 100k quick run is not titled "1M airports".
func bulkTitle(r *BulkResults) string {
	for _, prefix := range []string{"1M airports", "1,000,000 airports"} {
		if rest, ok := strings.CutPrefix(r.Title, prefix); ok {
			return countLabel(r.Records) + " airports" + rest
		}
	}
	return r.Title
}

// BulkMarkdown renders the report in the shape of every other study's:
// the quick-run notice at the top, the question and its one-line answer,
// findings with their intervals and p-values, the main table, the goals,
// then failures and warnings.
func BulkMarkdown(w io.Writer, r *BulkResults) {
	fmt.Fprintf(w, "# %s\n\n", bulkTitle(r))
	if r.Quick {
		fmt.Fprintf(w, "> **Quick run** (%s records per upload, %d trials per cell; the full run uploads 1,000,000). "+
			"Read these numbers as a smoke test, not as a result.\n\n", commas(r.Records), r.Trials)
	}
	fmt.Fprintf(w, "Study `%s`, %s, %s; %s records per upload (%s), %d trials per cell, interleaved, seed %d; "+
		"a fresh server and database per trial; server on CPUs %v, client on %v.\n\n",
		BulkUpsertName, r.Start.UTC().Format("2006-01-02 15:04 MST"), r.End.Sub(r.Start).Round(time.Second),
		commas(r.Records), r.Expected, r.Trials, r.Seed, r.Options.ServerCPUs, r.Options.ClientCPUs)
	fmt.Fprintf(w, "**Question:** %s **Baseline:** each format's buffered upload; sqlite3 .import for rows/s.\n\n", r.Question)
	bs := newBulkSet(r)
	if a := bs.answer(); a != "" {
		fmt.Fprintf(w, "**Answer:** %s\n\n", a)
	}
	if fs := bs.findings(); len(fs) > 0 {
		fmt.Fprint(w, "## Findings\n\n")
		for _, f := range fs {
			fmt.Fprintf(w, "- %s\n", f)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "## Uploads\n\n")
	fmt.Fprintln(w, "| cell | wall | rows/s | vs .import | server CPU | peak RSS (VmHWM) | body | on the wire | table checked |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, c := range r.Cells {
		s := bs.stats[c]
		if s.ok == 0 {
			fmt.Fprintf(w, "| %s | failed | | | | | | | %d/%d |\n", c.ID(), s.verified, s.n)
			continue
		}
		vs := ""
		if bs.ref.ok > 0 && c.Mode != ModeImport {
			vs = ratioText(stats.Compare(bs.ref.rates, s.rates))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %d/%d exact |\n",
			c.ID(), spread(s.wall, secs), spread(s.rate, rate), vs, spread(s.cpu, secs),
			spread(s.peak, mib), bytesOnce(s.body), bytesOnce(s.wire), s.verified, s.n)
	}
	fmt.Fprintln(w, "\n"+bulkTableNote)
	fmt.Fprint(w, "\n## Goals (issue 14)\n\n")
	if r.Records < 1_000_000 {
		fmt.Fprintf(w, "Stated for 1M records; this run had %s, so they are indicative only.\n\n", commas(r.Records))
	}
	writeBulkGoals(w, r, bs)
	var fails []string
	for _, c := range r.Cells {
		for i, t := range c.Trials {
			if t.Error != "" {
				fails = append(fails, fmt.Sprintf("- %s trial %d: %s", c.ID(), i, t.Error))
			}
		}
	}
	if len(fails) > 0 {
		fmt.Fprint(w, "\n## Failed trials\n\n")
		fmt.Fprintln(w, strings.Join(fails, "\n"))
	}
	var warns []string
	for _, x := range r.Warnings {
		if !strings.HasPrefix(x, "quick run:") { // said at the top
			warns = append(warns, x)
		}
	}
	if n := stats.MinCISamples(stats.Confidence); r.Trials < n {
		warns = append(warns, fmt.Sprintf("fewer than %d trials per cell: no %v%% confidence intervals; the table shows the range of the trials instead", n, stats.Confidence*100))
	}
	if len(warns) > 0 {
		fmt.Fprint(w, "\n## Warnings\n\n")
		for _, x := range warns {
			fmt.Fprintf(w, "- %s\n", x)
		}
	}
	fmt.Fprintf(w, "\n## Environment\n\n%s, %d CPUs, %s, Go %s.\n", r.Env.CPUModel, r.Env.NumCPU, r.Env.Kernel, r.Env.GoVersion)
}

const bulkTableNote = "Each number is the median over the successful trials, with its 95% confidence interval in brackets " +
	"(or, with too few trials for one, the lowest and highest trial); body and wire bytes are the same in every trial. \"vs .import\" is the ratio of rows/s against " +
	"sqlite3 .import of the same rows as CSV into the same schema, on the same CPU: the physical limit. " +
	"\"table checked\": row count and checksum of the table equal the generator's (docs/bulk.md: the checksum in SQL). " +
	"Peak RSS is the server's VmHWM (whole process: Go heap, SQLite's page cache and the binary's mapped pages); " +
	"RSS over time is in report.html and rss.csv, sampled every 25 ms from the server's own PID."

// writeBulkGoals checks issue 14's goals: streaming within 20 MiB and at
// 0.7× .import's rows/s or better, buffered never killing the server.
func writeBulkGoals(w io.Writer, r *BulkResults, bs bulkSet) {
	for _, c := range r.Cells {
		s := bs.stats[c]
		switch c.Mode {
		case ModeStream:
			rss := "FAIL"
			if s.ok > 0 && s.maxPeak <= bulkGoalRSS {
				rss = "pass"
			}
			ratio, speed := 0.0, "FAIL"
			if bs.ref.ok > 0 && s.ok > 0 {
				ratio = s.rate.Center / bs.ref.rate.Center
				if ratio >= bulkGoalRatio {
					speed = "pass"
				}
			}
			fmt.Fprintf(w, "- %s: peak RSS %s ≤ 20 MiB: **%s**; rows/s %.2f× .import ≥ 0.7×: **%s**\n", c.ID(), mib(s.maxPeak), rss, ratio, speed)
		case ModeBuffered:
			down := 0
			for _, t := range c.Trials {
				if strings.HasPrefix(t.Error, "the server died") {
					down++
				}
			}
			verdict := "pass"
			if down > 0 {
				verdict = "FAIL"
			}
			fmt.Fprintf(w, "- %s: peak RSS %s (growth over streaming shown above); server died in %d of %d trials: **%s**\n", c.ID(), mib(s.maxPeak), down, s.n, verdict)
		}
	}
}

// bulkHTML is the report with one SVG plot of RSS over time per format:
// streaming and buffered (first trial each) on the same axes.
func bulkHTML(w io.Writer, r *BulkResults, md string) {
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><body style=\"font-family:sans-serif;max-width:1000px;margin:auto\">\n", html.EscapeString(bulkTitle(r)))
	fmt.Fprintf(w, "<pre style=\"white-space:pre-wrap\">%s</pre>\n", html.EscapeString(md))
	byFormat := map[string][]*BulkCell{}
	var order []string
	for _, c := range r.Cells {
		if _, ok := byFormat[c.Format]; !ok {
			order = append(order, c.Format)
		}
		byFormat[c.Format] = append(byFormat[c.Format], c)
	}
	// Okabe–Ito colours and a dash per mode, as the other reports' plots
	// (report/style.go): the modes stay apart in greyscale too.
	colors := map[string]string{ModeStream: "#0072B2", ModeBuffered: "#D55E00", ModeImport: "#009E73"}
	dashes := map[string]string{ModeStream: "", ModeBuffered: "9 4", ModeImport: "2 3"}
	for _, f := range order {
		cells := byFormat[f]
		var maxT time.Duration
		var maxR int64 = 1
		for _, c := range cells {
			for _, t := range c.Trials {
				for _, s := range t.Samples {
					maxT, maxR = max(maxT, s.T), max(maxR, s.RSS)
				}
			}
		}
		if maxT == 0 {
			continue
		}
		const W, H, L, B, T = 900, 260, 60, 30, 12 // width, plot height, left/bottom/top margins
		fmt.Fprintf(w, "<h3>RSS over time: %s</h3>\n<svg width=%d height=%d style=\"border:1px solid #ccc\">\n", html.EscapeString(f), W, T+H+B)
		for i := 0; i <= 4; i++ {
			y := T + H - H*i/4
			fmt.Fprintf(w, "<line x1=%d x2=%d y1=%d y2=%d stroke=#eee /><text x=2 y=%d font-size=11>%s</text>\n", L, W, y, y, y+4, mib(float64(maxR*int64(i)/4)))
		}
		fmt.Fprintf(w, "<text x=%d y=%d font-size=11>0 s</text><text x=%d y=%d font-size=11 text-anchor=end>%.2f s</text>\n", L, T+H+20, W-5, T+H+20, maxT.Seconds())
		for li, c := range cells {
			for ti, t := range c.Trials {
				var pts []string
				for _, s := range t.Samples {
					x := L + int(float64(W-L)*float64(s.T)/float64(maxT))
					y := T + H - int(float64(H)*float64(s.RSS)/float64(maxR))
					pts = append(pts, fmt.Sprintf("%d,%d", x, y))
				}
				op := "0.9"
				if ti > 0 {
					op = "0.35"
				}
				fmt.Fprintf(w, "<polyline fill=none stroke=%q stroke-width=2 stroke-dasharray=%q stroke-opacity=%s points=%q />\n", colors[c.Mode], dashes[c.Mode], op, strings.Join(pts, " "))
			}
			ly := T + 15 + 15*li
			fmt.Fprintf(w, "<line x1=%d x2=%d y1=%d y2=%d stroke=%q stroke-width=2 stroke-dasharray=%q /><text x=%d y=%d font-size=12>%s</text>\n",
				L+10, L+36, ly-4, ly-4, colors[c.Mode], dashes[c.Mode], L+42, ly, html.EscapeString(c.ID()))
		}
		fmt.Fprintln(w, "</svg>")
	}
	fmt.Fprintln(w, "</body>")
}
