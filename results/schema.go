package results

import "strings"

// The result files' versions. Version 2 writes every histogram as an
// object of plain numbers beside its encoding ("latency": {"p99_ms": …,
// "hdr": "HISTF…"}) where version 1 wrote the bare encoded string, and a
// load result adds its derived headline figures (rps, error_rate,
// per_request). Version 1 files are read still: only the encoding is read
// from either, and the figures are computed again. A file read is
// upgraded in memory, so that written again it says what it is.
//
// A reader of version 1 (an older wirebench) refuses a version 2 file by
// its schema rather than misreading a histogram.

// readable reports whether a file of schema is read as want: want itself
// or the version 1 it replaced.
func readable(schema, want string) bool { return current(schema) == want }

// current is the current version of schema: version 2 for a version 1.
func current(schema string) string {
	if s, ok := strings.CutSuffix(schema, "/v1"); ok {
		return s + "/v2"
	}
	return schema
}

// upgrade marks a load read from a version 1 file as the current version.
func (r *Load) upgrade() {
	if r == nil || !readable(r.Schema, LoadSchema) {
		return
	}
	r.Schema = LoadSchema
	if r.Conn == nil {
		r.Conn = connFromConfig(&r.Config)
	}
}

// connFromConfig is the connection set-up a result written before Conn
// kept in its configuration ("auto", "h3_handshakes_ns", "h3_0rtt"); nil
// when it kept none. Those keys are then taken out of the configuration.
func connFromConfig(cfg *Config) *Conn {
	if cfg.OldAuto == "" && cfg.OldHandshakes == nil && cfg.OldZeroRTT == nil {
		return nil
	}
	c := &Conn{Auto: cfg.OldAuto, Handshakes: cfg.OldHandshakes}
	if z := cfg.OldZeroRTT; z != nil {
		c.ZeroRTT = &z.ZeroRTT
		c.ZeroRTT.Used, c.ZeroRTT.EarlyRequests, c.ZeroRTT.Refused, c.ZeroRTT.NoEarly = z.Used, z.EarlyRequests, z.Refused, z.NoEarly
	}
	cfg.OldAuto, cfg.OldHandshakes, cfg.OldZeroRTT = "", nil, nil
	c.Transport, c.URL = cfg.transport("")
	return c
}

func (c *Capacity) upgrade() {
	c.Schema = CapacitySchema
	for i := range c.Steps {
		c.Steps[i].Load.upgrade()
	}
	if c.Confirm != nil {
		c.Confirm.Load.upgrade()
	}
}

func (s *Study) upgrade() {
	s.Schema = StudySchema
	for i := range s.Trials {
		s.Trials[i].Load.upgrade()
		if c := s.Trials[i].Capacity; c != nil {
			c.upgrade()
		}
	}
}
