package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSummaryNamesProtocol: the summary's first line names the transport
// and protocol a run went over, from the configuration every client
// writes — a struct in a run just made, a JSON object in one read back.
func TestSummaryNamesProtocol(t *testing.T) {
	t.Parallel()
	type rawOpts struct { // the shape of load.RawOptions' JSON form
		URL       string `json:"url"`
		Transport string `json:"transport"`
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"raw h3", Config{Raw: NewClientOptions(rawOpts{"https://h/", "h3"})}, "raw, HTTP/3 over QUIC (h3), closed loop"},
		{"raw h2", Config{Raw: NewClientOptions(rawOpts{"https://h/", "h2"})}, "raw, HTTP/2 over TLS (h2), closed loop"},
		{"raw http1 on TLS", configOf(t, `{"raw": {"url": "https://h/", "transport": "http1"}}`), "HTTP/1.1 over TLS (http1)"},
		{"scenario default", configOf(t, `{"scenario_options": {"url": "http://h/", "transport": ""}}`), "HTTP/1.1 (http1)"},
		{"scenario h2c", configOf(t, `{"scenario_options": {"url": "http://h/", "transport": "h2c"}}`), "HTTP/2 cleartext (h2c)"},
		{"grpc stream", configOf(t, `{"stream": {"kind": "grpc-bidi"}}`), "gRPC over HTTP/2 (grpc)"},
		{"replay h3", configOf(t, `{"replay": {"options": {"URL": "https://h/", "Transport": "h3"}}}`), "HTTP/3 over QUIC (h3)"},
		{"kv", configOf(t, `{"scenario": "kv-get", "kv_options": {"protocol": "resp"}}`), "RESP over TCP (resp)"},
		{"kv http face", configOf(t, `{"kv_options": {"protocol": "http-raw"}}`), "HTTP/1.1 (http1)"},
	} {
		r := emptyResult(Segment{})
		r.Scenario, r.Options.Concurrency, r.Config = "raw", 5, tc.cfg
		var buf bytes.Buffer
		if err := WriteSummary(&buf, r); err != nil {
			t.Fatal(err)
		}
		if line, _, _ := strings.Cut(buf.String(), "\n"); !strings.Contains(line, tc.want) {
			t.Errorf("%s: summary's first line %q lacks %q", tc.name, line, tc.want)
		}
		b, _ := json.Marshal(tc.cfg) // as read back from a file
		var back Config
		json.Unmarshal(b, &back)
		r.Config = back
		if got := LoadProtocol(r); !strings.Contains(tc.want, got) || got == "" {
			t.Errorf("%s: read back, protocol %q, want it in %q", tc.name, got, tc.want)
		}
	}
}
