package streamapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/streamapi"
)

// The client is coder/websocket, another implementation than the
// server's gorilla/websocket: an interoperability check as well.
func dialWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(4 << 20)
	return c
}

func wsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestWSEchoHundredMessages(t *testing.T) {
	srv := start(t, server.Options{})
	c := dialWS(t, "ws://"+srv.HTTPAddr()+"/ws/echo")
	ctx := wsCtx(t)
	for i := range 100 {
		msg := fmt.Sprintf(`{"first_message":"%d:","second_message":"hi"}`, i)
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.Read(ctx)
		if err != nil || typ != websocket.MessageText || string(got) != fmt.Sprintf(`{"message":"%d:hi"}`, i) {
			t.Fatalf("reply %d: %v %q %v", i, typ, got, err)
		}
	}
	// Binary messages are protobuf, answered in protobuf.
	req, _ := proto.Marshal(&pb.EchoRequest{FirstMessage: "a", SecondMessage: "b"})
	if err := c.Write(ctx, websocket.MessageBinary, req); err != nil {
		t.Fatal(err)
	}
	typ, got, err := c.Read(ctx)
	var resp pb.EchoResponse
	if err != nil || typ != websocket.MessageBinary || proto.Unmarshal(got, &resp) != nil || resp.Message != "ab" {
		t.Fatalf("binary reply: %v %x %v", typ, got, err)
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestWSEchoClosesOnInvalidMessage(t *testing.T) {
	srv := start(t, server.Options{})
	for _, c := range []struct {
		name string
		typ  websocket.MessageType
		msg  string
		code websocket.StatusCode
		why  string
	}{
		{"not JSON", websocket.MessageText, `{"first_message":`, websocket.StatusInvalidFramePayloadData, "message 1:"},
		{"invalid echo", websocket.MessageText, `{"first_message":"` + strings.Repeat("x", 65537) + `"}`, websocket.StatusInvalidFramePayloadData, "message 1:"},
		{"not protobuf", websocket.MessageBinary, "\x0a\x05ab", websocket.StatusInvalidFramePayloadData, "message 1:"},
		{"over the limit", websocket.MessageText, strings.Repeat(" ", streamapi.MaxWSMessage+1), websocket.StatusMessageTooBig, ""},
	} {
		ws := dialWS(t, "ws://"+srv.HTTPAddr()+"/ws/echo")
		ctx := wsCtx(t)
		if err := ws.Write(ctx, c.typ, []byte(c.msg)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, _, err := ws.Read(ctx)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != c.code || !strings.HasPrefix(ce.Reason, c.why) {
			t.Errorf("%s: %v, want close %v", c.name, err, c.code)
		}
	}
}

// At the duration limit the server closes the socket (1001, going away).
func TestWSEchoDurationLimit(t *testing.T) {
	srv := start(t, server.Options{MaxStreamDuration: 300 * time.Millisecond})
	c := dialWS(t, "ws://"+srv.HTTPAddr()+"/ws/echo")
	start := time.Now()
	_, _, err := c.Read(wsCtx(t)) // wait, sending nothing
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "stream duration limit" {
		t.Fatalf("silent echo: %v, want close 1001", err)
	}
	if d := time.Since(start); testkit.Timing() && d > 10*time.Second { // generous for a busy box; the limit is 300 ms
		t.Fatalf("closed after %v", d)
	}
}
