package results

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Failure causes: the classes a reader acts on, each gathering the
// low-cardinality messages the clients count failures by (Load.Failures).
const (
	CauseRefused   = "connection refused"
	CauseReset     = "connection reset or closed"
	CauseTimeout   = "timeout"
	CauseTLS       = "TLS"
	CauseHandshake = "no QUIC handshake"
	Cause4xx       = "status 4xx"
	Cause5xx       = "status 5xx"
	CauseStatus    = "other status"
	CauseGRPC      = "gRPC status"
	CauseCheck     = "check failed"
	CauseOther     = "other"
)

// FailureCause is one cause of a run's failed requests: how many, and
// the messages (the status codes of a status class) most of them had.
type FailureCause struct {
	Cause string `json:"cause"`
	Count int64  `json:"count"`
	// Top are the cause's most frequent messages, at most topMessages,
	// most frequent first: "403" in status 4xx, "closed before response"
	// in connection reset or closed.
	Top []MessageCount `json:"top,omitempty"`
}

// MessageCount is one failure message and how many requests had it.
type MessageCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

const topMessages = 3

// StepFailure is the failure message of a flow's step: the step's
// number and name before the reason, `step 2 "get user": status 404`,
// classified by its reason.
func StepFailure(step int, name, reason string) string {
	return "step " + strconv.Itoa(step) + " " + strconv.Quote(name) + ": " + reason
}

// stepReason is a StepFailure's reason, or msg itself.
func stepReason(msg string) string {
	rest, ok := strings.CutPrefix(msg, "step ")
	if !ok {
		return msg
	}
	i := strings.IndexByte(rest, ' ')
	if i <= 0 || i+1 >= len(rest) || rest[i+1] != '"' {
		return msg
	}
	q, err := strconv.QuotedPrefix(rest[i+1:])
	if err != nil {
		return msg
	}
	r, ok := strings.CutPrefix(rest[i+1+len(q):], ": ")
	if !ok {
		return msg
	}
	return r
}

// CauseOf classifies one failure message (a flow step's by its reason).
func CauseOf(msg string) string {
	m := strings.ToLower(stepReason(msg))
	switch {
	case m == "connection refused" || strings.HasSuffix(m, "connection refused"):
		return CauseRefused
	case m == "connection reset", m == "closed before response", m == "closed mid-response",
		strings.Contains(m, "connection reset"), strings.Contains(m, "broken pipe"):
		return CauseReset
	case strings.Contains(m, "quic handshake"):
		return CauseHandshake
	case strings.Contains(m, "tls") || strings.Contains(m, "x509") || strings.Contains(m, "certificate"):
		return CauseTLS
	case m == "timeout" || strings.Contains(m, "timeout") || strings.Contains(m, "deadline exceeded"):
		return CauseTimeout
	case strings.HasPrefix(m, "status "):
		switch code := strings.TrimSpace(m[len("status "):]); {
		case len(code) == 3 && code[0] == '4':
			return Cause4xx
		case len(code) == 3 && code[0] == '5':
			return Cause5xx
		}
		return CauseStatus
	case strings.HasPrefix(m, "grpc "):
		return CauseGRPC
	case strings.HasPrefix(m, "check") || strings.HasPrefix(m, "body check") || strings.HasPrefix(m, "decode") || strings.HasPrefix(m, "capture"):
		return CauseCheck
	}
	return CauseOther
}

// causeKey is how a message is shown inside its cause: the code alone
// for a status or gRPC code, else the message.
func causeKey(cause, msg string) string {
	switch cause {
	case Cause4xx, Cause5xx, CauseStatus:
		return strings.TrimPrefix(msg, "status ")
	case CauseGRPC:
		return strings.TrimPrefix(msg, "grpc ")
	}
	return msg
}

// FailureCauses groups failure messages by cause, most frequent first.
func FailureCauses(failures map[string]int64) []FailureCause {
	byCause := map[string]map[string]int64{}
	for msg, n := range failures {
		if n <= 0 {
			continue
		}
		c := CauseOf(msg)
		if byCause[c] == nil {
			byCause[c] = map[string]int64{}
		}
		byCause[c][causeKey(c, msg)] += n
	}
	out := make([]FailureCause, 0, len(byCause))
	for c, msgs := range byCause {
		fc := FailureCause{Cause: c}
		for _, kv := range sortedCounts(msgs) {
			fc.Count += kv.n
			if len(fc.Top) < topMessages {
				fc.Top = append(fc.Top, MessageCount{kv.k, kv.n})
			}
		}
		if len(fc.Top) == 1 && fc.Top[0].Message == c {
			fc.Top = nil // "connection refused: connection refused" says nothing more
		}
		out = append(out, fc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Cause < out[j].Cause
	})
	return out
}

// String is "status 4xx (403×950, 404×50)" or "connection refused".
func (c FailureCause) String() string {
	if len(c.Top) == 0 {
		return c.Cause
	}
	parts := make([]string, len(c.Top))
	for i, m := range c.Top {
		parts[i] = fmt.Sprintf("%s×%d", m.Message, m.Count)
	}
	return c.Cause + " (" + strings.Join(parts, ", ") + ")"
}

// CausesLine is the causes of failed of total requests in one line, each
// with its share of the requests: "connection refused 100%" or
// "status 4xx 2.0% (403×20); timeout 0.5%".
func CausesLine(causes []FailureCause, total int64) string {
	parts := make([]string, 0, len(causes))
	for _, c := range causes {
		share := ""
		if total > 0 {
			share = " " + formatShare(float64(c.Count)/float64(total))
		}
		s := c.Cause + share
		if len(c.Top) > 0 {
			s += strings.TrimPrefix(c.String(), c.Cause)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func formatShare(f float64) string {
	switch {
	case f >= 0.9995:
		return "100%"
	case f >= 0.1:
		return fmt.Sprintf("%.0f%%", 100*f)
	case f >= 0.001:
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	return fmt.Sprintf("%.2g%%", 100*f)
}

// LoadIndependent reports whether every failure of causes is one that
// no lower rate would avoid: nothing listening, no TLS or QUIC handshake,
// a 4xx other than 408 and 429 (which a server sends under load). A
// target that answers a run only with these does not answer at all.
func LoadIndependent(causes []FailureCause) bool {
	if len(causes) == 0 {
		return false
	}
	for _, c := range causes {
		switch c.Cause {
		case CauseRefused, CauseTLS, CauseHandshake:
		case Cause4xx:
			for _, m := range c.Top {
				if m.Message == "408" || m.Message == "429" {
					return false
				}
			}
			if c.Count != sumTop(c.Top) { // codes beyond the top: unknown
				return false
			}
		default:
			return false
		}
	}
	return true
}

func sumTop(top []MessageCount) (n int64) {
	for _, m := range top {
		n += m.Count
	}
	return n
}
