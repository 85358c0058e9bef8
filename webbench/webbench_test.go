package webbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/wirebench/wirebench/internal/testkit"
)

func TestPageServedIsolated(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "next", http.StatusTeapot) })
	srv := httptest.NewServer(New(next, Options{}))
	defer srv.Close()
	for path, want := range map[string]string{"/bench/": "bench.js", "/bench/bench.js": "wirebench"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(want)) {
			t.Errorf("%s: %d, %d bytes", path, resp.StatusCode, len(body))
		}
		if resp.Header.Get("Cross-Origin-Embedder-Policy") != "require-corp" || resp.Header.Get("Cross-Origin-Opener-Policy") != "same-origin" {
			t.Errorf("%s: not cross-origin isolated: %v", path, resp.Header)
		}
	}
	resp, err := http.Post(srv.URL+"/bench/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /bench/: %d", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL + "/users")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("/users did not reach next: %d", resp.StatusCode)
	}
}

func TestParseCall(t *testing.T) {
	msg := appendCall(nil, 7, "/wirebench.v1.UserService/Get", []byte{0, 0, 0, 0, 2, 8, 1})
	c, err := parseCall(msg)
	if err != nil || c.id != 7 || c.path != "/wirebench.v1.UserService/Get" || !bytes.Equal(c.body, []byte{0, 0, 0, 0, 2, 8, 1}) {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range [][]byte{
		nil, {0, 0, 0, 1},
		{0, 0, 0, 1, 40, '/'},             // path longer than the message
		appendCall(nil, 1, "/users", nil), // not a procedure
		appendCall(nil, 1, "/wirebench.v1.X?a", nil),
	} {
		if _, err := parseCall(bad); !errors.Is(err, ErrCall) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseCall(f *testing.F) {
	f.Add(appendCall(nil, 7, "/wirebench.v1.UserService/Get", []byte{0, 0, 0, 0, 0}))
	f.Add([]byte{0, 0, 0, 1, 255})
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, err := parseCall(msg)
		if err != nil {
			return
		}
		if !bytes.Equal(appendCall(nil, c.id, c.path, c.body), msg) {
			t.Fatalf("%q does not round-trip: %+v", msg, c)
		}
	})
}

// grpcWebEcho answers any procedure with two messages and an OK trailer
// frame, flushing after the first, as connect-go's gRPC-Web handler does
// for a server stream; between the two it calls pause, if set.
func grpcWebEcho(w http.ResponseWriter, r *http.Request) { grpcWebEchoPause(w, r, nil) }

func grpcWebEchoPause(w http.ResponseWriter, r *http.Request, pause func()) {
	if r.Header.Get("Content-Type") != "application/grpc-web+proto" || r.Method != http.MethodPost {
		http.Error(w, "want gRPC-Web", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/grpc-web+proto")
	w.Write(body) // the request's message back
	w.(http.Flusher).Flush()
	if strings.HasSuffix(r.URL.Path, "/Burst") { // 99 more messages at once: coalesced
		for range 99 {
			w.Write(body)
			w.(http.Flusher).Flush()
		}
	} else if pause != nil {
		pause()
	}
	w.Write([]byte{0, 0, 0, 0, 1, 'x'})
	w.Write(appendTrailer(nil, "grpc-status: 0\r\n"))
}

// TestTunnelCalls makes calls through the tunnel, several at once: each
// reply comes back under its id, in pieces as the handler flushed, ending
// with its trailer frame; a call the handler refuses gets a trailer frame
// with a status; a malformed message closes the tunnel.
func TestTunnelCalls(t *testing.T) {
	firstPieces := make(chan struct{}) // closed once calls 1-3 each sent their first message
	var released sync.Once
	defer released.Do(func() { close(firstPieces) })
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/Refused") {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		// The first message goes alone: the handler goes on once the
		// client has it (a fixed pause of 20 × FlushDelay was not one
		// on a busy box, and the two came together).
		grpcWebEchoPause(w, r, func() {
			select {
			case <-firstPieces:
			case <-r.Context().Done():
			}
		})
	})
	srv := httptest.NewServer(New(next, Options{}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+TunnelPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	req := []byte{0, 0, 0, 0, 2, 8, 9}
	for id := uint32(1); id <= 3; id++ {
		if err := ws.Write(ctx, websocket.MessageBinary, appendCall(nil, id, "/wirebench.v1.UserService/Stream", req)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.Write(ctx, websocket.MessageBinary, appendCall(nil, 4, "/wirebench.v1.UserService/Refused", nil)); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, websocket.MessageBinary, appendCall(nil, 5, "/wirebench.v1.UserService/Burst", req)); err != nil {
		t.Fatal(err)
	}
	got := map[uint32][]byte{}
	pieces := map[uint32]int{}
	for len(got) < 5 || !allEnded(got) {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", pieces, err)
		}
		id := binary.BigEndian.Uint32(msg)
		got[id] = append(got[id], msg[4:]...)
		pieces[id]++
		if pieces[1] > 0 && pieces[2] > 0 && pieces[3] > 0 {
			released.Do(func() { close(firstPieces) })
		}
	}
	want := append(append(append([]byte(nil), req...), 0, 0, 0, 0, 1, 'x'), appendTrailer(nil, "grpc-status: 0\r\n")...)
	for id := uint32(1); id <= 3; id++ {
		if !bytes.Equal(got[id], want) || pieces[id] != 2 {
			t.Errorf("call %d: %d pieces %q, want 2: %q", id, pieces[id], got[id], want)
		}
	}
	if !bytes.Contains(got[4], []byte("grpc-status: 12")) || got[4][0] != 0x80 {
		t.Errorf("refused call: %q", got[4])
	}
	// 100 flushed messages written at once: far fewer WebSocket messages
	// (bounded loosely: a descheduled handler may let the timer fire)
	if len(got[5]) != 100*len(req)+6+21 || (testkit.Timing() && pieces[5] > 20) {
		t.Errorf("burst: %d bytes in %d pieces", len(got[5]), pieces[5])
	}
	if err := ws.Write(ctx, websocket.MessageBinary, appendCall(nil, 6, "/users", nil)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("a call to /users: %v, want close 1008", err)
	}
}

// allEnded reports whether every reply so far ends with a trailer frame.
func allEnded(got map[uint32][]byte) bool {
	for _, b := range got {
		if i := bytes.LastIndex(b, []byte("grpc-status")); i < 5 || b[i-5] != 0x80 {
			return false
		}
	}
	return true
}

// TestTunnelLimits: a call message over MaxCallMessage closes the tunnel
// with 1009; at most MaxCalls calls run at once, the next waiting.
func TestTunnelLimits(t *testing.T) {
	var running, peak atomic.Int64
	release := make(chan struct{})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		running.Add(-1)
		grpcWebEcho(w, r)
	})
	srv := httptest.NewServer(New(next, Options{}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + TunnelPath
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for id := range uint32(MaxCalls + 5) {
		if err := ws.Write(ctx, websocket.MessageBinary, appendCall(nil, id, "/wirebench.v1.UserService/Get", nil)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute) // a guard: 64 goroutines to start on a busy box
	for running.Load() < MaxCalls && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a 65th would have started by now
	if got := peak.Load(); got != MaxCalls {
		t.Errorf("%d calls ran at once, want %d", got, MaxCalls)
	}
	close(release)
	for range MaxCalls + 5 { // every call still gets its whole reply
		for ended := false; !ended; {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ended = bytes.Contains(msg, []byte("grpc-status: 0"))
		}
	}

	big, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer big.CloseNow()
	msg := appendCall(nil, 1, "/wirebench.v1.UserService/Get", make([]byte, MaxCallMessage))
	_ = big.Write(ctx, websocket.MessageBinary, msg)
	if _, _, err := big.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("a %d-byte call: %v, want close 1009", len(msg), err)
	}
}
