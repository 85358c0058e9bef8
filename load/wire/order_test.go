package wire

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// gateConn is a net.Conn whose first Write reaches the "socket" (it is
// recorded) and then returns only when release is closed: the writing
// goroutine is descheduled between its bytes going out and its return.
type gateConn struct {
	net.Conn
	mu      sync.Mutex
	wire    []byte
	writes  int
	written chan struct{} // closed when the first Write has recorded its bytes
	release chan struct{}
}

func (g *gateConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.wire = append(g.wire, p...)
	g.writes++
	first := g.writes == 1
	g.mu.Unlock()
	if first {
		close(g.written)
		<-g.release
	}
	return len(p), nil
}

// TestLayerConnWriteOrder replays the sequence behind a CI failure of
// tunnel-get (Out.Other != 0): net/http's writeLoop writes the WebSocket
// upgrade request, and before it feeds the parser, another goroutine
// writes the first tunnel frame (the HTTP/2 preface, masked). The parser
// must see the two in wire order and split them exactly.
func TestLayerConnWriteOrder(t *testing.T) {
	req := "GET /grpc-ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
	mask := [4]byte{1, 2, 3, 4}
	frame := []byte{0x82, 0x80 | byte(len(h2Preface)), mask[0], mask[1], mask[2], mask[3]}
	for i := range len(h2Preface) {
		frame = append(frame, h2Preface[i]^mask[i%4])
	}
	g := &gateConn{written: make(chan struct{}), release: make(chan struct{})}
	var w Counter
	c := Conn(g, StackWSH2GRPC, &w, nil)

	errs := make(chan error, 2)
	go func() { _, err := c.Write([]byte(req)); errs <- err }()
	<-g.written // the request is on the wire; its writer has not returned
	second := make(chan struct{})
	go func() { _, err := c.Write(frame); errs <- err; close(second) }()
	// Give the second writer time to overtake the first (it did, without
	// the ordering lock, within microseconds); with the lock it waits for
	// the first whatever this wait, so the bound only decides whether the
	// old bug would show, never whether a correct layerConn passes.
	select {
	case <-second:
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := results.Layers{H1Headers: int64(len(req)), WS: 6, H2Frames: int64(len(h2Preface))}
	if got := w.Out(); got != want {
		t.Errorf("out %+v, want %+v", got, want)
	}
	if string(g.wire[:len(req)]) != req {
		t.Fatalf("the gate let the frame go first: %q", g.wire)
	}
}
