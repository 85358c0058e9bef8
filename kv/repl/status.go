package repl

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Status is a follower's view of its replication.
type Status struct {
	Leader       string
	Pos          Position
	LeaderOffset int64 // at the last heartbeat or record
	LagBytes     int64
	// LagSeconds is, with the link up, how long the last record took
	// from the leader's recording it to our applying it (0 once a
	// heartbeat shows we are caught up); with the link down and records
	// missing, the age of the newest applied record. Both clocks are
	// Unix time: across machines their skew adds to it.
	LagSeconds float64
	Link       bool
	Syncing    bool
	LastIO     time.Time
	Resyncs    int64
	Reconnects int64
	Applied    int64
	// SeqErrors counts records that did not follow the last one (the
	// follower refused them and resynced); 0 with a correct leader.
	SeqErrors int64
	LastError string
}

// Status returns the follower's figures.
func (f *Follower) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Status{Leader: f.o.Leader, Pos: f.pos, LeaderOffset: f.leaderOff, Link: f.link, Syncing: f.syncing, LastIO: f.lastIO,
		Resyncs: f.resyncs, Reconnects: f.reconns, Applied: f.applied, SeqErrors: f.seqErrors, LastError: f.lastErr}
	if f.pos.ID == "" {
		s.LagBytes = f.leaderOff
	} else {
		s.LagBytes = max(f.leaderOff-f.pos.Offset, 0)
	}
	switch {
	case f.link:
		s.LagSeconds = float64(f.delay) / 1000
	case s.LagBytes > 0 && f.lastTS > 0:
		s.LagSeconds = max(float64(f.now().UnixMilli()-f.lastTS)/1000, 0)
	}
	return s
}

// Info is the "# Replication" section of INFO, in Redis's field names
// (role, master_replid, master_repl_offset, connected_slaves, slaveN...)
// plus wirebench_* fields for the lag.
func (l *Leader) Info() string {
	var b strings.Builder
	pos := l.Position()
	fs := l.Followers()
	online := 0
	for _, f := range fs {
		if f.Online {
			online++
		}
	}
	fmt.Fprintf(&b, "# Replication\r\nrole:master\r\nconnected_slaves:%d\r\n", online)
	i := 0
	now := l.now()
	for _, f := range fs {
		if !f.Online {
			continue
		}
		host, port := splitName(f.Name)
		fmt.Fprintf(&b, "slave%d:ip=%s,port=%s,state=online,offset=%d,lag=%d\r\n", i, host, port, f.Acked, int(now.Sub(f.LastSeen).Seconds()))
		i++
	}
	l.mu.Lock()
	start, hist, limit := l.startLocked(), l.bytes, l.limit
	l.mu.Unlock()
	fmt.Fprintf(&b, "master_replid:%s\r\nmaster_repl_offset:%d\r\nmaster_repl_seq:%d\r\nrepl_backlog_active:1\r\nrepl_backlog_size:%d\r\nrepl_backlog_first_byte_offset:%d\r\nrepl_backlog_histlen:%d\r\n",
		pos.ID, pos.Offset, pos.Seq, limit, start, hist)
	return b.String()
}

// splitName splits a follower's name when it is host:port.
func splitName(name string) (string, string) {
	if h, p, err := net.SplitHostPort(name); err == nil {
		return h, p
	}
	return name, "0"
}

// Info is the follower's "# Replication" section of INFO.
func (f *Follower) Info() string {
	s := f.Status()
	host, port := "", ""
	if u, err := url.Parse(s.Leader); err == nil {
		host, port = u.Hostname(), u.Port()
	}
	link, last := "down", -1
	if s.Link {
		link = "up"
	}
	if !s.LastIO.IsZero() {
		last = int(time.Since(s.LastIO).Seconds())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Replication\r\nrole:slave\r\nmaster_host:%s\r\nmaster_port:%s\r\nmaster_link_status:%s\r\nmaster_last_io_seconds_ago:%d\r\nmaster_sync_in_progress:%d\r\n",
		host, port, link, last, b2i(s.Syncing))
	fmt.Fprintf(&b, "slave_repl_offset:%d\r\nslave_read_only:1\r\nconnected_slaves:0\r\nmaster_replid:%s\r\nmaster_repl_offset:%d\r\n",
		s.Pos.Offset, s.Pos.ID, s.LeaderOffset)
	fmt.Fprintf(&b, "wirebench_repl_seq:%d\r\nwirebench_lag_bytes:%d\r\nwirebench_lag_seconds:%.3f\r\nwirebench_resyncs:%d\r\nwirebench_reconnects:%d\r\nwirebench_applied_records:%d\r\n",
		s.Pos.Seq, s.LagBytes, s.LagSeconds, s.Resyncs, s.Reconnects, s.Applied)
	return b.String()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Metrics returns the leader's Prometheus lines.
func (l *Leader) Metrics() []byte {
	pos := l.Position()
	var b []byte
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_role Replication role (1 for the role labelled).\n# TYPE wirebench_kv_repl_role gauge\nwirebench_kv_repl_role{role=\"leader\",replid=%q} 1\n", pos.ID)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_offset Replication offsets in bytes of the history's stream.\n# TYPE wirebench_kv_repl_offset gauge\nwirebench_kv_repl_offset{of=\"leader\"} %d\n", pos.Offset)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_seq Number of the last record of the history.\n# TYPE wirebench_kv_repl_seq gauge\nwirebench_kv_repl_seq %d\n", pos.Seq)
	fs := l.Followers()
	online := 0
	for _, f := range fs {
		online += b2i(f.Online)
	}
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_followers Followers streaming or acknowledging in the last 5 s.\n# TYPE wirebench_kv_repl_followers gauge\nwirebench_kv_repl_followers %d\n", online)
	if len(fs) > 0 {
		b = fmt.Appendf(b, "# HELP wirebench_kv_repl_follower_lag_bytes A follower's acknowledged lag behind the leader.\n# TYPE wirebench_kv_repl_follower_lag_bytes gauge\n")
		for _, f := range fs {
			b = fmt.Appendf(b, "wirebench_kv_repl_follower_lag_bytes{follower=%q} %d\n", f.Name, f.LagBytes)
		}
		b = fmt.Appendf(b, "# HELP wirebench_kv_repl_follower_lag_seconds Age of the oldest record a follower has not acknowledged (-1: unknown).\n# TYPE wirebench_kv_repl_follower_lag_seconds gauge\n")
		for _, f := range fs {
			b = fmt.Appendf(b, "wirebench_kv_repl_follower_lag_seconds{follower=%q} %.3f\n", f.Name, f.LagSeconds)
		}
	}
	return b
}

// Metrics returns the follower's Prometheus lines.
func (f *Follower) Metrics() []byte {
	s := f.Status()
	var b []byte
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_role Replication role (1 for the role labelled).\n# TYPE wirebench_kv_repl_role gauge\nwirebench_kv_repl_role{role=\"follower\",replid=%q} 1\n", s.Pos.ID)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_offset Replication offsets in bytes of the history's stream.\n# TYPE wirebench_kv_repl_offset gauge\nwirebench_kv_repl_offset{of=\"follower\"} %d\nwirebench_kv_repl_offset{of=\"leader\"} %d\n", s.Pos.Offset, s.LeaderOffset)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_seq Number of the last record applied.\n# TYPE wirebench_kv_repl_seq gauge\nwirebench_kv_repl_seq %d\n", s.Pos.Seq)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_lag_bytes Bytes of the leader's history not yet applied.\n# TYPE wirebench_kv_repl_lag_bytes gauge\nwirebench_kv_repl_lag_bytes %d\n", s.LagBytes)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_lag_seconds Seconds from the leader recording the last record to the follower applying it (link down: age of the newest applied record).\n# TYPE wirebench_kv_repl_lag_seconds gauge\nwirebench_kv_repl_lag_seconds %.3f\n", s.LagSeconds)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_link 1 while a stream from the leader is open.\n# TYPE wirebench_kv_repl_link gauge\nwirebench_kv_repl_link %d\n", b2i(s.Link))
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_resyncs_total Full resyncs from a snapshot.\n# TYPE wirebench_kv_repl_resyncs_total counter\nwirebench_kv_repl_resyncs_total %d\n", s.Resyncs)
	b = fmt.Appendf(b, "# HELP wirebench_kv_repl_reconnects_total Failed attempts followed by a backoff.\n# TYPE wirebench_kv_repl_reconnects_total counter\nwirebench_kv_repl_reconnects_total %d\n", s.Reconnects)
	return b
}
