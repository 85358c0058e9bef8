package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
)

//go:embed html.tmpl
var htmlSource string

var htmlTmpl = template.Must(template.New("report").Parse(htmlSource))

// WriteHTML renders report.html: one self-contained file (inline CSS and
// SVG, no script, nothing fetched) with the plots first and the same
// tables as the Markdown below them, so it can be mailed or archived
// next to results.json and still open years later.
func WriteHTML(w io.Writer, rep *Report) error {
	r := rep.Results
	d := htmlData{
		Title: r.Title, Quick: r.Quick, Warnings: allWarnings(rep),
		Meta: fmt.Sprintf("Study %s · %s · %s · %s · seed %d", r.Study,
			r.Start.UTC().Format("2006-01-02 15:04 MST"), r.End.Sub(r.Start).Round(time.Second), trialsLine(rep), r.Seed),
		Env: envRows(r),
		Note: fmt.Sprintf("%s "+
			"“vs base” compares with the first row (Mann-Whitney U test); ~ means no significant difference at α = %v. "+
			"Green: significantly better than the baseline; red: significantly worse.", spreadNote(), Alpha),
	}
	if slices.ContainsFunc(rep.Groups, hasOpTable) {
		d.Note += " " + opNote()
	}
	if d.Title == "" {
		d.Title = "wirebench study " + r.Study
	}
	for _, g := range rep.Groups {
		_, _, _, won := g.Winner("rps")
		var ops *htmlTable
		if hasOpTable(g) {
			t := htmlTableOf(opTable(g))
			ops = &t
		}
		d.Groups = append(d.Groups, htmlGroup{
			Ops:        ops,
			Name:       g.Name,
			Throughput: template.HTML(throughputPlot(g)),
			Latency:    template.HTML(latencyPlot(g)),
			Bytes:      template.HTML(bytesPlot(g)),
			RSS:        template.HTML(rssPlot(g)),
			Table:      htmlTableOf(groupTable(g)),
			Winner:     winnerLine(g), Won: won,
		})
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
	if err := htmlTmpl.Execute(w, d); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	return nil
}

type htmlData struct {
	Title, Meta, Note string
	PayloadNote       string
	Quick             bool
	Env               [][2]string
	Groups            []htmlGroup
	Payloads          []htmlPayload
	Warnings          []string
}

type htmlGroup struct {
	Name                       string
	Throughput, Latency, Bytes template.HTML
	RSS                        template.HTML
	Table                      htmlTable
	Ops                        *htmlTable // nil without a per-operation table
	Winner                     string
	Won                        bool
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
			cells = append(cells, htmlCell{Text: c, Class: strings.Join(class, " ")})
		}
		hr := htmlRow{Cells: cells}
		if t.RowGroupStart[i] && i > 0 {
			hr.Class = "first"
		}
		ht.Rows = append(ht.Rows, hr)
	}
	return ht
}
