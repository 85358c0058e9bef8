package study

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// payloadRepeats is how many identical requests each wire figure averages
// over, on a warm connection: the steady state (HPACK has indexed the
// headers, the HTTP/2 preface is behind us), which is what a long-lived
// client pays per request.
const payloadRepeats = 10

// measurePayloads lists users and todos of each size in every format over
// every transport, compressed and not, and counts the response bytes: the
// body, and everything on the socket (fairness rule 5: never Content-Length,
// never proto.Size alone).
func measurePayloads(ctx context.Context, sizes []int) ([]results.Payload, error) {
	var out []results.Payload
	for _, n := range sizes {
		srv, err := server.Start(ctx, server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: n, SeedTodos: n})
		if err != nil {
			return nil, err
		}
		rows, err := payloadsAt(ctx, srv, n)
		srv.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

func payloadsAt(ctx context.Context, srv *server.Server, n int) ([]results.Payload, error) {
	var out []results.Payload
	for _, transport := range []string{"http1", "h2c"} {
		for _, format := range codec.Formats() {
			e := codec.MustLookup(format)
			for _, ds := range []string{"users", "todos"} {
				var plain int64
				for _, coding := range []string{"", "gzip", "zstd"} { // identity first: its body is the format's size
					body, wire, err := httpResponseSize(ctx, transport, "http://"+srv.HTTPAddr()+"/"+ds, e.MediaTypes[0], coding)
					if err != nil {
						return nil, fmt.Errorf("payload %s %s %s %s n=%d: %w", transport, format, coding, ds, n, err)
					}
					p := results.Payload{Dataset: ds, N: n, Format: format, Transport: transport, Compression: coding, Body: body, Wire: wire}
					if coding == "" {
						plain = body
					} else {
						p.Body, p.Coded = plain, body
					}
					out = append(out, p)
				}
			}
		}
	}
	for _, coding := range []string{"", "gzip"} {
		for _, ds := range []string{"users", "todos"} {
			body, wire, err := grpcResponseSize(ctx, srv.GRPCAddr(), ds, coding)
			if err != nil {
				return nil, fmt.Errorf("payload grpc %s %s n=%d: %w", coding, ds, n, err)
			}
			out = append(out, results.Payload{Dataset: ds, N: n, Format: "protobuf", Transport: "grpc", Compression: coding, Body: body, Wire: wire})
		}
	}
	return out, nil
}

// httpResponseSize returns the response body length and the response bytes
// read from the socket per request, averaged over payloadRepeats requests
// on one warm connection.
func httpResponseSize(ctx context.Context, transport, url, accept, coding string) (body, wire int64, err error) {
	var n measure.Bytes
	tr := &http.Transport{
		DialContext:         measure.CountingDialer((&net.Dialer{}).DialContext, &n),
		DisableCompression:  true, // count the coded bytes, decode nothing
		MaxIdleConnsPerHost: 1,
	}
	if transport == "h2c" {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	get := func() (int64, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Accept", accept)
		if coding != "" {
			req.Header.Set("Accept-Encoding", coding)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != coding {
			return 0, fmt.Errorf("status %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
		return io.Copy(io.Discard, resp.Body)
	}
	if _, err := get(); err != nil { // warm: dial, preface, HPACK table
		return 0, 0, err
	}
	settle()
	in0 := n.In.Load()
	for range payloadRepeats {
		if body, err = get(); err != nil {
			return 0, 0, err
		}
	}
	settle()
	return body, (n.In.Load() - in0) / payloadRepeats, nil
}

// grpcResponseSize does the same for the List RPC: the body is the
// protobuf message, the wire adds gRPC and HTTP/2 framing and headers.
func grpcResponseSize(ctx context.Context, addr, dataset, coding string) (body, wire int64, err error) {
	var n measure.Bytes
	dial := measure.CountingDialer((&net.Dialer{}).DialContext, &n)
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }),
	}
	if coding != "" {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.UseCompressor(coding)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	call := func() (int64, error) {
		switch dataset {
		case "users":
			m, err := pb.NewUserServiceClient(conn).List(ctx, &pb.ListUsersRequest{})
			return int64(proto.Size(m)), err
		default:
			m, err := pb.NewTodoServiceClient(conn).List(ctx, &pb.ListTodosRequest{})
			return int64(proto.Size(m)), err
		}
	}
	if _, err := call(); err != nil {
		return 0, 0, err
	}
	settle()
	in0 := n.In.Load()
	for range payloadRepeats {
		if body, err = call(); err != nil {
			return 0, 0, err
		}
	}
	settle()
	return body, (n.In.Load() - in0) / payloadRepeats, nil
}

// settle lets HTTP/2 control frames that trail a response (WINDOW_UPDATE,
// PING acks) arrive before the counters are read, so they are attributed
// consistently.
func settle() { time.Sleep(30 * time.Millisecond) }

// measureRecordPayloads lists the user's records (serve --data) in each
// format they are served in, over each transport, compressed and not, as
// measurePayloads lists users; each format's list is first read whole and
// checked against the records.
func measureRecordPayloads(ctx context.Context, ds *payload.Dataset) ([]results.Payload, error) {
	srv, err := server.Start(ctx, server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, HTTP: httpapi.Options{Records: ds}})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	url := "http://" + srv.HTTPAddr() + "/records"
	var out []results.Payload
	for _, format := range ds.Formats() {
		if format == "json-fast" { // the same bytes as json, served by --json-lib std here
			continue
		}
		mt := codec.MustLookup(format).MediaTypes[0]
		if err := checkRecordList(ctx, url, mt, format, ds); err != nil {
			return nil, fmt.Errorf("payload %s: the list differs from the data: %w", format, err)
		}
		for _, transport := range []string{"http1", "h2c"} {
			var plain int64
			for _, coding := range []string{"", "gzip", "zstd"} {
				body, wire, err := httpResponseSize(ctx, transport, url, mt, coding)
				if err != nil {
					return nil, fmt.Errorf("payload %s %s %s records: %w", transport, format, coding, err)
				}
				p := results.Payload{Dataset: "records", N: ds.Len(), Format: format, Transport: transport, Compression: coding, Body: body, Wire: wire}
				if coding == "" {
					plain = body
				} else {
					p.Body, p.Coded = plain, body
				}
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// checkRecordList GETs url in media type mt and checks the list.
func checkRecordList(ctx context.Context, url, mt, format string, ds *payload.Dataset) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", mt)
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	return ds.CheckList(format, body, 0)
}
