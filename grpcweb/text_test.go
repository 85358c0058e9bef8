package grpcweb

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestTextRoundTripWithPaddedChunks(t *testing.T) {
	var enc bytes.Buffer
	w := NewTextWriter(&enc)
	chunks := []string{"\x00\x00\x00\x00\x02", "\x08\x01", "", "x", "\x80\x00\x00\x00\x0fgrpc-status: 0\r\n"}
	for _, c := range chunks {
		if _, err := w.Write([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	want := "AAAAAAI=CAE=eA==gAAAAA9ncnBjLXN0YXR1czogMA0K"
	if enc.String() != want {
		t.Fatalf("encoded %q\nwant    %q", enc.String(), want)
	}
	got, err := io.ReadAll(NewTextReader(&enc))
	if err != nil || string(got) != strings.Join(chunks, "") {
		t.Fatalf("decoded %q, %v", got, err)
	}
}

func TestTextReaderRefusesMalformed(t *testing.T) {
	for _, in := range []string{"AAA", "AA=A", "****", "AAAAA", "AA\nA"} {
		if _, err := io.ReadAll(NewTextReader(strings.NewReader(in))); !errors.Is(err, ErrBase64) {
			t.Errorf("%q: %v, want ErrBase64", in, err)
		}
	}
}

// FuzzTextReader: any input decodes exactly as its 4-character groups
// decode one by one with the standard library, or is ErrBase64.
func FuzzTextReader(f *testing.F) {
	f.Add([]byte("AAAAAAI=CAE=eA=="))
	f.Add([]byte("AA=="))
	f.Add([]byte("A==="))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := io.ReadAll(NewTextReader(bytes.NewReader(in)))
		var want []byte
		ok := len(in)%4 == 0
		for i := 0; ok && i < len(in); i += 4 {
			var b [3]byte
			n, derr := base64.StdEncoding.Decode(b[:], in[i:i+4])
			ok = derr == nil
			want = append(want, b[:n]...)
		}
		if ok != (err == nil) {
			t.Fatalf("%q: error %v, stdlib per group ok=%v", in, err, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrBase64) {
				t.Fatalf("%q: unexpected error %v", in, err)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: decoded %x, want %x", in, got, want)
		}
		// And what the writer makes of it decodes back.
		var enc bytes.Buffer
		NewTextWriter(&enc).Write(got)
		again, err := io.ReadAll(NewTextReader(&enc))
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("re-encoded %q: %x %v", enc.Bytes(), again, err)
		}
	})
}
