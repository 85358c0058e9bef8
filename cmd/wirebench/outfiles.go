package main

import (
	"fmt"

	"github.com/wirebench/wirebench/results"
)

// checkNewOut refuses an output file that exists, before a run rather
// than after it: results are never replaced without --force.
func checkNewOut(path string, force bool) error {
	if path == "" {
		return nil
	}
	return results.CheckNew(path, force)
}

// cellsLine says what a study will run: "5 cells", or "sizes only" for a
// study that measures sizes and runs no load ("0 cells" said nothing).
func cellsLine(n int) string {
	switch n {
	case 0:
		return "sizes only"
	case 1:
		return "1 cell"
	}
	return fmt.Sprintf("%d cells", n)
}
