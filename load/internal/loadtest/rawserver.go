package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RawServer is an HTTP/1.x server written on bare TCP so that it can
// misbehave the ways real servers do (close after each response, speak
// HTTP/1.0, close idle keep-alive connections, frame bodies by EOF or
// chunks, send 1xx first). It counts the responses it wrote whole: the
// number every engine's count of successful requests must equal.
type RawServer struct {
	URL    string
	ln     net.Listener
	Served atomic.Int64
	wg     sync.WaitGroup
}

// Behaviour answers requests on one connection: it reads each request
// head from br and writes its response to c; it returns to close the
// connection. served counts each response written whole.
type Behaviour func(br *bufio.Reader, c net.Conn, served *atomic.Int64)

func StartRawServer(t *testing.T, b Behaviour) *RawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &RawServer{URL: "http://" + ln.Addr().String() + "/", ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				b(bufio.NewReader(c), c, &s.Served)
			}()
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

// Stop closes the listener and waits for the connections to end, so that
// served is final (a response can reach the client before its handler
// counts it).
func (s *RawServer) Stop() { s.ln.Close(); s.wg.Wait() }

// ReadRequest reads one request head (our requests have no body here).
func ReadRequest(br *bufio.Reader) (method string, err error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	method, _, _ = strings.Cut(line, " ")
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if l == "\r\n" || l == "\n" {
			return method, nil
		}
	}
}

// Respond answers every request on the connection with resp (HEAD gets
// the head only when head is set) until perConn responses (0: no limit),
// then closes; idle > 0 closes a connection idle that long.
func Respond(resp string, perConn int, idle time.Duration) Behaviour {
	return func(br *bufio.Reader, c net.Conn, served *atomic.Int64) {
		for n := 0; perConn == 0 || n < perConn; n++ {
			if idle > 0 && n > 0 {
				c.SetReadDeadline(time.Now().Add(idle))
			}
			if _, err := ReadRequest(br); err != nil {
				return
			}
			if _, err := io.WriteString(c, resp); err != nil {
				return
			}
			served.Add(1)
		}
	}
}

// ReadHead reads a request head and returns its Content-Length.
func ReadHead(br *bufio.Reader) (length int64, err error) {
	line, err := br.ReadString('\n')
	for err == nil && line != "\r\n" {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			fmt.Sscan(strings.TrimSpace(v), &length)
		}
		line, err = br.ReadString('\n')
	}
	return length, err
}

// AnswerEarly answers each request with resp as soon as its head is read,
// before its body; then, as then says: "close" hangs up on the unread
// body (the kernel sends RST), "linger" stops writing and reads the body
// away until the client hangs up (nginx's lingering close), "drain"
// reads the body (Content-Length) and keeps the connection for the next
// request. HoldAfterAnswer is the server that reads nothing more.
func AnswerEarly(resp, then string) Behaviour {
	return func(br *bufio.Reader, c net.Conn, served *atomic.Int64) {
		for {
			length, err := ReadHead(br)
			if err != nil {
				return
			}
			if _, err := io.WriteString(c, resp); err != nil {
				return
			}
			served.Add(1)
			switch then {
			case "close":
				return
			case "linger":
				c.(*net.TCPConn).CloseWrite()
				io.Copy(io.Discard, br)
				return
			}
			if _, err := io.CopyN(io.Discard, br, length); err != nil {
				return
			}
		}
	}
}

// HoldAfterAnswer answers each request with resp as soon as its head is
// read, then reads nothing and keeps the connection until release is
// closed (net/http lingers so, 500 ms): a client that waits for its body
// to be written before it takes the answer waits for release, a timeout
// on a test's clock, not a bound on the wall's.
func HoldAfterAnswer(resp string, release <-chan struct{}) Behaviour {
	return func(br *bufio.Reader, c net.Conn, served *atomic.Int64) {
		if _, err := ReadHead(br); err != nil {
			return
		}
		if _, err := io.WriteString(c, resp); err != nil {
			return
		}
		served.Add(1)
		<-release
	}
}
