package clientio

import (
	"io"
	"time"
)

// CountReader counts the bytes read through it (Got): a client tells a
// connection closed before its response from one closed during it.
type CountReader struct {
	R   io.Reader
	Got int
}

func (g *CountReader) Read(p []byte) (int, error) {
	n, err := g.R.Read(p)
	g.Got += n
	return n, err
}

// Wake is a deadline in the past: it makes a blocked read or write
// return at once when the run's context ends.
var Wake = time.Unix(1, 0)
