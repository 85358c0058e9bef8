package results

import "slices"

// StudyStop says that a study was cut short (SIGINT, SIGTERM) and how far
// it got. Trials are interleaved round by round, so a cut study usually
// has cells with fewer finished trials than planned: reports decide no
// comparison that involves such a cell.
type StudyStop struct {
	Interrupted bool   `json:"interrupted"`
	Signal      string `json:"signal,omitempty"` // "SIGINT", "SIGTERM"
	// TrialsRun counts the trials that finished (failed ones included;
	// the one cut by the signal not); TrialsPlanned all the study had.
	TrialsRun     int `json:"trials_run"`
	TrialsPlanned int `json:"trials_planned"`
	// Complete cells ran every planned trial; Incomplete ones did not.
	Complete   []string `json:"complete_cells"`
	Incomplete []string `json:"incomplete_cells"`
}

// IncompleteCell reports whether cell id of an interrupted study missed
// some of its planned trials. False for a study that was not cut short.
func (s *StudyStop) IncompleteCell(id string) bool {
	return s != nil && s.Interrupted && slices.Contains(s.Incomplete, id)
}
