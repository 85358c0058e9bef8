package replay

import (
	"strings"
	"testing"
)

// TestGRPCRecordedMessages: a stream's messages as JSON ("msgs") or
// base64 protobuf ("bins", [] for none) come out as a list, each frame
// the recorded bytes; what a line cannot hold is a malformed line naming
// why.
func TestGRPCRecordedMessages(t *testing.T) {
	frames := func(body []byte) []string {
		t.Helper()
		var got []string
		if err := GRPCFrames(body, func(m []byte) error { got = append(got, string(m)); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	q, why := parseGRPCCall([]byte(`{"t": 1, "grpc": "a.S/M", "bins": ["eHl6", "", "YQ=="], "code": 5}`))
	if why != "" || q.Method != GRPCProtoMsgs || strings.Join(frames(q.Body), ",") != "xyz,,a" || q.Status != 6 {
		t.Fatalf("bins: %q %+v", why, q)
	}
	q, why = parseGRPCCall([]byte(`{"t": 1, "grpc": "a.S/M", "bins": []}`))
	if why != "" || q.Method != GRPCProtoMsgs || len(frames(q.Body)) != 0 {
		t.Fatalf("no bins: %q %+v", why, q)
	}
	q, why = parseGRPCCall([]byte(`{"t": 1, "grpc": "a.S/M", "msgs": [{"x": 1}, {}]}`))
	if why != "" || q.Method != GRPCJSONMsgs || string(q.Body) != `[{"x": 1}, {}]` {
		t.Fatalf("msgs: %q %+v", why, q)
	}
	for line, want := range map[string]string{
		`{"t": 1, "grpc": "a.S/M", "msgs": [{}], "bin": "eHl6"}`: `"data", "bin", "msgs" and "bins" exclude each other`,
		`{"t": 1, "grpc": "a.S/M", "bins": [], "data": {}}`:      `"data", "bin", "msgs" and "bins" exclude each other`,
		`{"t": 1, "grpc": "a.S/M", "msgs": {"x": 1}}`:            `"msgs": not an array of messages`,
		`{"t": 1, "grpc": "a.S/M", "bins": ["!"]}`:               `"bins": not base64`,
	} {
		if _, why := parseGRPCCall([]byte(line)); why != want {
			t.Errorf("%s: %q, want %q", line, why, want)
		}
	}
	if err := GRPCFrames([]byte{0, 0, 0, 0, 9, 1}, func([]byte) error { return nil }); err == nil {
		t.Error("a frame longer than the body was read")
	}
}
