package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flow"
	"github.com/wirebench/wirebench/load/spec"
)

// flowFlags are --flow and --data-file (load and capacity).
type flowFlags struct {
	file, data string
}

func (f *flowFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "flow", "", "run the multi-step flow in this YAML `file` (docs/flows.md); URL is the base URL its steps' paths are below")
	fs.StringVar(&f.data, "data-file", "", "--flow: `file` feeding the flow's variables, a row per iteration: CSV with a header line, or JSON lines; --grpc METHOD: requests as JSON lines, used in turn (each a --data template)")
}

// check refuses the flags a flow does not take: it names its own
// requests, checks and body.
func (f *flowFlags) check(fs *pflag.FlagSet) error {
	if f.file == "" {
		if f.data != "" && !(fs.Changed("grpc") && isMethod(fs.Lookup("grpc").Value.String())) {
			return usagef("--data-file feeds a --flow's variables (or a --grpc method's requests): give --flow")
		}
		return nil
	}
	for _, name := range []string{"scenario", "stream", "browser", "replay", "grpc", "method", "body", "expect-status", "expect-body-contains", "compression", "0rtt", "record"} {
		if fl := fs.Lookup(name); fl != nil && fl.Changed {
			return usagef("--%s does not apply to --flow: the flow file names its requests, headers, bodies and checks", name)
		}
	}
	return nil
}

// flowError is a flow or data file that cannot run: one line naming the
// file and line, exit 2, before any load.
func flowError(err error) error {
	if errors.Is(err, flow.ErrFlow) {
		return exitError{2, err}
	}
	return usagef("%s", cliMessage(err))
}

// flowClient reads --flow (and --data-file) for the base URL: exit 2
// naming the file and line when it cannot run.
func (f *loadFlags) flowClient(c *spec.Client, url string) (func(error) error, error) {
	fl, err := flow.Load(f.flow.file, f.flow.data)
	if err != nil {
		return nil, flowError(err)
	}
	if err := fl.AddHeaders(f.hdrs); err != nil { // -H: on every step
		return nil, usagef("-H: %s", cliMessage(err))
	}
	f.raw.URL, f.raw.Timeout = url, f.o.Timeout
	c.Flow, c.FlowConn = fl, flow.Options{Options: f.raw.Options, Format: f.sc.Format}
	return flowError, nil
}
