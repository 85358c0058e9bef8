package resp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

// The AOF's layout (the format diagram in kv/aofformat.go): magic, 16-byte
// file ID and a checksum, then records with 16-byte headers.
const aofFileHead, aofFrameHead = 28, 16

// engineAOF runs one history of commands over RESP through engine, over
// an AOF with appendfsync always, and returns the file's bytes and where
// each record ends (ends[0]: the end of the file header).
func engineAOF(t *testing.T, engine string) ([]byte, []int64) {
	t.Helper()
	dir := t.TempDir()
	st, err := kv.Open(kv.Options{Dir: dir, Fsync: kv.FsyncAlways, RewritePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen("127.0.0.1:0", st, Options{Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addr())
	for i := range 12 {
		for _, cmd := range [][]string{
			{"SET", fmt.Sprint("k", i%3), fmt.Sprint("v", i)},
			{"INCR", "ctr"},
			{"APPEND", "log", fmt.Sprint(i, ";")},
		} {
			if r := c.do(t, cmd...); strings.HasPrefix(r, "-") {
				t.Fatalf("%s: %q: %s", engine, cmd, r)
			}
		}
		if i%4 == 3 {
			c.do(t, "MSET", "m", fmt.Sprint(i), fmt.Sprint("k", (i+1)%3), "mset")
			c.do(t, "DEL", fmt.Sprint("k", i%3))
		}
	}
	srv.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, kv.AOFName))
	if err != nil {
		t.Fatal(err)
	}
	ends := []int64{aofFileHead}
	for off := int64(aofFileHead); off < int64(len(b)); {
		off += aofFrameHead + int64(binary.LittleEndian.Uint32(b[off:]))
		ends = append(ends, off)
	}
	if ends[len(ends)-1] != int64(len(b)) || len(ends) < 40 {
		t.Fatalf("%s: %d records ending at %d of %d bytes", engine, len(ends)-1, ends[len(ends)-1], len(b))
	}
	return b, ends
}

// TestSplicedAOFsOfEveryEngine: the same commands sent to each RESP
// engine, each over its own data directory, give three files of one
// history that share no record (each file has its own ID); a record of
// one copied into another in place of its own or inserted, or a tail
// copied over, is refused at that record's offset, with the file left
// as it was.
func TestSplicedAOFsOfEveryEngine(t *testing.T) {
	engines := []string{EngineLoop, EngineOwn, EngineRedcon}
	data := map[string][]byte{}
	ends := map[string][]int64{}
	for _, e := range engines {
		data[e], ends[e] = engineAOF(t, e)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, kv.AOFName)
	tried := 0
	for _, host := range engines {
		for _, donor := range engines {
			if host == donor {
				continue
			}
			h, he, d, de := data[host], ends[host], data[donor], ends[donor]
			rec := func(b []byte, e []int64, i int) []byte { return b[e[i]:e[i+1]] }
			n := min(len(he), len(de)) - 1
			for i := range n {
				for what, file := range map[string][]byte{
					"record replaced":  slices.Concat(h[:he[i]], rec(d, de, i), h[he[i+1]:]),
					"record inserted":  slices.Concat(h[:he[i]], rec(d, de, i), h[he[i]:]),
					"tail copied over": slices.Concat(h[:he[i]], d[de[i]:]),
				} {
					tried++
					if err := os.WriteFile(path, file, 0o644); err != nil {
						t.Fatal(err)
					}
					st, err := kv.Open(kv.Options{Dir: dir, Fsync: kv.FsyncNo, RewritePercent: -1})
					var ce *kv.CorruptError
					switch {
					case err == nil:
						t.Errorf("%s <- %s: %s at record %d: started with %d keys, want a refusal at offset %d", host, donor, what, i, st.Len(), he[i])
						st.Close()
					case !errors.As(err, &ce) || ce.Offset != he[i] || !strings.Contains(err.Error(), fmt.Sprint("offset ", he[i])):
						t.Errorf("%s <- %s: %s at record %d: %v, want a refusal at offset %d", host, donor, what, i, err, he[i])
					default:
						if after, _ := os.ReadFile(path); !bytes.Equal(after, file) {
							t.Errorf("%s <- %s: %s at record %d: a refused start changed the file", host, donor, what, i)
						}
					}
				}
			}
		}
	}
	t.Logf("%d splices between the files of %d engines (%d records each), every one refused at its offset unless reported above", tried, len(engines), len(ends[engines[0]])-1)
}
