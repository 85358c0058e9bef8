package study

import (
	"errors"
	"fmt"
	"regexp"
)

// ErrNoCells refuses a cell selection that matches none of the study's.
var ErrNoCells = errors.New("study: --cells matches no cell")

// SelectCells keeps the cells of def whose "group / label" matches re
// (wirebench study --cells): a short run of the cells a question needs,
// e.g. study kv's skewed everysec and always cells, with their own
// baselines. The report is the study's, over the cells that ran.
func SelectCells(def Definition, re *regexp.Regexp) (Definition, error) {
	var kept []Cell
	for _, c := range def.Cells {
		if re.MatchString(c.Group + " / " + c.Label) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return def, fmt.Errorf("%w in study %s: %q (cells are named \"group / label\", e.g. %q)", ErrNoCells, def.Name, re.String(), cellName(def))
	}
	def.Cells = kept
	return def, nil
}

func cellName(def Definition) string {
	if len(def.Cells) == 0 {
		return ""
	}
	return def.Cells[0].Group + " / " + def.Cells[0].Label
}
