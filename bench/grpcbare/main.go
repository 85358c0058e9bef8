// Command grpcbare calls wirebench.v1.UserService/Get over one HTTP/2
// connection with nothing but a framer: one goroutine writes each call's
// HEADERS and DATA in one flush and reads its reply, one call at a time.
// It measures the server's share of gRPC's latency at c=1 (issue 17):
// grpc-go's client (ours, ghz) adds goroutine hand-offs of its own;
// bench/grpc-p50.sh runs this beside them.
//
// usage: grpcbare [-n calls] [-id user] host:port
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/pb"
)

func main() {
	n := flag.Int("n", 20000, "calls, one at a time")
	id := flag.Int64("id", 1, "user id to get")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: grpcbare [-n calls] [-id user] host:port")
		os.Exit(2)
	}
	lat, err := run(flag.Arg(0), *n, *id)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcbare:", err)
		os.Exit(1)
	}
	slices.Sort(lat)
	fmt.Printf("calls %d  p50 %.1f us  p99 %.1f us\n", len(lat),
		float64(lat[len(lat)/2].Nanoseconds())/1e3, float64(lat[len(lat)*99/100].Nanoseconds())/1e3)
}

// run makes n Get calls on one connection to addr and returns each call's
// latency (HEADERS written to trailers read). Any call that does not
// answer status 0 with user id is an error.
func run(addr string, n int, id int64) ([]time.Duration, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	bw, br := bufio.NewWriterSize(c, 16<<10), bufio.NewReaderSize(c, 16<<10)
	fr := http2.NewFramer(bw, br)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	io.WriteString(bw, http2.ClientPreface)
	// A large window, as our gRPC client sets: no flow-control stalls.
	const window = 1 << 20
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}); err != nil {
		return nil, err
	}
	if err := fr.WriteWindowUpdate(0, window-65535); err != nil {
		return nil, err
	}
	req, err := proto.Marshal(&pb.GetUserRequest{Id: id})
	if err != nil {
		return nil, err
	}
	msg := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(req))) // gRPC's length prefix, uncompressed
	msg = append(msg, req...)
	var hb bytes.Buffer
	he := hpack.NewEncoder(&hb)
	lat := make([]time.Duration, 0, n)
	unacked := 0 // connection-level bytes received since the last WINDOW_UPDATE
	for i := range n {
		stream := uint32(2*i + 1)
		start := time.Now()
		hb.Reset()
		for _, f := range [...][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/wirebench.v1.UserService/Get"},
			{":authority", addr}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			he.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
			return nil, err
		}
		if err := fr.WriteData(stream, true, msg); err != nil {
			return nil, err
		}
		if err := bw.Flush(); err != nil {
			return nil, err
		}
		var body []byte
		for done := false; !done; {
			f, err := fr.ReadFrame()
			if err != nil {
				return nil, fmt.Errorf("call %d: %w", i, err)
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					fr.WriteSettingsAck()
				}
			case *http2.PingFrame:
				if !f.IsAck() {
					fr.WritePing(true, f.Data)
				}
			case *http2.GoAwayFrame:
				return nil, fmt.Errorf("call %d: GOAWAY %v", i, f.ErrCode)
			case *http2.RSTStreamFrame:
				return nil, fmt.Errorf("call %d: RST_STREAM %v", i, f.ErrCode)
			case *http2.DataFrame:
				if f.StreamID == stream {
					body = append(body, f.Data()...)
				}
				if unacked += int(f.Length); unacked > window/2 {
					fr.WriteWindowUpdate(0, uint32(unacked))
					unacked = 0
				}
			case *http2.MetaHeadersFrame:
				if f.StreamID != stream {
					continue
				}
				if s := f.PseudoValue("status"); s != "" && s != "200" {
					return nil, fmt.Errorf("call %d: HTTP status %s", i, s)
				}
				if !f.StreamEnded() {
					continue
				}
				// Trailers (or a trailers-only reply) end the call.
				if got := headerValue(f, "grpc-status"); got != "0" {
					return nil, fmt.Errorf("call %d: grpc-status %q: %s", i, got, headerValue(f, "grpc-message"))
				}
				done = true
			}
		}
		if err := bw.Flush(); err != nil { // acks and window updates
			return nil, err
		}
		lat = append(lat, time.Since(start))
		if err := checkUser(body, id); err != nil {
			return nil, fmt.Errorf("call %d: %w", i, err)
		}
	}
	return lat, nil
}

func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, h := range f.RegularFields() {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

// checkUser decodes one length-prefixed, uncompressed gRPC message.
func checkUser(body []byte, id int64) error {
	if len(body) < 5 || body[0] != 0 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		return fmt.Errorf("reply is not one uncompressed gRPC message (%d bytes)", len(body))
	}
	var u pb.User
	if err := proto.Unmarshal(body[5:], &u); err != nil {
		return err
	}
	if u.GetId() != id {
		return errors.New("reply is another user")
	}
	return nil
}
