package payload

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"
)

// compressor compresses one message on its own, as an HTTP body is, and
// back. The levels are the servers' defaults: gzip 6 and zstd's default
// (as httpapi sends), brotli 4 (fasthttp's default, the level servers use
// on the fly).
type compressor struct {
	name   string
	level  string
	comp   func(dst *bytes.Buffer, src []byte) error
	decomp func(dst *bytes.Buffer, src []byte) error
}

// Compressions lists the codings the lab measures.
var Compressions = []string{"gzip", "zstd", "br"}

func newCompressors(names []string) ([]*compressor, error) {
	var out []*compressor
	for _, n := range names {
		c, err := newCompressor(n)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func newCompressor(name string) (*compressor, error) {
	switch name {
	case "gzip":
		w, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
		var r *gzip.Reader
		return &compressor{name: name, level: "6 (default)",
			comp: func(dst *bytes.Buffer, src []byte) error {
				w.Reset(dst)
				if _, err := w.Write(src); err != nil {
					return err
				}
				return w.Close()
			},
			decomp: func(dst *bytes.Buffer, src []byte) error {
				var err error
				if r == nil {
					r, err = gzip.NewReader(bytes.NewReader(src))
				} else {
					err = r.Reset(bytes.NewReader(src))
				}
				if err != nil {
					return err
				}
				_, err = dst.ReadFrom(r)
				return err
			}}, nil
	case "zstd":
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return nil, err
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return &compressor{name: name, level: "3 (default)",
			comp: func(dst *bytes.Buffer, src []byte) error {
				dst.Write(enc.EncodeAll(src, dst.AvailableBuffer()))
				return nil
			},
			decomp: func(dst *bytes.Buffer, src []byte) error {
				b, err := dec.DecodeAll(src, dst.AvailableBuffer())
				dst.Write(b)
				return err
			}}, nil
	case "br":
		w, err := brrr.NewWriter(io.Discard, 4)
		if err != nil {
			return nil, err
		}
		r := brrr.NewReader(bytes.NewReader(nil))
		return &compressor{name: name, level: "4",
			comp: func(dst *bytes.Buffer, src []byte) error {
				w.Reset(dst)
				if _, err := w.Write(src); err != nil {
					return err
				}
				return w.Close()
			},
			decomp: func(dst *bytes.Buffer, src []byte) error {
				r.Reset(bytes.NewReader(src))
				_, err := dst.ReadFrom(r)
				return err
			}}, nil
	}
	return nil, fmt.Errorf("%w: unknown compression %q (want gzip, zstd or br)", ErrInput, name)
}
