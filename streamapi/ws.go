package streamapi

// The WebSocket counterpart of EchoService.Chat: each message is an
// EchoRequest and is answered at once with its EchoResponse, in the same
// form: a text message is JSON ({"first_message","second_message"} →
// {"message"}), a binary message is protobuf (wirebench.v1.EchoRequest →
// EchoResponse). Library: github.com/coder/websocket (see the README:
// context-aware reads and writes, concurrent-safe, and the net.Conn
// adapter the gRPC tunnel needs).

import (
	"fmt"
	"net/http"

	"github.com/coder/websocket"

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

func (h *Handler) serveWSEcho(w http.ResponseWriter, r *http.Request) {
	r, cancel := h.bound(w, r)
	defer cancel()
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered (400/426 and why)
	}
	defer c.CloseNow()
	c.SetReadLimit(MaxWSMessage)
	ctx := r.Context() // ends at MaxDuration: Read/Write then close the socket
	for i := 1; ; i++ {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return // closed by the client (or too big / too long: Read closed it)
		}
		reply, err := echoReply(typ, data)
		if err != nil {
			// 1007: the payload is not a valid echo request. The reason
			// is at most 123 bytes by the protocol.
			c.Close(websocket.StatusInvalidFramePayloadData, truncate(fmt.Sprintf("message %d: %v", i, err), 123))
			return
		}
		if err := c.Write(ctx, typ, reply); err != nil {
			return
		}
	}
}

// echoReply decodes with package codec (JSON or protobuf, with the REST
// API's limits) and answers in the same format.
func echoReply(typ websocket.MessageType, data []byte) ([]byte, error) {
	c := jsonCodec
	if typ == websocket.MessageBinary {
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
