package study

import (
	"fmt"

	"github.com/wirebench/wirebench/bulk"
)

// Check refuses bulk-upsert options that cannot run, before anything
// starts: a format bulk has no codec for, a record count out of range,
// a port range too small for its server's two ports. Its messages name
// the options as wirebench study's flags do.
func (o BulkOptions) Check() error {
	for _, f := range o.Formats {
		if bulk.MediaType(f) == "" {
			return fmt.Errorf("%w: --formats: %q is not one of %v", ErrDefinition, f, bulk.Formats())
		}
	}
	if o.Records < 0 || o.Records > bulk.MaxGenerate {
		return fmt.Errorf("%w: --records: want 1..%d", ErrDefinition, bulk.MaxGenerate)
	}
	if n := o.Ports.Hi - o.Ports.Lo + 1; o.Ports.Lo > 0 && n < 2 {
		return fmt.Errorf("%w: --ports %s holds %d port; bulk-upsert's server needs 2", ErrDefinition, o.Ports, n)
	}
	return nil
}

// Unsuccessful counts the cells of r without a successful trial.
func (r *BulkResults) Unsuccessful() int {
	failed := 0
	for _, c := range r.Cells {
		ok := false
		for _, t := range c.Trials {
			ok = ok || t.Error == ""
		}
		if !ok {
			failed++
		}
	}
	return failed
}
