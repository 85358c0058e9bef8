package results

import (
	"slices"
	"testing"
)

// TestFailureCauses: the messages every client counts failures by land in
// the cause a reader acts on, status classes with their top codes.
func TestFailureCauses(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"connection refused":     CauseRefused,
		"connection reset":       CauseReset,
		"closed before response": CauseReset,
		"closed mid-response":    CauseReset,
		"timeout":                CauseTimeout,
		"tls: failed to verify certificate: x509: certificate signed by unknown authority": CauseTLS,
		"remote error: tls: handshake failure":                                             CauseTLS,
		"127.0.0.1:1: QUIC handshake: timeout: no recent network activity":                 CauseHandshake,
		"status 403":            Cause4xx,
		"status 503":            Cause5xx,
		"status 302":            CauseStatus,
		"grpc Unavailable":      CauseGRPC,
		"check: echo message":   CauseCheck,
		"body check: no \"ok\"": CauseCheck,
		"decode json body":      CauseCheck,
		"malformed response":    CauseOther,
	} {
		if got := CauseOf(msg); got != want {
			t.Errorf("%q: cause %q, want %q", msg, got, want)
		}
	}
	causes := FailureCauses(map[string]int64{"status 403": 900, "status 404": 50, "status 401": 20, "status 418": 1,
		"connection refused": 30, "closed before response": 2, "connection reset": 1})
	got := make([]string, len(causes))
	for i, c := range causes {
		got[i] = c.String()
	}
	want := []string{"status 4xx (403×900, 404×50, 401×20)", "connection refused", "connection reset or closed (closed before response×2, connection reset×1)"}
	if !slices.Equal(got, want) || causes[0].Count != 971 {
		t.Errorf("causes %q (4xx %d), want %q (971)", got, causes[0].Count, want)
	}
	if line := CausesLine(causes[:2], 1003); line != "status 4xx 97% (403×900, 404×50, 401×20); connection refused 3.0%" {
		t.Errorf("line %q", line)
	}
	for _, tc := range []struct {
		f    map[string]int64
		want bool
	}{
		{map[string]int64{"connection refused": 5}, true},
		{map[string]int64{"status 403": 5, "status 404": 1}, true},
		{map[string]int64{"status 429": 5}, false},
		{map[string]int64{"status 503": 5}, false},
		{map[string]int64{"timeout": 5}, false},
		{map[string]int64{"connection refused": 5, "timeout": 1}, false},
		{map[string]int64{"status 400": 1, "status 401": 1, "status 403": 1, "status 429": 1}, false},
		{nil, false},
	} {
		if got := LoadIndependent(FailureCauses(tc.f)); got != tc.want {
			t.Errorf("%v: load-independent %v, want %v", tc.f, got, tc.want)
		}
	}
}
