package study

import (
	"slices"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
	yaml "go.yaml.in/yaml/v3"
)

// answerSpec is a study file's answer: the metric its question is asked
// in and, for a yes/no question, the cell that answers it.
//
//	answer: {metric: rps, cell: new, yes: worse}
type answerSpec struct {
	Metric string `yaml:"metric"`
	Cell   string `yaml:"cell"`
	Yes    string `yaml:"yes"`
}

// answer checks a study file's answer against the report's metrics and
// the file's cells: a misspelt metric would otherwise answer in req/s
// without a word.
func (p *parser) answer(doc *yaml.Node, a *answerSpec, cells map[string]int) results.Answer {
	if a == nil {
		return results.Answer{}
	}
	line := lineOf(doc, "answer")
	if a.Metric != "" {
		if _, ok := report.MetricByKey(a.Metric); !ok {
			var keys []string
			for _, m := range report.Metrics {
				keys = append(keys, m.Key)
			}
			p.errorf(line, "answer: metric %q is not a report metric%s", a.Metric, suggest(a.Metric, keys))
		}
	}
	if a.Cell != "" {
		if _, ok := cells[a.Cell]; !ok {
			var names []string
			for n := range cells {
				names = append(names, n)
			}
			slices.Sort(names)
			p.errorf(line, "answer: no cell is named %q%s", a.Cell, suggest(a.Cell, names))
		}
	}
	if a.Yes != "" && a.Yes != "better" && a.Yes != "worse" {
		p.errorf(line, "answer: yes: want better or worse (the verdict of the cell against its baseline that answers yes), got %q", a.Yes)
	}
	return results.Answer{Metric: a.Metric, Cell: a.Cell, Yes: a.Yes}
}
