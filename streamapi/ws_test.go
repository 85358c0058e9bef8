package streamapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/streamapi"
)

func dialWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Generous for a busy box; every exchange here takes milliseconds.
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	return c
}

func TestWSEchoHundredMessages(t *testing.T) {
	srv := start(t, server.Options{})
	c := dialWS(t, "ws://"+srv.HTTPAddr()+"/ws/echo")
	for i := range 100 {
		msg := fmt.Sprintf(`{"first_message":"%d:","second_message":"hi"}`, i)
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.ReadMessage()
		if err != nil || typ != websocket.TextMessage || string(got) != fmt.Sprintf(`{"message":"%d:hi"}`, i) {
			t.Fatalf("reply %d: %v %q %v", i, typ, got, err)
		}
	}
	// Binary messages are protobuf, answered in protobuf.
	req, _ := proto.Marshal(&pb.EchoRequest{FirstMessage: "a", SecondMessage: "b"})
	if err := c.WriteMessage(websocket.BinaryMessage, req); err != nil {
		t.Fatal(err)
	}
	typ, got, err := c.ReadMessage()
	var resp pb.EchoResponse
	if err != nil || typ != websocket.BinaryMessage || proto.Unmarshal(got, &resp) != nil || resp.Message != "ab" {
		t.Fatalf("binary reply: %v %x %v", typ, got, err)
	}
	// A clean close is answered with a clean close.
	if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after close: %v", err)
	}
}

func TestWSEchoClosesOnInvalidMessage(t *testing.T) {
	srv := start(t, server.Options{})
	for _, c := range []struct {
		name string
		typ  int
		msg  string
		code int
		why  string
	}{
		{"not JSON", websocket.TextMessage, `{"first_message":`, websocket.CloseInvalidFramePayloadData, "message 1:"},
		{"invalid echo", websocket.TextMessage, `{"first_message":"` + strings.Repeat("x", 65537) + `"}`, websocket.CloseInvalidFramePayloadData, "message 1:"},
		{"not protobuf", websocket.BinaryMessage, "\x0a\x05ab", websocket.CloseInvalidFramePayloadData, "message 1:"},
		{"over the limit", websocket.TextMessage, strings.Repeat(" ", streamapi.MaxWSMessage+1), websocket.CloseMessageTooBig, ""},
	} {
		ws := dialWS(t, "ws://"+srv.HTTPAddr()+"/ws/echo")
		if err := ws.WriteMessage(c.typ, []byte(c.msg)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, _, err := ws.ReadMessage()
		ce, ok := err.(*websocket.CloseError)
		if !ok || ce.Code != c.code || !strings.HasPrefix(ce.Text, c.why) {
			t.Errorf("%s: %v, want close %v", c.name, err, c.code)
		}
	}
}

// At the duration limit the server closes the socket (1001, going away).
func TestWSEchoDurationLimit(t *testing.T) {
	srv := start(t, server.Options{MaxStreamDuration: 300 * time.Millisecond})
	c := dialWS(t, "ws://"+srv.HTTPAddr()+"/ws/echo")
	start := time.Now()
	_, _, err := c.ReadMessage() // wait, sending nothing
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) || !strings.Contains(err.Error(), "stream duration limit") {
		t.Fatalf("silent echo: %v, want close 1001", err)
	}
	if d := time.Since(start); d > 10*time.Second { // generous for a busy box; the limit is 300 ms
		t.Fatalf("closed after %v", d)
	}
}
