package h2

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"google.golang.org/grpc/metadata"
	"net"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// GRPCPool is a fixed set of gRPC connections shared by the VUs, VU i
// using connection i mod n: the connection count is explicit, and the
// concurrent streams per connection are VUs/n (recorded in the result's
// configuration). Bytes are counted on the TCP connections beneath gRPC,
// so they include HTTP/2 and gRPC framing; message sizes are the body.
//
// The connections are the lean client's (grpc.go) when lean is set,
// else grpc-go's (--client std). With a TLS configuration they run over
// TLS offering h2 by ALPN (a server that does not pick it is refused), as
// grpc-go's TLS credentials do; the bytes counted are then the TLS
// records'.
type GRPCPool struct {
	conns []*grpc.ClientConn // --client std
	lean  []*GRPCConn        // --client lean
	// Bytes are those of every connection (if NewGRPCPool counts them).
	Bytes measure.Bytes
}

func NewGRPCPool(addr string, n int, timeout time.Duration, count, lean bool, tlsCfg *tls.Config) (*GRPCPool, error) {
	if n <= 0 {
		n = 1
	}
	p := &GRPCPool{}
	d := &net.Dialer{Timeout: timeout}
	dial := measure.DialFunc(d.DialContext)
	var counter *measure.Bytes
	if count {
		counter = &p.Bytes
	}
	if lean {
		dial = RawIODialer(dial, counter) // raw system calls: see RawIODialer
		if tlsCfg != nil {
			dial = tlsDialer(dial, tlsCfg)
		}
		p.lean = make([]*GRPCConn, n)
		for i := range p.lean {
			p.lean[i] = NewGRPCConn(addr, dial)
		}
		return p, nil
	}
	if count {
		dial = measure.CountingDialer(dial, counter)
	}
	creds := insecure.NewCredentials()
	if tlsCfg != nil {
		creds = credentials.NewTLS(tlsCfg) // offers h2 by ALPN itself
	}
	p.conns = make([]*grpc.ClientConn, n)
	for i := range p.conns {
		c, err := grpc.NewClient("passthrough:///"+addr,
			grpc.WithTransportCredentials(creds),
			grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }),
			// A static window turns off grpc-go's BDP estimation, whose
			// PING and ACK per burst of data are frames, writes and
			// wake-ups a load client should not add to each call; 1 MiB
			// is what the reference server's h2c and gRPC windows are.
			grpc.WithInitialWindowSize(GRPCWindow),
			grpc.WithInitialConnWindowSize(GRPCWindow),
			// (A shared write buffer is grpc-go's default.)
		)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("%w: gRPC client for %s: %v", results.ErrOptions, addr, err)
		}
		p.conns[i] = c
	}
	return p, nil
}

// Close closes every connection.
func (p *GRPCPool) Close() {
	for _, c := range p.conns {
		if c != nil {
			c.Close()
		}
	}
	for _, c := range p.lean {
		c.Close()
	}
}

// Client is VU vu's client: connection vu mod n, calls bounded by
// timeout. Not safe for concurrent use.
func (p *GRPCPool) Client(vu int, timeout time.Duration) *GRPCClient {
	c := &GRPCClient{timeout: timeout}
	if p.lean != nil {
		c.lean = p.lean[vu%len(p.lean)]
		c.call = NewCall()
	} else {
		c.std = p.conns[vu%len(p.conns)]
	}
	return c
}

// GRPCClient is one VU's view of the pool.
type GRPCClient struct {
	std     *grpc.ClientConn
	lean    *GRPCConn
	call    Call   // the lean client's call state, reused
	req     []byte // the lean client's request buffer, reused
	timeout time.Duration

	// The last call's message sizes: the lean client has them from the
	// wire (proto.Size, which grpc-go's path needs, was 3-4% of a call's
	// client CPU).
	sizeOut, sizeIn int

	// The calls' timeout context, shared by the VU's successive calls
	// while more than 90% of the timeout is left, as h1.Conn re-arms its
	// deadline: a context, its timer and its place among the parent's
	// children once per tenth of the timeout instead of once per call,
	// and the lean client's reader watches one context (issue 17). A call
	// times out anywhere in [0.9·timeout, timeout].
	tctx, tparent context.Context
	tcancel       context.CancelFunc
	tdeadline     time.Time

	trace []byte // the next call's traceparent value (SetTraceparent)
	meta  metadata.MD
}

// SetMetadata makes every following call send md (keys lower-case, as
// gRPC metadata is). The lean client encodes it with the call's fixed
// headers; grpc-go adds it to each call's context.
func (c *GRPCClient) SetMetadata(md [][2]string) {
	c.call.meta = md
	c.meta = metadata.MD{}
	for _, kv := range md {
		c.meta.Append(kv[0], kv[1])
	}
}

// ClientConn is the grpc-go connection VU vu's calls would use, nil
// when the pool is the lean client's: streams and server reflection need
// grpc-go's.
func (p *GRPCPool) ClientConn(vu int) *grpc.ClientConn {
	if p.conns == nil {
		return nil
	}
	return p.conns[vu%len(p.conns)]
}

// Lean reports whether the client is the lean one (InvokeEncoded's).
func (c *GRPCClient) Lean() bool { return c.lean != nil }

// InvokeEncoded is Invoke of a request already encoded as one gRPC
// message, its 5-byte prefix included (AppendGRPCMessage), so that a
// request the caller encodes once is not encoded per call. Lean client
// only; req must not change until the call returns.
func (c *GRPCClient) InvokeEncoded(ctx context.Context, method string, req []byte, out proto.Message) error {
	if c.lean == nil {
		return errors.New("h2: InvokeEncoded is the lean client's")
	}
	if err := c.lean.Invoke(ctx, &c.call, method, req, out); err != nil {
		c.sizeOut = len(req) - 5
		return err
	}
	c.sizeOut, c.sizeIn = len(req)-5, len(c.call.Reply())-5
	return nil
}

// SetTraceparent makes the following calls send traceparent: value as
// gRPC metadata (a header of the call), as --traceparent does on HTTP;
// nil sends none. value is copied.
func (c *GRPCClient) SetTraceparent(value []byte) {
	c.trace = append(c.trace[:0], value...)
	c.call.trace = c.trace
}

// CallCtx is ctx with the per-call timeout (see tctx).
func (c *GRPCClient) CallCtx(ctx context.Context) context.Context {
	if c.timeout <= 0 {
		return ctx
	}
	now := time.Now()
	if c.tctx == nil || c.tparent != ctx || c.tdeadline.Sub(now) < c.timeout*9/10 || c.tctx.Err() != nil {
		if c.tcancel != nil {
			c.tcancel()
		}
		c.tdeadline = now.Add(c.timeout)
		c.tctx, c.tcancel = context.WithDeadline(ctx, c.tdeadline)
		c.tparent = ctx
	}
	return c.tctx
}

// Close releases the shared timeout context.
func (c *GRPCClient) Close() {
	if c.tcancel != nil {
		c.tcancel()
	}
}

// Invoke makes one unary call with either client.
// On success, Sizes are the messages' sizes.
func (c *GRPCClient) Invoke(ctx context.Context, method string, in, out proto.Message) error {
	if c.lean == nil {
		if len(c.meta) > 0 {
			ctx = metadata.NewOutgoingContext(ctx, c.meta)
		}
		if len(c.trace) > 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, "traceparent", string(c.trace))
		}
		err := c.std.Invoke(ctx, method, in, out)
		if err == nil {
			c.sizeOut, c.sizeIn = proto.Size(in), proto.Size(out)
		}
		return err
	}
	var err error
	if c.req, err = AppendGRPCMessage(c.req[:0], in); err != nil {
		return err
	}
	if err := c.lean.Invoke(ctx, &c.call, method, c.req, out); err != nil {
		return err
	}
	c.sizeOut, c.sizeIn = len(c.req)-5, len(c.call.Reply())-5 // one message each, after its 5-byte prefix
	return nil
}

// Sizes are the last successful call's message sizes, without their
// 5-byte prefixes.
func (c *GRPCClient) Sizes() (out, in int) { return c.sizeOut, c.sizeIn }

// SentSize is the size of request message in as the last call sent it: the
// lean client's encoded request, else proto.Size (a failed call has no
// Sizes).
func (c *GRPCClient) SentSize(in proto.Message) int {
	if c.lean == nil || len(c.req) == 0 {
		return proto.Size(in)
	}
	return len(c.req) - 5
}

// tlsDialer runs TLS over dial's connections, offering h2 by ALPN, the
// handshake bounded by the dial's context; a server that does not pick h2
// is refused (a gRPC server must, RFC 9113 §3.3).
func tlsDialer(dial measure.DialFunc, cfg *tls.Config) measure.DialFunc {
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			tc.Close()
			return nil, fmt.Errorf("TLS with %s: the server chose %q by ALPN, not h2: not a gRPC server?", addr, p)
		}
		return tc, nil
	}
}
