package resp

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// client is a raw RESP connection for tests: it sends commands as
// multibulk arrays and renders replies in one canonical text form, so two
// servers' replies compare as strings.
type client struct {
	c  net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, br: bufio.NewReader(c)}
}

func encodeCmd(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

func (c *client) send(args ...string) error {
	_, err := c.c.Write(encodeCmd(args...))
	return err
}

func (c *client) do(t testing.TB, args ...string) string {
	t.Helper()
	if err := c.send(args...); err != nil {
		t.Fatalf("send %q: %v", args, err)
	}
	s, err := c.read()
	if err != nil {
		t.Fatalf("reply to %q: %v", args, err)
	}
	return s
}

// read renders one reply: +s, -s, :n, "bulk", nil, [a b], {k: v}.
func (c *client) read() (string, error) {
	line, err := c.br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+', '-', ':':
		return line, nil
	case '_':
		return "nil", nil
	case '$', '=':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "nil", nil
		}
		b := make([]byte, n+2)
		if _, err := ioReadFull(c.br, b); err != nil {
			return "", err
		}
		return strconv.Quote(string(b[:n])), nil
	case '*', '%', '~':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "nil", nil
		}
		if line[0] == '%' {
			n *= 2
		}
		parts := make([]string, n)
		for i := range parts {
			if parts[i], err = c.read(); err != nil {
				return "", err
			}
		}
		return "[" + strings.Join(parts, " ") + "]", nil
	}
	return "", fmt.Errorf("unknown reply type %q", line)
}

func ioReadFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
