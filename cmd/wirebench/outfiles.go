package main

import (
	"fmt"
	"io"

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

// outFlags are load's output flags beside --out. They register on the
// standard library's flag set or pflag's alike (both have these two
// methods), so the hook in load.go stays two lines whatever parses the
// flags.
type outFlags struct {
	hdrOut string
	force  *bool // the run's own (a --record log's too)
}

type flagAdder interface {
	StringVar(p *string, name, value, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}

func (o *outFlags) register(fs flagAdder, force *bool) {
	o.force = force
	fs.StringVar(&o.hdrOut, "hdr-out", "", "write the latency histogram to this `file` in the HdrHistogram log format (ns)")
	fs.BoolVar(force, "force", false, "replace existing --out and --hdr-out files")
}

// check refuses, before the run, output files that exist (without --force).
func (o *outFlags) check(out string) error {
	if out == "-" {
		out = "" // stdout
	}
	for _, path := range []string{out, o.hdrOut} {
		if err := checkNewOut(path, *o.force); err != nil {
			return err
		}
	}
	return nil
}

// write writes a load run's --out result and --hdr-out log, each whole or
// not at all (a temporary file renamed into place), so an interrupted run
// leaves the previous file intact.
func (o *outFlags) write(env *cliEnv, out string, res *results.Load) error {
	if out == "-" {
		if err := res.WriteJSONLine(env.stdout); err != nil {
			return err
		}
	} else if out != "" {
		if err := results.WriteFile(out, *o.force, res.WriteJSON); err != nil {
			return err
		}
	}
	if o.hdrOut != "" {
		return results.WriteFile(o.hdrOut, *o.force, func(w io.Writer) error { return results.WriteHdrLog(w, res) })
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
