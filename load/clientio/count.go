package clientio

import "io"

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
