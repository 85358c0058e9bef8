package study

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Goals of issue 14, checked by the report at 1M records.
const (
	bulkGoalRSS   = 20 << 20 // streaming peak RSS, every format
	bulkGoalRatio = 0.7      // streaming rows/s against sqlite3 .import
)

// WriteBulk writes results.json, report.md, report.html (RSS over time,
// one plot per format) and rss.csv into dir.
func WriteBulk(dir string, r *BulkResults) error {
	js, err := json.MarshalIndent(r, "", " ")
	if err != nil {
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
	for name, b := range map[string]string{"results.json": string(js) + "\n", "report.md": md.String(), "report.html": page.String(), "rss.csv": csv.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cellStats are a cell's medians over its successful trials.
type cellStats struct {
	ok, n            int
	wall, cpu        time.Duration
	rowsPerS         float64
	peak, wire, body int64
	minWall, maxWall time.Duration
	maxPeak          int64
	verified         int
}

func statsOf(c *BulkCell) cellStats {
	var s cellStats
	var walls, cpus []time.Duration
	var rates []float64
	var peaks, wires, bodies []int64
	s.n = len(c.Trials)
	for _, t := range c.Trials {
		if t.Verified {
			s.verified++
		}
		if t.Error != "" {
			continue
		}
		s.ok++
		walls, cpus, rates = append(walls, t.Wall), append(cpus, t.ServerCPU), append(rates, t.RowsPerS)
		peaks = append(peaks, t.PeakRSS)
		if t.Upload != nil {
			wires, bodies = append(wires, t.Upload.WireSent+t.Upload.WireReceived), append(bodies, t.Upload.BodyBytes)
		}
	}
	if s.ok == 0 {
		return s
	}
	s.wall, s.cpu, s.rowsPerS = median(walls), median(cpus), median(rates)
	s.peak, s.minWall, s.maxWall, s.maxPeak = median(peaks), slices.Min(walls), slices.Max(walls), slices.Max(peaks)
	if len(wires) > 0 {
		s.wire, s.body = median(wires), median(bodies)
	}
	return s
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	n := len(ys)
	if n%2 == 1 {
		return ys[n/2]
	}
	return (ys[n/2-1] + ys[n/2]) / 2
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// BulkMarkdown renders the report.
func BulkMarkdown(w io.Writer, r *BulkResults) {
	fmt.Fprintf(w, "# %s\n\n**Question:** %s\n\n", r.Title, r.Question)
	fmt.Fprintf(w, "%d records per upload (%s), %d trials per cell, interleaved (seed %d); a fresh server and database per trial; "+
		"server on CPUs %v, client on %v. Machine: %s, %d CPUs, %s, Go %s; %s.\n\n",
		r.Records, r.Expected, r.Trials, r.Seed, r.Options["server_cpus"], r.Options["client_cpus"],
		r.Env.CPUModel, r.Env.NumCPU, r.Env.Kernel, r.Env.GoVersion, r.Start.UTC().Format("2006-01-02 15:04 MST"))
	var ref cellStats
	for _, c := range r.Cells {
		if c.Mode == ModeImport {
			ref = statsOf(c)
		}
	}
	fmt.Fprintln(w, "| cell | wall | rows/s | vs .import | server CPU | peak RSS (VmHWM) | body | on the wire | table checked |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, c := range r.Cells {
		s := statsOf(c)
		if s.ok == 0 {
			fmt.Fprintf(w, "| %s | failed | | | | | | | %d/%d |\n", c.ID(), s.verified, s.n)
			continue
		}
		vs, body, wire := "", "", ""
		if ref.ok > 0 && c.Mode != ModeImport {
			vs = fmt.Sprintf("%.2f×", s.rowsPerS/ref.rowsPerS)
		}
		if s.body > 0 {
			body, wire = mib(s.body), mib(s.wire)
		}
		fmt.Fprintf(w, "| %s | %.2f s (%.2f–%.2f) | %.0f | %s | %.2f s | %s (max %s) | %s | %s | %d/%d exact |\n",
			c.ID(), s.wall.Seconds(), s.minWall.Seconds(), s.maxWall.Seconds(), s.rowsPerS, vs, s.cpu.Seconds(),
			mib(s.peak), mib(s.maxPeak), body, wire, s.verified, s.n)
	}
	fmt.Fprintln(w, "\nMedians over the successful trials (wall time's range in brackets). \"vs .import\" is rows/s against "+
		"sqlite3 .import of the same rows as CSV into the same schema, on the same CPU: the physical limit. "+
		"\"table checked\": row count and checksum of the table equal the generator's.")
	fmt.Fprint(w, "\n## Goals (issue 14)\n\n")
	if r.Records < 1_000_000 {
		fmt.Fprintf(w, "Stated for 1M records; this run had %d, so they are indicative only.\n\n", r.Records)
	}
	for _, c := range r.Cells {
		s := statsOf(c)
		switch c.Mode {
		case ModeStream:
			rss := "FAIL"
			if s.ok > 0 && s.maxPeak <= bulkGoalRSS {
				rss = "pass"
			}
			ratio, speed := 0.0, "FAIL"
			if ref.ok > 0 && s.ok > 0 {
				ratio = s.rowsPerS / ref.rowsPerS
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
	if len(r.Warnings) > 0 {
		fmt.Fprint(w, "\n## Warnings\n\n")
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "- %s\n", x)
		}
	}
	fmt.Fprintln(w, "\nPeak RSS is the server's VmHWM (whole process: Go heap, SQLite's page cache and the binary's mapped pages); "+
		"RSS over time is in report.html and rss.csv, sampled every 25 ms from the server's own PID.")
}

// bulkHTML is the report with one SVG plot of RSS over time per format:
// streaming and buffered (first trial each) on the same axes.
func bulkHTML(w io.Writer, r *BulkResults, md string) {
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><body style=\"font-family:sans-serif;max-width:1000px;margin:auto\">\n", html.EscapeString(r.Title))
	fmt.Fprintf(w, "<pre style=\"white-space:pre-wrap\">%s</pre>\n", html.EscapeString(md))
	byFormat := map[string][]*BulkCell{}
	var order []string
	for _, c := range r.Cells {
		if _, ok := byFormat[c.Format]; !ok {
			order = append(order, c.Format)
		}
		byFormat[c.Format] = append(byFormat[c.Format], c)
	}
	colors := map[string]string{ModeStream: "#1f77b4", ModeBuffered: "#d62728", ModeImport: "#2ca02c"}
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
			fmt.Fprintf(w, "<line x1=%d x2=%d y1=%d y2=%d stroke=#eee /><text x=2 y=%d font-size=11>%s</text>\n", L, W, y, y, y+4, mib(maxR*int64(i)/4))
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
				fmt.Fprintf(w, "<polyline fill=none stroke=%q stroke-opacity=%s points=%q />\n", colors[c.Mode], op, strings.Join(pts, " "))
			}
			fmt.Fprintf(w, "<text x=%d y=%d font-size=12 fill=%q>%s</text>\n", L+10, T+15+15*li, colors[c.Mode], html.EscapeString(c.ID()))
		}
		fmt.Fprintln(w, "</svg>")
	}
	fmt.Fprintln(w, "</body>")
}
