package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/kv"
)

// TestServeRefusesCorruptAOF is issue 34's reproduction with the real
// binary: write keys (SETs and APPENDs) through serve with appendfsync
// always, kill -9, flip the high byte of a mid-file record's length and
// restart: serve must exit non-zero naming the offset; with --aof-repair
// it starts, keeps the records before the damage and says what it
// dropped.
func TestServeRefusesCorruptAOF(t *testing.T) {
	bin := testkit.Binary(t)
	dir := t.TempDir()
	const keys = 200
	cmd, addr := startRESP(t, bin, dir)
	do := respDo(t, addr)
	for i := range keys {
		k := fmt.Sprint("k", i)
		if got := do("SET", k, fmt.Sprint("v", i)); got != "+OK" {
			t.Fatalf("SET: %s", got)
		}
		if got := do("APPEND", k, "+a"); !strings.HasPrefix(got, ":") {
			t.Fatalf("APPEND: %s", got)
		}
	}
	cmd.Signal(syscall.SIGKILL) // every write above was acknowledged after its fsync
	cmd.Wait()

	// Find record `keys` (the SET of key keys/2) and flip its length's
	// high byte: +16 MiB, past the end of the file.
	path := filepath.Join(dir, kv.AOFName)
	d, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := aofRecordStarts(t, d)[keys]
	d[off+3] ^= 1
	os.WriteFile(path, d, 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--resp", "127.0.0.1:0", "--data-dir", dir, "--appendfsync", "always").CombinedOutput()
	if err == nil {
		t.Fatalf("serve started on a corrupt AOF: %v\n%s", err, out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("serve: %v, want a non-zero exit\n%s", err, out)
	}
	for _, w := range []string{fmt.Sprint("offset ", off), fmt.Sprint(keys-1, " intact records"), "--aof-repair"} {
		if !strings.Contains(string(out), w) {
			t.Fatalf("refusal does not say %q:\n%s", w, out)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, d) {
		t.Fatal("a refused start changed the AOF")
	}
	t.Logf("refused: %s", bytes.TrimSpace(out))

	var stderr bytes.Buffer
	cmd, addr = startRESP(t, bin, dir, &stderr, "--aof-repair")
	do = respDo(t, addr)
	// Records before the flip: SET and APPEND of keys 0..keys/2-1.
	if got := do("DBSIZE"); got != fmt.Sprint(":", keys/2) {
		t.Fatalf("DBSIZE after repair = %s, want %d", got, keys/2)
	}
	if got := do("GET", fmt.Sprint("k", keys/2-1)); got != "$"+fmt.Sprint(len(fmt.Sprint("v", keys/2-1, "+a"))) {
		t.Fatalf("GET of the last key kept: %s", got)
	}
	cmd.Signal(syscall.SIGKILL)
	cmd.Wait() // stderr is complete
	want := regexp.MustCompile(fmt.Sprintf(`--aof-repair: truncated at offset %d, dropping %d bytes: the bad record and the %d intact records after it; kept %d records`, off, int64(len(d))-off, keys-1, keys))
	if !want.Match(stderr.Bytes()) {
		t.Fatalf("repair log does not say what it dropped:\n%s", stderr.String())
	}
	t.Logf("repaired: %s", bytes.TrimSpace(stderr.Bytes()))
}

// aofRecordStarts returns the offset of each record of an AOF of the
// current format, and the file's size last.
func aofRecordStarts(t *testing.T, d []byte) []int64 {
	t.Helper()
	// The format diagram in kv/aofformat.go: magic, 16-byte file ID and a
	// checksum, then records with 16-byte headers.
	const magic, fileHead, head = "WBKVAOF4", 28, 16
	if !bytes.HasPrefix(d, []byte(magic)) {
		t.Fatalf("AOF starts %q, want %q", d[:min(len(d), 8)], magic)
	}
	starts := []int64{fileHead}
	for off := starts[0]; off < int64(len(d)); {
		off += head + int64(binary.LittleEndian.Uint32(d[off:]))
		starts = append(starts, off)
	}
	return starts
}

// TestServeRefusesDroppedAOFRecord is the finding of a removed record
// with the real binary: INCR a counter 20 times under appendfsync
// always, kill -9, remove the record of the 14th INCR (every record's
// own checksums still hold) and restart. The old format started with
// ctr = 19 and a word; now serve exits non-zero naming the offset, and
// --aof-repair keeps the 13 INCRs before it.
func TestServeRefusesDroppedAOFRecord(t *testing.T) {
	bin := testkit.Binary(t)
	dir := t.TempDir()
	cmd, addr := startRESP(t, bin, dir)
	do := respDo(t, addr)
	for i := range 20 {
		if got := do("INCR", "ctr"); got != fmt.Sprint(":", i+1) {
			t.Fatalf("INCR: %s", got)
		}
	}
	cmd.Signal(syscall.SIGKILL)
	cmd.Wait()

	path := filepath.Join(dir, kv.AOFName)
	d, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	starts := aofRecordStarts(t, d)
	if len(starts) != 21 {
		t.Fatalf("%d records, want the 20 INCRs", len(starts)-1)
	}
	off := starts[13]
	d = append(d[:off:off], d[starts[14]:]...) // the 14th INCR's record
	os.WriteFile(path, d, 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--resp", "127.0.0.1:0", "--data-dir", dir, "--appendfsync", "always").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("serve on an AOF missing a record: %v, want a non-zero exit\n%s", err, out)
	}
	for _, w := range []string{fmt.Sprint("offset ", off), "record out of order: it is record 15 of the file, record 14 belongs here", "5 intact records", "--aof-repair"} {
		if !strings.Contains(string(out), w) {
			t.Fatalf("refusal (%v) does not say %q:\n%s", err, w, out)
		}
	}
	t.Logf("refused: %s", bytes.TrimSpace(out))

	var stderr bytes.Buffer
	cmd, addr = startRESP(t, bin, dir, &stderr, "--aof-repair")
	do = respDo(t, addr)
	if got := do("GET", "ctr"); got != "$2" {
		t.Fatalf("GET ctr after repair: %s, want 13", got)
	}
	cmd.Signal(syscall.SIGKILL)
	cmd.Wait()
	if want := fmt.Sprintf("truncated at offset %d, dropping %d bytes: the bad record and the 5 intact records after it; kept 13 records", off, int64(len(d))-off); !strings.Contains(stderr.String(), want) {
		t.Fatalf("repair log does not say %q:\n%s", want, stderr.String())
	}
}

// TestServeRefusesSplicedAOF: two servers SET a counter to 100 and INCR
// it, one by 1 and one by 2, 20 times each under appendfsync always, and
// are killed -9; the second's last 7 records are copied over the first's
// (each record's own checksums hold, and its number fits its place).
// Format 3 started with ctr = 140, the other server's count; now serve
// exits non-zero naming the offset and another file's records, and
// --aof-repair keeps the first server's SET and 13 INCRs.
func TestServeRefusesSplicedAOF(t *testing.T) {
	bin := testkit.Binary(t)
	var files [2][]byte
	var dirs [2]string
	for s, by := range []string{"1", "2"} {
		dirs[s] = t.TempDir()
		cmd, addr := startRESP(t, bin, dirs[s])
		do := respDo(t, addr)
		if got := do("SET", "ctr", "100"); got != "+OK" {
			t.Fatalf("SET: %s", got)
		}
		for range 20 {
			if got := do("INCRBY", "ctr", by); !strings.HasPrefix(got, ":") {
				t.Fatalf("INCRBY: %s", got)
			}
		}
		cmd.Signal(syscall.SIGKILL)
		cmd.Wait()
		d, err := os.ReadFile(filepath.Join(dirs[s], kv.AOFName))
		if err != nil {
			t.Fatal(err)
		}
		files[s] = d
	}
	a, b := aofRecordStarts(t, files[0]), aofRecordStarts(t, files[1])
	if len(a) != 22 || !slices.Equal(a, b) {
		t.Fatalf("record starts %v and %v, want 21 records each at the same offsets", a, b)
	}
	off := a[14]
	d := slices.Concat(files[0][:off], files[1][off:])
	path := filepath.Join(dirs[0], kv.AOFName)
	os.WriteFile(path, d, 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--resp", "127.0.0.1:0", "--data-dir", dirs[0], "--appendfsync", "always").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("serve on an AOF with another server's tail: %v, want a non-zero exit\n%s", err, out)
	}
	for _, w := range []string{fmt.Sprint("offset ", off), "a record of another AOF file (7 records in a row from here", "--aof-repair"} {
		if !strings.Contains(string(out), w) {
			t.Fatalf("refusal (%v) does not say %q:\n%s", err, w, out)
		}
	}
	t.Logf("refused: %s", bytes.TrimSpace(out))

	var stderr bytes.Buffer
	cmd, addr := startRESP(t, bin, dirs[0], &stderr, "--aof-repair")
	do := respDo(t, addr)
	if got := do("INCRBY", "ctr", "0"); got != ":113" {
		t.Fatalf("ctr after repair: %s, want 113", got)
	}
	cmd.Signal(syscall.SIGKILL)
	cmd.Wait()
	if want := fmt.Sprintf("truncated at offset %d, dropping %d bytes: the bad record and the 0 intact records after it; kept 14 records", off, int64(len(d))-off); !strings.Contains(stderr.String(), want) {
		t.Fatalf("repair log does not say %q:\n%s", want, stderr.String())
	}
}

// respDo dials addr and returns a function that sends one command and
// returns the first line of its reply.
func respDo(t *testing.T, addr string) func(args ...string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	return func(args ...string) string {
		t.Helper()
		var b bytes.Buffer
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(b.Bytes()); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
}

// startRESP starts serve with a RESP face over dir's AOF (appendfsync
// always) and returns it and the RESP address; stderr, when given,
// receives its log.
func startRESP(t *testing.T, bin, dir string, extra ...any) (*testkit.Process, string) {
	t.Helper()
	args := []string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--resp", "127.0.0.1:0", "--data-dir", dir, "--appendfsync", "always"}
	cmd := exec.Command(bin)
	for _, e := range extra {
		switch e := e.(type) {
		case *bytes.Buffer:
			cmd.Stderr = e
		case string:
			args = append(args, e)
		}
	}
	cmd.Args = append(cmd.Args, args...)
	p, m := testkit.StartLine(t, cmd, regexp.MustCompile(`resp=(\S+)`), time.Minute)
	return p, m[1]
}
