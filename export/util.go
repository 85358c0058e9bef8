package export

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
)

// NewRunID returns a random run ID: 12 hex digits.
func NewRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// readSome reads up to 512 bytes of an answer, for an error message.
func readSome(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 1<<20)) // let the connection be reused
	return strings.TrimSpace(string(b)), err
}

func strconvFormat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
