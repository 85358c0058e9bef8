package main

import (
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/results"
)

// redactConfig keeps the credentials a run was given (-H "Authorization:
// …", ?api_key=…, --auth-token …) out of its result file, as recordings
// keep them out: results are shared and committed beside the gate's
// baselines. The command line stays readable (rule 8) with REDACTED in
// their place.
func redactConfig(c *results.Config) {
	c.Args, _ = reqlog.RedactArgs(c.Args)
	c.URL, _ = reqlog.RedactTarget(c.URL)
	for _, o := range c.Clients() {
		o.Rewrite(func(b []byte) []byte {
			r, _ := reqlog.RedactOptions(b)
			return r
		})
	}
}
