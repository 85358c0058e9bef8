package grpcweb

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFramesRoundTrip(t *testing.T) {
	var body []byte
	body = AppendFrame(body, 0, []byte("hello"))
	body = AppendFrame(body, 0, nil)
	body = AppendFrame(body, FlagTrailer, []byte("grpc-status: 0\r\ngrpc-message: ok\r\n"))
	want := "\x00\x00\x00\x00\x05hello\x00\x00\x00\x00\x00\x80\x00\x00\x00\x22grpc-status: 0\r\ngrpc-message: ok\r\n"
	if string(body) != want {
		t.Fatalf("frames = %q\nwant     %q", body, want)
	}
	r := NewReader(bytes.NewReader(body), 64)
	for i, w := range []struct {
		flags byte
		p     string
	}{{0, "hello"}, {0, ""}, {FlagTrailer, "grpc-status: 0\r\ngrpc-message: ok\r\n"}} {
		f, p, err := r.Next()
		if err != nil || f != w.flags || string(p) != w.p {
			t.Fatalf("frame %d = %#x %q %v", i, f, p, err)
		}
		if f == FlagTrailer {
			h, err := ParseTrailers(p)
			if err != nil || h.Get("Grpc-Status") != "0" || h.Get("grpc-message") != "ok" {
				t.Fatalf("trailers %v %v", h, err)
			}
		}
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestReaderLimitsAndTruncation(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		max  int
		want error
	}{
		{"over the limit", "\x00\x00\x00\x00\x05hello", 4, ErrTooLarge},
		{"at the limit", "\x00\x00\x00\x00\x05hello", 5, nil},
		{"huge declared length, no allocation", "\x00\xff\xff\xff\xff", 0, ErrTooLarge},
		{"prefix cut", "\x00\x00\x00", 10, ErrTruncated},
		{"payload cut", "\x00\x00\x00\x00\x05hel", 10, ErrTruncated},
		{"unknown flag", "\x02\x00\x00\x00\x00", 10, ErrMalformed},
	} {
		_, _, err := NewReader(strings.NewReader(c.body), c.max).Next()
		if !errors.Is(err, c.want) && (c.want != nil || err != nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestParseTrailersRefusesMalformedLines(t *testing.T) {
	for _, p := range []string{"no colon\r\n", ": empty name\r\n", "bad name: x\r\n", "a\x00b: x"} {
		if _, err := ParseTrailers([]byte(p)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", p, err)
		}
	}
	h, err := ParseTrailers([]byte("grpc-status:3\r\n\r\ngrpc-message: bad%20id"))
	if err != nil || h.Get("grpc-status") != "3" || h.Get("grpc-message") != "bad%20id" {
		t.Fatalf("%v %v", h, err)
	}
}

// FuzzReader: any body either yields frames that re-encode to exactly the
// bytes consumed, within the limit, or a wrapped error; never a panic.
func FuzzReader(f *testing.F) {
	f.Add(AppendFrame(AppendFrame(nil, 0, []byte("x")), FlagTrailer, []byte("grpc-status: 0\r\n")), 16)
	f.Add([]byte("\x00\xff\xff\xff\xff"), 0)
	f.Add([]byte("\x80\x00\x00\x00\x01"), 1)
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		max = max%1024 + 1
		if max <= 0 {
			max += 1024
		}
		r := NewReader(bytes.NewReader(body), max)
		var again []byte
		for {
			flags, p, err := r.Next()
			if err == io.EOF {
				if !bytes.Equal(again, body) {
					t.Fatalf("re-encoded %q, read %q", again, body)
				}
				return
			}
			if err != nil {
				if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
					t.Fatalf("unexpected error %v", err)
				}
				if !bytes.HasPrefix(body, again) {
					t.Fatal("frames before the error are not a prefix of the body")
				}
				return
			}
			if len(p) > max {
				t.Fatalf("payload of %d bytes over the limit %d", len(p), max)
			}
			if flags&FlagTrailer != 0 {
				_, _ = ParseTrailers(p)
			}
			again = AppendFrame(again, flags, p)
		}
	})
}

// FuzzParseTrailers: what parses re-encodes to lines that parse to the
// same header.
func FuzzParseTrailers(f *testing.F) {
	f.Add([]byte("grpc-status: 0\r\ngrpc-message: ok\r\n"))
	f.Add([]byte("a:b"))
	f.Fuzz(func(t *testing.T, p []byte) {
		h, err := ParseTrailers(p)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		var b bytes.Buffer
		for k, vs := range h {
			for _, v := range vs {
				b.WriteString(k + ": " + v + "\r\n")
			}
		}
		h2, err := ParseTrailers(b.Bytes())
		if err != nil || len(h2) != len(h) {
			t.Fatalf("re-encoded %q: %v %v (from %v)", b.Bytes(), h2, err, h)
		}
		for k := range h {
			if strings.Join(h2[k], "\x00") != strings.Join(h[k], "\x00") {
				t.Fatalf("%s: %q vs %q", k, h2[k], h[k])
			}
		}
	})
}
