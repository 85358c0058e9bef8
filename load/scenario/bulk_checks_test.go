package scenario

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/internal/loadtest"
)

// A bulk upload's outcome is the server's reply, read whole; anything
// else is an error that says what went wrong, never a zero status taken
// for an answer: no reply, a reply that is not HTTP, a server that
// stalls past the timeout, one that hangs up on the body, a format or URL
// the client cannot send.
func TestPostBulkBadReplies(t *testing.T) {
	// readBody reads the request (a small body: it is all sent at once)
	// until the client has sent it, then does after.
	readBody := func(after func(c net.Conn)) string {
		return "http://" + loadtest.ServeTCP(t, func(c net.Conn) {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "0\r\n" { // the chunked body's end
					br.ReadString('\n')
					break
				}
			}
			after(c)
		}) + "/airports"
	}
	noReply := readBody(func(net.Conn) {})
	notHTTP := readBody(func(c net.Conn) { io.WriteString(c, "HTTP/1.1 two hundred OK\r\n\r\n") })
	stall := readBody(func(c net.Conn) { c.Read(make([]byte, 1)) }) // until the client gives up
	hangUp := "http://" + loadtest.ServeTCP(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n') // the request line: the client is sending
		c.(*net.TCPConn).SetLinger(0)       // a reset: the rest of the body cannot be sent
		c.Close()
	}) + "/airports"
	for _, c := range []struct {
		name    string
		o       BulkOptions
		want    string
		wantErr error
	}{
		{"no reply", BulkOptions{URL: noReply}, "load: bulk: reading the reply: ", nil},
		{"not HTTP", BulkOptions{URL: notHTTP}, "load: bulk: reading the reply: ", clientio.ErrMalformed},
		{"stalls", BulkOptions{URL: stall, Timeout: 300 * time.Millisecond}, "load: bulk: ", context.DeadlineExceeded},
		{"hangs up", BulkOptions{URL: hangUp, Records: 300_000}, "load: bulk: sending the body: ", nil},
		{"unknown format", BulkOptions{URL: noReply, Format: "yaml"}, "load: bulk: ", bulk.ErrFormat},
		{"not a URL", BulkOptions{URL: "ftp://127.0.0.1/x"}, "load: bulk: URL ", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.o.Format == "" {
				c.o.Format = bulk.FormatJSON
			}
			if c.o.Records == 0 {
				c.o.Records = 10
			}
			if c.o.Timeout == 0 {
				c.o.Timeout = 10 * time.Second
			}
			res, err := PostBulk(context.Background(), c.o)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Fatalf("%+v, %v; want an error %q… (%v)", res, err, c.want, c.wantErr)
			}
			if res.Status != 0 {
				t.Errorf("status %d without a reply", res.Status)
			}
		})
	}
}
