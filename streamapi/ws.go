package streamapi

// The WebSocket counterpart of EchoService.Chat: each message is an
// EchoRequest and is answered at once with its EchoResponse, in the same
// form: a text message is JSON ({"first_message","second_message"} →
// {"message"}), a binary message is protobuf (wirebench.v1.EchoRequest →
// EchoResponse). Library: github.com/gorilla/websocket, measured against
// coder/websocket in bench/browserwire (fewer allocations and less time
// per round trip; see the README). The gRPC tunnel uses coder/websocket
// for its net.Conn adapter.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// MaxWSMessage is the largest WebSocket echo message read: both echo
// strings at their limit (api: 65536 bytes each) with JSON escaping to
// spare. A larger message closes the socket with 1009 (message too big).
const MaxWSMessage = 512 << 10

var (
	jsonCodec  = codec.MustLookup("json").Codec
	protoCodec = codec.MustLookup("protobuf").Codec
)

// upgrader checks the origin as coder/websocket would: same host only
// (gorilla's default), so another site's page cannot drive the echo.
var upgrader = websocket.Upgrader{ReadBufferSize: 4 << 10, WriteBufferSize: 4 << 10}

func (h *Handler) serveWSEcho(w http.ResponseWriter, r *http.Request) {
	end := time.Now().Add(h.opts.MaxDuration)
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered (400, 403 and why)
	}
	defer c.Close()
	c.SetReadLimit(MaxWSMessage) // over it: close 1009 and ErrReadLimit
	// The socket's deadlines are the stream's end: a silent or
	// non-reading client is dropped then, its buffers freed.
	c.SetReadDeadline(end)
	c.SetWriteDeadline(end)
	for i := 1; ; i++ {
		typ, data, err := c.ReadMessage()
		if err != nil {
			var ne net.Error // gorilla wraps the timeout in its own type
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				closeWith(c, websocket.CloseGoingAway, "stream duration limit")
			case errors.Is(err, websocket.ErrReadLimit):
				// gorilla sent 1009 on seeing the frame's length; let
				// the client's rest of the message arrive (bounded) so
				// that closing does not reset the socket before it
				// reads the close frame.
				linger(c)
			}
			return // or closed by the client
		}
		reply, err := echoReply(typ, data)
		if err != nil {
			// 1007: the payload is not a valid echo request. The reason
			// is at most 123 bytes by the protocol.
			closeWith(c, websocket.CloseInvalidFramePayloadData, truncate(fmt.Sprintf("message %d: %v", i, err), 123))
			return
		}
		if err := c.WriteMessage(typ, reply); err != nil {
			return
		}
	}
}

// lingerTime and lingerBytes bound what linger discards.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 2 * MaxWSMessage
)

// linger reads and discards the client's data for up to lingerTime or
// lingerBytes, whichever comes first.
func linger(c *websocket.Conn) {
	nc := c.NetConn()
	_ = nc.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.CopyN(io.Discard, nc, lingerBytes)
}

// closeWith sends a close frame, waiting at most a second for the socket.
func closeWith(c *websocket.Conn, code int, reason string) {
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

// echoReply decodes with package codec (JSON or protobuf, with the REST
// API's limits) and answers in the same format.
func echoReply(typ int, data []byte) ([]byte, error) {
	c := jsonCodec
	if typ == websocket.BinaryMessage {
		c = protoCodec
	}
	var req api.EchoRequest
	if err := c.Unmarshal(data, &req); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	resp := api.Echo(req)
	return c.Marshal(&resp)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary: a close reason must be valid UTF-8.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
