package payload

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// ReadProgress is how far the reading of one input file is: the bytes
// read of its size, the samples read so far (over every file) and the
// time since the file was opened. Reading and parsing is most of a large
// file's run (the measuring works on at most --sample samples).
type ReadProgress struct {
	File    string
	Read    int64
	Size    int64
	Samples int
	Elapsed time.Duration
	// Done is the last report of the file.
	Done bool
}

// Left is the time the file's reading should take still, at the rate so
// far; negative when nothing was read yet.
func (p ReadProgress) Left() time.Duration {
	if p.Read <= 0 || p.Elapsed <= 0 {
		return -1
	}
	left := float64(p.Elapsed) * float64(p.Size-p.Read) / float64(p.Read)
	return time.Duration(max(left, 0))
}

// progressEvery is how often a file's reading is reported at most.
const progressEvery = 250 * time.Millisecond

// progressReader counts the bytes read from r and reports them at most
// every progressEvery, and once at the end (Done, from readFile).
type progressReader struct {
	r      io.Reader
	p      ReadProgress
	start  time.Time
	next   time.Time
	report func(ReadProgress)
	seen   func() int
}

func newProgressReader(r io.Reader, file string, size int64, report func(ReadProgress), seen func() int) *progressReader {
	now := time.Now()
	return &progressReader{r: r, p: ReadProgress{File: file, Size: size}, start: now, next: now.Add(progressEvery), report: report, seen: seen}
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.p.Read += int64(n)
	if now := time.Now(); !now.Before(pr.next) {
		pr.next = now.Add(progressEvery)
		pr.send(now, false)
	}
	return n, err
}

func (pr *progressReader) send(now time.Time, done bool) {
	pr.p.Samples, pr.p.Elapsed, pr.p.Done = pr.seen(), now.Sub(pr.start), done
	pr.report(pr.p)
}

// progressBarWidth is the bar's cells: with the figures beside it the
// line fits an 80-column terminal.
const progressBarWidth = 20

// FormatReadProgress renders one line of a file's reading: "big.jsonl
// [=======>    ] 42%  400.0 MiB of 1000 MiB  12s  ETA 17s  812,345 samples".
func FormatReadProgress(p ReadProgress) string {
	frac := 1.0
	if p.Size > 0 {
		frac = min(max(float64(p.Read)/float64(p.Size), 0), 1)
	}
	fill := int(frac * progressBarWidth)
	bar := strings.Repeat("=", fill)
	if fill < progressBarWidth {
		bar += ">" + strings.Repeat(" ", progressBarWidth-fill-1)
	}
	eta := "?"
	if left := p.Left(); left >= 0 {
		eta = roundSeconds(left).String()
	}
	if p.Done {
		eta = "done"
	}
	return fmt.Sprintf("%s [%s] %3.0f%%  %s of %s  %s  ETA %s  %s samples", p.File, bar, frac*100,
		measure.FormatBytes(float64(p.Read)), measure.FormatBytes(float64(p.Size)), roundSeconds(p.Elapsed), eta, results.FormatInt(int64(p.Samples)))
}

func roundSeconds(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
