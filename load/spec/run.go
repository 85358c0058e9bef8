package spec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Run runs the client once (load.Run under m.Options), closes it, and
// finishes the result as every caller of a single run needs it:
//   - a run its context cut short is marked interrupted (Stop, with the
//     signal's name when the context's cause has a SignalName() string
//     method) and warns that its figures cover only the window measured;
//   - a scenario that could not be closed (a request log not written)
//     adds a warning;
//   - the result names its scenario, the options that made it (m.Config)
//     and the machine it ran on (Env).
//
// Its error is load.Run's, and then there is no result.
func (m *Made) Run(ctx context.Context) (*results.Load, error) {
	res, err := load.Run(ctx, m.Options, m.Scenario)
	closeErr := m.Close()
	if err != nil {
		return nil, err
	}
	if cause := context.Cause(ctx); cause != nil {
		sig := signalName(cause)
		by := cmp.Or(sig, cause.Error())
		res.Stop = &results.Stop{Interrupted: true, Signal: sig}
		res.Warnings = append(res.Warnings, fmt.Sprintf("interrupted by %s after %v%s: the figures cover only that window",
			by, res.Measured().Round(time.Millisecond), Planned(m.Options)))
	}
	if closeErr != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("closing the scenario: %v", closeErr))
	}
	res.Scenario = m.Config.Scenario
	res.Config = m.Config
	res.Env = measure.Environment(context.WithoutCancel(ctx))
	return res, nil
}

// signalName is the signal a context's cause names ("SIGINT"), or "".
func signalName(cause error) string {
	var s interface{ SignalName() string }
	if errors.As(cause, &s) {
		return s.SignalName()
	}
	return ""
}

// Planned is " of the planned 30s" (or N requests) for a run cut short.
func Planned(o load.Options) string {
	switch {
	case o.Duration > 0:
		return " of the planned " + o.Duration.String()
	case o.Requests > 0:
		return fmt.Sprintf(" (planned: %d requests)", o.Requests)
	}
	return ""
}
