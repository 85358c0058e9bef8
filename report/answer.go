package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// A study's question has a unit: "is TOON cheaper to serve?" is asked in
// server CPU per request, "is it faster?" in req/s. The study names it
// (results.Answer), and every finding, the main table's comparison and
// the one-line answer speak in it. Two cases override the study: a
// group that measured capacity answers in capacity (the most load within
// the SLO is the better answer to any cost or speed question), and a
// group of in-browser cells answers in latency, because a page's req/s
// moves in whole batches (steps of 33.3 at 50 per batch) and compares as
// "+0.0% [+0.0…+0.0%]".

// capacityKey is the metric of a capacity search's answer, present in a
// cell only when the study measured capacity (report/capacity.go).
const capacityKey = "capacity"

// browserMetric answers for in-browser groups: latency as the page timed it.
const browserMetric = "lat_p50"

// answerMetric is the metric g's findings and main table compare on.
func answerMetric(r *results.Study, g Group) string {
	switch {
	case groupHas(g, capacityKey) && mixedQuotas(g) && groupHas(g, perCoreKey):
		return perCoreKey // capacities under different quotas compare only per core
	case groupHas(g, capacityKey):
		return capacityKey
	case groupInBrowser(g) && groupHas(g, browserMetric):
		return browserMetric
	}
	if k := r.Answer.Metric; k != "" {
		if _, ok := MetricByKey(k); ok && groupHas(g, k) {
			return k
		}
	}
	return headlineMetric
}

// groupInBrowser reports whether every cell of g ran in a browser.
func groupInBrowser(g Group) bool {
	return len(g.Cells) > 0 && !slices.ContainsFunc(g.Cells, func(c CellSummary) bool { return !c.InBrowser })
}

// answerKey is the group's answer metric, req/s for a Group built by hand.
func (g Group) answerKey() string {
	if g.Answer == "" {
		return headlineMetric
	}
	return g.Answer
}

// answerUnits are the metrics' names in a sentence: "0.50× the server
// CPU per request of json".
var answerUnits = map[string]string{
	"rps": "req/s", "server_cpu_per_req": "server CPU per request", "lat_p50": "p50 latency", "lat_p99": "p99 latency",
	"capacity": "capacity", "capacity_per_core": "capacity per core", "peak_rss": "peak RSS",
	"recv_wire_per_req": "bytes per request", "client_cpu_per_req": "client CPU per request",
}

func answerUnit(key string) string {
	if u, ok := answerUnits[key]; ok {
		return u
	}
	m, _ := MetricByKey(key)
	return m.Label
}

// answerLine is the study's answer in one line, before any table: for a
// yes/no question the named cell against its baseline ("Yes: 0.50× the
// server CPU per request of json [0.45…0.56] (p=0.008, 5 trials)"),
// otherwise every cell's verdict in a few words. It claims no more than
// the test does: below significance it says "no significant difference"
// or "cannot tell with N trials", never a ratio as if it were a result.
// "" when nothing was compared.
func answerLine(rep *Report) string {
	var parts []string
	for _, a := range linkAnswers(rep) {
		parts = append(parts, "On "+a.link+": "+a.line)
	}
	if parts != nil {
		return strings.Join(parts, " ")
	}
	return oneAnswerLine(rep)
}

// linkAnswer is the answer on one link of a study's links axis.
type linkAnswer struct{ link, line string }

// linkAnswers answers the question once per link of a study's links
// axis, from that link's groups alone (named as without links), in the
// links' order; nil without a links axis.
func linkAnswers(rep *Report) []linkAnswer {
	var links []string
	for _, g := range rep.Groups {
		if g.Link != "" && !slices.Contains(links, g.Link) {
			links = append(links, g.Link)
		}
	}
	var out []linkAnswer
	for _, l := range links {
		sub := *rep
		sub.Groups = nil
		for _, g := range rep.Groups {
			if g.Link == l {
				if len(g.Cells) > 0 {
					g.Name = g.Cells[0].Cell.Group
				}
				sub.Groups = append(sub.Groups, g)
			}
		}
		if a := oneAnswerLine(&sub); a != "" {
			out = append(out, linkAnswer{l, a})
		}
	}
	return out
}

// oneAnswerLine is answerLine for the groups of rep as they are.
func oneAnswerLine(rep *Report) string {
	r := rep.Results
	if r.SingleRun || !r.HasLoad() {
		return ""
	}
	if r.Answer.Cell != "" {
		if l := cellAnswer(rep, r.Answer.Cell); l != "" {
			return l
		}
	}
	return summaryAnswer(rep)
}

// cellAnswer answers a yes/no question from cell label's comparison in
// every group that has it.
func cellAnswer(rep *Report, label string) string {
	var parts []string
	var groups []string
	for _, g := range rep.Groups {
		i := slices.IndexFunc(g.Cells, func(c CellSummary) bool { return c.Cell.Label == label })
		if i <= 0 {
			continue
		}
		yes := Better
		if rep.Results.Answer.Yes == "worse" {
			yes = Worse
		}
		if !yesNo(rep.Results.Question) {
			yes = NoData // no yes or no before the answer
		}
		parts = append(parts, oneAnswer(g, i, yes))
		groups = append(groups, g.Name)
	}
	if len(parts) == 1 {
		return strings.ToUpper(parts[0][:1]) + parts[0][1:] + "." // "Cannot tell …"
	}
	for k := range parts {
		parts[k] = groups[k] + ": " + parts[k]
	}
	return strings.Join(parts, "; ") + "."
}

// yesNo reports whether a question is answered yes or no ("Is …?",
// "Does …?"), so that its answer may start with one.
func yesNo(q string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	switch strings.ToLower(first) {
	case "is", "are", "does", "do", "can", "will", "has", "have", "should":
		return true
	}
	return false
}

// oneAnswer words cell i of g against the baseline on the group's answer
// metric, as a ratio (the question's own unit: "0.50× the server CPU"),
// starting with "Yes" when the verdict is yes (Better or Worse), "No"
// when it is the other or no significant difference; yes = NoData for a
// question that is not a yes/no one.
func oneAnswer(g Group, i int, yes Verdict) string {
	yn := yes == Better || yes == Worse
	key := g.answerKey()
	unit, base := answerUnit(key), g.Cells[0].Cell.Label
	m, _ := MetricByKey(key)
	d, ok := g.VsBaseline(i, key)
	if !ok || d.Old.Center <= 0 {
		return fmt.Sprintf("cannot tell: no %s to compare", unit)
	}
	v, _ := judge(d, unit, m.HigherIsBetter)
	ratio := fmt.Sprintf("%s× the %s of %s", ratioOf(d.New.Center/d.Old.Center), unit, base)
	rng := ratioRange(d)
	switch v {
	case Undecided:
		return fmt.Sprintf("%s: %s observed%s", cannotDecide(d, "cannot tell", " per cell"), ratio, rng)
	case Same:
		s := fmt.Sprintf("no significant difference in %s from %s (p=%.3f, %s)", unit, base, d.P, trialCount(d))
		if yn {
			s = "No: " + s
		}
		return s
	case NoData:
		return fmt.Sprintf("cannot tell: no %s to compare", unit)
	}
	s := fmt.Sprintf("%s%s (p=%.3f, %s)", ratio, rng, d.P, trialCount(d))
	if yn {
		if v == yes {
			s = "Yes: " + s
		} else {
			s = "No: " + s
		}
	}
	return s
}

// ratioRange is " [0.45…0.56]": the ratio's range given both cells'
// intervals (or trial ranges, when too few for intervals).
func ratioRange(d stats.Delta) string {
	lo, hi := d.PctRange()
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return ""
	}
	return fmt.Sprintf(" [%s…%s]", ratioOf(1+lo/100), ratioOf(1+hi/100))
}

func ratioOf(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// summaryAnswer sums up every comparison by verdict: "In server CPU per
// request against each group's baseline: better: toon (0.50×); no
// significant difference: protobuf; cannot tell with 2 trials: …".
func summaryAnswer(rep *Report) string {
	type item struct{ name, ratio string }
	by := map[Verdict][]item{}
	var units []string
	trials := map[string]bool{}
	multi := len(rep.Groups) > 1
	for _, g := range rep.Groups {
		if len(g.Cells) < 2 {
			continue
		}
		key := g.answerKey()
		u := answerUnit(key)
		switch {
		case key == browserMetric && groupInBrowser(g):
			u += " (in-browser groups)"
		case key == capacityKey || key == perCoreKey:
			u += " (where measured)"
		}
		if !slices.Contains(units, u) {
			units = append(units, u)
		}
		m, _ := MetricByKey(key)
		for i := 1; i < len(g.Cells); i++ {
			name := g.Cells[i].Cell.Label
			if multi {
				name += " in " + g.Name
			}
			d, ok := g.VsBaseline(i, key)
			if !ok || d.Old.Center <= 0 {
				by[NoData] = append(by[NoData], item{name: name})
				continue
			}
			v, _ := judge(d, "", m.HigherIsBetter)
			it := item{name: name}
			if v == Better || v == Worse {
				it.ratio = ratioOf(d.New.Center/d.Old.Center) + "×"
			}
			if v == Undecided && isCut(d) {
				v = cutVerdict
			} else if v == Undecided {
				trials[trialCount(d)] = true
			}
			by[v] = append(by[v], it)
		}
	}
	if len(units) == 0 {
		return ""
	}
	list := func(its []item) string {
		if len(its) > 4 {
			return fmt.Sprintf("%d cells", len(its))
		}
		var s []string
		for _, it := range its {
			if it.ratio != "" {
				s = append(s, fmt.Sprintf("%s (%s)", it.name, it.ratio))
			} else {
				s = append(s, it.name)
			}
		}
		return strings.Join(s, ", ")
	}
	var parts []string
	for _, v := range []struct {
		v    Verdict
		word string
	}{{Better, "better"}, {Worse, "worse"}, {Same, "no significant difference"}, {Undecided, "cannot tell"}, {cutVerdict, "not decided (the study was interrupted)"}, {NoData, "nothing to compare"}} {
		its := by[v.v]
		if len(its) == 0 {
			continue
		}
		word := v.word
		if v.v == Undecided {
			word = fmt.Sprintf("cannot tell with %s (need %d+ per cell)", strings.Join(slices.Sorted(maps.Keys(trials)), " or "), minTrials())
		}
		parts = append(parts, word+": "+list(its))
	}
	return fmt.Sprintf("In %s, against each group's baseline: %s.", strings.Join(units, ", "), strings.Join(parts, "; "))
}

// answerNote explains the main table's first column when a group answers
// in something other than req/s.
func answerNote(rep *Report) string {
	var notes []string
	for _, g := range rep.Groups {
		k := g.answerKey()
		if k == headlineMetric || len(g.Cells) < 2 {
			continue
		}
		n := fmt.Sprintf("the study's question is asked in %s, so the main table leads with it and compares on it", answerUnit(k))
		switch {
		case k == browserMetric && groupInBrowser(g):
			n = "in-browser cells are compared on p50 latency as the page timed it: a page's requests complete in whole batches, so their req/s moves in steps and is shown, not compared"
		case k == capacityKey:
			continue // capacity explains itself
		}
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	s := strings.Join(notes, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + ". "
}

// compares reports whether g's tables compare metric key with the
// baseline: the answer's metric and throughput and tail (vsMetrics), but
// never an in-browser group's req/s, which moves in whole batches.
func (g Group) compares(key string) bool {
	if key == headlineMetric && groupInBrowser(g) {
		return false
	}
	return vsMetrics[key] || key == g.answerKey()
}

// answerCols are report.csv's last columns: each cell against its
// baseline in the metric its group answers in (Group.Answer), so a
// script reads the question's verdict without knowing the study.
var answerCols = []string{"answer_metric", "answer_vs_base_pct", "answer_vs_base_p", "answer_vs_base_verdict"}

// putAnswer fills answerCols of cell i of g.
func putAnswer(row []string, g Group, i int) {
	key := g.answerKey()
	m, _ := MetricByKey(key)
	row[0] = m.CSV
	if d, ok := g.VsBaseline(i, key); ok {
		v, _ := judge(d, "", m.HigherIsBetter)
		copy(row[1:], []string{num(d.Pct()), num(d.P), verdictName[v]})
	}
}
