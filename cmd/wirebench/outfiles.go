package main

import (
	"fmt"
	"io"

	"github.com/wirebench/wirebench/load"
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

// writeLoadOutputs writes a load run's --out result and --hdr-out log,
// each whole or not at all (a temporary file renamed into place), so an
// interrupted run leaves the previous file intact.
func writeLoadOutputs(out, hdrOut string, force bool, res *load.Result) error {
	if out != "" {
		if err := results.WriteFile(out, force, res.WriteJSON); err != nil {
			return err
		}
	}
	if hdrOut != "" {
		return results.WriteFile(hdrOut, force, func(w io.Writer) error { return results.WriteHdrLog(w, res) })
	}
	return nil
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
