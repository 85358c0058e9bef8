package spec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/report"
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
//     and the machine it ran on (Env, without the git commit: the writer
//     of the result adds it, measure.Env.AddGit).
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
	res.Env = measure.Machine() // the git commit: added by whoever writes the result (Env.AddGit)
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

// RecordStats is what the request log the client wrote (raw mode's
// Record, a replay's Options.Record) holds and kept out; false without one.
func (m *Made) RecordStats() (reqlog.WriterStats, bool) {
	if m.record == nil {
		return reqlog.WriterStats{}, false
	}
	return m.record()
}

// Replayed adds to a replay's result what it sent of its recording: the
// run beside the options in Config.Replay, no duration when the
// recording's end bounded the run, and a warning when it sent less than
// replay.MinShare. It returns that run (false for clients that replay
// nothing); call it once, after Run.
func (m *Made) Replayed(res *results.Load) (results.ReplayRun, bool) {
	if m.replay == nil {
		return results.ReplayRun{}, false
	}
	st := m.replay()
	if res.Options.Duration == load.MaxDuration {
		res.Options.Duration = 0 // no -d: the recording's end bounded the run
	}
	share, total, known := st.Share(res.Requests)
	run := results.ReplayRun{Scheduled: st.Requests, Malformed: st.Malformed,
		MalformedExamples: st.Examples, Reordered: st.Reordered, Passes: st.Passes, Span: st.Span,
		Recorded: total, RecordingRead: known, ShareSent: share, GapsCut: st.GapsCut, LongestGap: st.LongestGap, PassRequests: st.PassRequests}
	cover := report.ReplayCover(res, run)
	if o := res.Config.Replay; o != nil {
		run.Options = o
		res.Config.Replay = results.NewClientOptions(run)
	}
	if share < replay.MinShare || !known {
		res.Warnings = append(res.Warnings, "replay: partial: sent "+cover+", below "+fmt.Sprintf("%.0f%%", replay.MinShare*100))
	}
	return run, true
}

// Partial fails a replay that sent less than replay.MinShare of its
// recording: a replay never shrinks silently (the CLI's --allow-partial
// accepts it). nil for other clients.
func (m *Made) Partial(res *results.Load) error {
	if m.replay == nil {
		return nil
	}
	st := m.replay()
	share, total, known := st.Share(res.Requests)
	switch {
	case !known && !m.loop:
		return fmt.Errorf("replay: partial: the run ended before the recording did (%d requests sent; -d?); --allow-partial accepts it", res.Requests)
	case !known: // a looped run that never finished its first pass
		return fmt.Errorf("replay: partial: -d ended the run within the recording's first pass (%d requests sent); --allow-partial accepts it", res.Requests)
	case share < replay.MinShare:
		return fmt.Errorf("replay: partial: sent %d of the recording's %d requests (%.1f%%, below %.0f%%: %d lines or entries skipped, %d not reached); --allow-partial accepts it",
			min(res.Requests, st.PassRequests), total, 100*share, replay.MinShare*100, st.PassSkipped, max(st.PassRequests-res.Requests, 0))
	}
	return nil
}
