package flags

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	lflags "github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// recordFlags are serve's --record and what its log keeps.
type recordFlags struct {
	path  string
	force bool
	keep  reqlog.Options
}

func (r *recordFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.path, "record", "", "log every REST request to this `file` as it arrives (time, method, target, headers, body, status), for load --replay (nethttp engine; 0600, never over a file without --force; secrets redacted, KV and large bodies kept out; docs/replay.md)")
	fs.BoolVar(&r.force, "force", false, "--record: replace an existing file")
	fs.BoolVar(&r.keep.Secrets, "record-secrets", false, "--record: keep the values of Authorization, Cookie, tokens and other secret headers and query parameters (default: REDACTED; docs/replay.md lists them)")
	fs.BoolVar(&r.keep.Bodies, "record-bodies", false, "--record: keep the bodies of /kv/ requests and those over 64 KiB (default: kept out, their length noted)")
}

// open opens serve --record's file; done flushes and closes it after the
// server shut down, and says on w what the log kept out.
func (r *recordFlags) open(fs *pflag.FlagSet, stderr io.Writer) (lw *reqlog.Writer, done func() error, err error) {
	if r.path == "" {
		for _, n := range []string{"force", "record-secrets", "record-bodies"} {
			if fs.Changed(n) {
				return nil, nil, lflags.Usagef("--%s applies to --record", n)
			}
		}
		return nil, func() error { return nil }, nil
	}
	f, err := lflags.CreateRecord(r.path, r.force)
	if err != nil {
		return nil, nil, lflags.Usagef("--record: %v", err)
	}
	lw = reqlog.NewWriter(f, r.keep)
	stopFlush := lw.FlushEvery(reqlog.FlushInterval)
	return lw, func() error {
		stopFlush()
		err := lw.Flush()
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--record: %w", cerr)
		}
		fmt.Fprintf(stderr, "serve: --record: %s\n", lflags.RecordLine(r.path, lw.Stats()))
		return err
	}, nil
}
