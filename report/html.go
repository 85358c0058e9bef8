package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
)

//go:embed html.tmpl
var htmlSource string

// Built on first use: a package-level one would be live heap in every
// process linking the package, the server's too (issue 17).
var htmlTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("report").Parse(htmlSource)) })

// WriteHTML renders report.html: one self-contained file (inline CSS and
// SVG, no script, nothing fetched) with the plots first and the same
// tables as the Markdown below them, so it can be mailed or archived
// next to results.json and still open years later.
func WriteHTML(w io.Writer, rep *Report) error {
	w = printableWriter(w)
	r := rep.Results
	d := htmlData{
		Title: title(r), Warnings: allWarnings(rep), Meta: strings.ReplaceAll(metaLine(rep), "`", ""),
		Env: envRows(r), Note: tableNote(rep), Question: question(r), Baseline: baselines(rep),
		Notes: r.Notes, Verdict: verdict(rep), Answer: answerLine(rep),
	}
	if r.Quick && r.HasLoad() {
		d.Quick = trialsLine(r)
	}
	if r.SingleRun && len(rep.Groups) == 1 && len(rep.Groups[0].Cells) == 1 {
		g := rep.Groups[0]
		d.Single = fmt.Sprintf("%s (%s). %s", singleRunLine(g.Cells[0]), g.Load, singleNote(r))
	}
	for _, g := range rep.Groups {
		for _, f := range g.Findings() {
			t := f.Text
			if len(rep.Groups) > 1 {
				t = g.Name + ": " + t
			}
			d.Findings = append(d.Findings, htmlFinding{Text: t, Class: verdictClass[f.Verdict]})
		}
		d.Groups = append(d.Groups, htmlGroupOf(rep, g))
	}
	sets := payloadSets(r.Payloads)
	if len(sets) > 0 {
		d.PayloadNote = payloadNote(sets)
	}
	for _, s := range sets {
		n := payloadBarN(s)
		d.Payloads = append(d.Payloads, htmlPayload{Title: s.Dataset, Plot: template.HTML(payloadPlot(s)),
			BarsTitle: fmt.Sprintf("%s: body bytes at %d items", s.Dataset, n), Bars: template.HTML(payloadBars(s, n)),
			Table: htmlTableOf(payloadTable(s))})
	}
	if len(r.Links) > 0 {
		d.LinksNote, d.Links = linksNote(r), htmlTableOf(linksTable(r))
	}
	if p := r.PayloadLab; p != nil {
		d.Lab = &htmlLab{Input: labInputLine(p), Note: labSizeNote, Plot: template.HTML(labPlot(p)),
			Sizes: htmlTableOf(labSizeTable(p)), RoundTrip: htmlTableOf(labRoundTripTable(p)),
			How: labHowLines(p), Shape: labShapeLines(p)}
		if own := labOwnTable(p); len(own.Rows) > 0 {
			d.Lab.Own, d.Lab.OwnNote, d.Lab.OwnLines = htmlTableOf(own), labOwnNote, labOwnLines(p)
		}
		for _, l := range p.LeftOut {
			d.Lab.LeftOut = append(d.Lab.LeftOut, l.Format+" left out: "+l.Reason)
		}
	}
	if err := htmlTmpl().Execute(w, d); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	return nil
}

var verdictClass = map[Verdict]string{Better: "better", Worse: "worse", Same: "same", Undecided: "undecided", NoData: "same"}

// htmlGroupOf lays out one group: the plots that have something to show
// (a single run has one cell: its latency curve, no bars to compare),
// the main table, and the rest collapsed.
func htmlGroupOf(rep *Report, g Group) htmlGroup {
	hg := htmlGroup{Name: g.Name, Load: g.Load, Main: htmlTableOf(mainTable(g)), All: htmlTableOf(groupTable(g))}
	if groupHasCapacity(g) {
		hg.Plots = append(hg.Plots, htmlPlot{"Latency against offered rate", template.HTML(capacityPlot(g))})
		t := htmlTableOf(capacityTable(g))
		hg.Capacity = &t
		if rep.Results.SingleRun && len(g.Cells) == 1 && len(g.Cells[0].Capacity) == 1 {
			st := htmlTableOf(stepsTable(g.Cells[0].Capacity[0]))
			hg.Steps = &st
		}
	}
	if len(g.Cells) > 1 {
		hg.Baseline = g.Cells[0].Cell.Label
		hg.Plots = append(hg.Plots, htmlPlot{barPlotTitle(g.answerKey()), template.HTML(barPlot(g, g.answerKey()))})
	}
	hg.Plots = append(hg.Plots, htmlPlot{"Latency by percentile", template.HTML(latencyPlot(g))})
	if len(g.Cells) > 1 {
		hg.Plots = append(hg.Plots, htmlPlot{"Bytes per request", template.HTML(bytesPlot(g))})
	}
	if groupHas(g, "peak_rss") {
		hg.Plots = append(hg.Plots, htmlPlot{"Server memory (RSS)", template.HTML(rssPlot(g))})
	}
	if res, ok := singleRun(rep.Results); ok && len(g.Cells) == 1 {
		t := htmlTableOf(latencyDistribution(res))
		hg.Dist = &t
		if st := slowestTable(res); len(st.Rows) > 0 {
			t := htmlTableOf(st)
			hg.Slowest = &t
		}
	}
	if hasOpTable(g) {
		t := htmlTableOf(groupOpTable(g, rep.Results.SingleRun))
		hg.Ops = &t
	}
	if st := groupSlowestTable(g); !rep.Results.SingleRun && len(st.Rows) > 0 {
		t := htmlTableOf(st)
		hg.Slowest = &t
	}
	return hg
}

type htmlData struct {
	Title, Meta, Note  string
	Question, Baseline string
	Answer             string // the question's answer in one line (answer.go)
	Single             string
	Verdict            []string // a single run's thresholds and interruption, shown first
	Quick              string   // what a quick run ran; empty for a full run
	PayloadNote        string
	Findings           []htmlFinding
	Env                [][2]string
	Groups             []htmlGroup
	Payloads           []htmlPayload
	Lab                *htmlLab
	LinksNote          string // the links the cells ran across, as in the Markdown's Links
	Links              htmlTable
	Warnings           []string
	Notes              []string // the study's own Markdown sections, shown as written
}

type htmlFinding struct{ Text, Class string }

type htmlPlot struct {
	Title string
	SVG   template.HTML
}

type htmlGroup struct {
	Name, Load, Baseline string
	Plots                []htmlPlot
	Main, All            htmlTable
	Dist                 *htmlTable // a single run's latency distribution
	Slowest              *htmlTable // a single run's slowest requests, by name
	Capacity, Steps      *htmlTable // capacity searches; a single search's steps
	Ops                  *htmlTable // nil without a per-operation table
}

// htmlLab is a payload lab run's section.
type htmlLab struct {
	Input, Note         string
	Plot                template.HTML
	Sizes, RoundTrip    htmlTable
	How, LeftOut, Shape []string
	// Own is the codec cost against each library's own, if measured.
	Own      htmlTable
	OwnNote  string
	OwnLines []string
}

type htmlPayload struct {
	Title, BarsTitle string
	Plot, Bars       template.HTML
	Table            htmlTable
}

type htmlTable struct {
	Groups []headerGroup
	Header []string
	Rows   []htmlRow
}

type htmlRow struct {
	Class string // "first" starts a group of rows
	Cells []htmlCell
}

type htmlCell struct {
	Text, Class string
	// Spread is the "± 3.6%" or "[17.96–19.07k]" after a median, shown
	// on a line of its own in small type so tables stay narrow.
	Spread string
}

// splitSpread splits "18.50k [17.96–19.07k]" into the median and its
// spread; other text stays whole.
func splitSpread(c string) (text, spread string) {
	for _, sep := range []string{" [", " ± "} {
		if i := strings.Index(c, sep); i > 0 && !strings.HasPrefix(c, "?") {
			return c[:i], strings.TrimSpace(c[i:])
		}
	}
	return c, ""
}

func htmlTableOf(t table) htmlTable {
	ht := htmlTable{Header: t.Header, Groups: t.Groups}
	if t.Short != nil {
		ht.Header = t.Short
	}
	for i, row := range t.Rows {
		var cells []htmlCell
		for j, c := range row {
			var class []string
			switch t.Sig[[2]int{i, j}] {
			case 1:
				class = append(class, "better")
			case -1:
				class = append(class, "worse")
			}
			if j > 0 && j < t.LabelCols {
				class = append(class, "name")
			}
			if strings.HasPrefix(c, "~") {
				class = append(class, "same")
			}
			if strings.HasPrefix(c, "? ") {
				class = append(class, "undecided")
			}
			text, spread := splitSpread(c)
			cells = append(cells, htmlCell{Text: text, Spread: spread, Class: strings.Join(class, " ")})
		}
		hr := htmlRow{Cells: cells}
		if t.RowGroupStart[i] && i > 0 {
			hr.Class = "first"
		}
		ht.Rows = append(ht.Rows, hr)
	}
	return ht
}
