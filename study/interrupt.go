package study

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// cutTrial is the error of the trial a signal cut short. The report counts
// such a trial as failed, never as a measurement.
const cutTrial = "interrupted: cut short by the signal that stopped the study, not counted"

// markCut records that t was cut short: its partial load stays in the
// results for the record, marked as interrupted, and its error keeps it
// out of every statistic.
func markCut(t *results.Trial) {
	if t.Load != nil {
		t.Load.Stop = &results.Stop{Interrupted: true}
	}
	if t.Error == "" {
		t.Error = cutTrial
	} else {
		t.Error = cutTrial + " (" + t.Error + ")"
	}
}

// interrupted finishes a study cut short by ctx: res keeps every trial
// that ran, is marked with which cells are complete and, when ctx's cause
// names a signal (a SignalName() string method), with it, as is the trial
// it cut; it is returned with an error wrapping ctx's cause.
func interrupted(ctx context.Context, res *results.Study, order []trialRef) (*results.Study, error) {
	planned, done := map[string]int{}, map[string]int{}
	for _, tr := range order {
		planned[res.Cells[tr.cell].ID]++
	}
	ran := 0
	for _, t := range res.Trials {
		if strings.HasPrefix(t.Error, cutTrial) {
			continue
		}
		done[t.Cell]++
		ran++
	}
	st := &results.StudyStop{Interrupted: true, TrialsRun: ran, TrialsPlanned: len(order),
		Complete: []string{}, Incomplete: []string{}}
	for _, c := range res.Cells {
		if done[c.ID] >= planned[c.ID] {
			st.Complete = append(st.Complete, c.ID)
		} else {
			st.Incomplete = append(st.Incomplete, c.ID)
		}
	}
	var sig interface{ SignalName() string }
	if errors.As(context.Cause(ctx), &sig) {
		st.Signal = sig.SignalName()
		for _, t := range res.Trials { // the trial the signal cut
			if t.Load != nil && t.Load.Stop != nil && t.Load.Stop.Interrupted {
				t.Load.Stop.Signal = st.Signal
			}
		}
	}
	res.Stop = st
	res.End = time.Now()
	res.Warnings = append(res.Warnings, fmt.Sprintf("interrupted after %d of %d trials: %d of %d cells complete; comparisons of incomplete cells are not decided",
		ran, len(order), len(st.Complete), len(res.Cells)))
	return res, fmt.Errorf("study %s: interrupted after %d of %d trials: %w", res.Study, ran, len(order), context.Cause(ctx))
}
