package grpcws

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The adapter carries bytes exactly: writes of any size (empty ones too)
// become messages, and reads with a small buffer reassemble them across
// message boundaries.
func TestConnCarriesBytesAcrossMessages(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c := newConn(ws)
		defer c.Close()
		io.Copy(c, c) // echo until the client closes
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second)) // generous; all of it takes milliseconds
	rng := rand.New(rand.NewPCG(1, 2))
	var sent bytes.Buffer
	for _, n := range []int{0, 1, 7, 0, 4096, 100_000, 3} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		sent.Write(p)
		if w, err := c.Write(p); err != nil || w != n {
			t.Fatalf("write %d: %d %v", n, w, err)
		}
	}
	got := make([]byte, 0, sent.Len())
	buf := make([]byte, 7)
	for len(got) < sent.Len() {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", len(got), sent.Len(), err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, sent.Bytes()) {
		t.Fatal("the bytes read back differ from those written")
	}
	if c.LocalAddr() == nil || c.RemoteAddr() == nil {
		t.Fatal("no addresses")
	}
	// Closing sends a normal close: the echo's Read ends with io.EOF and
	// it closes too, so ours reads io.EOF.
	if err := c.(*wsConn).ws.WriteControl(8, []byte{0x03, 0xe8}, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("after a normal close: %v, want io.EOF", err)
	}
	c.Close()
}
