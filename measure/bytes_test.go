package measure

import (
	"context"
	"io"
	"net"
	"testing"
)

func TestCountingConnMatchesListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &Listener{Listener: ln}
	defer cl.Close()
	done := make(chan struct{})
	go func() { // echo server: reads 10 bytes, writes 25
		defer close(done)
		c, err := cl.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 10)
		io.ReadFull(c, buf)
		c.Write(make([]byte, 25))
	}()
	var b Bytes
	dial := CountingDialer((&net.Dialer{}).DialContext, &b)
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write(make([]byte, 10))
	io.ReadAll(c)
	c.Close()
	<-done
	if b.Out.Load() != 10 || b.In.Load() != 25 {
		t.Errorf("client out/in = %d/%d, want 10/25", b.Out.Load(), b.In.Load())
	}
	if cl.Bytes.In.Load() != b.Out.Load() || cl.Bytes.Out.Load() != b.In.Load() {
		t.Errorf("server in/out = %d/%d, client out/in = %d/%d",
			cl.Bytes.In.Load(), cl.Bytes.Out.Load(), b.Out.Load(), b.In.Load())
	}
}
