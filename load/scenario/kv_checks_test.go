package scenario

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// The KV clients' checks, one wrong reply at a time (fairness rule 2):
// a peer that answers every SET right (so the preload succeeds) and every
// GET, or every SET, wrong in one way must fail each such request with
// the reason of the check that catches it. scripts/mutants/scenario-checks.txt
// switches each check off and blanks each reason.

// kvCheckKeys is the key space of these runs: small, so the one VU's
// random keys are all preloaded and every GET finds its value.
const kvCheckKeys = 4

// respPeer answers each RESP command it reads: SET with set(), GET of key
// k with get(k); a reply of "" closes the connection instead.
func respPeer(t *testing.T, set func() string, get func(k int) string) string {
	return respPeerAll(t, set, get, nil)
}

// respPeerAll is respPeer answering other commands (DEL, PEXPIRE) with
// other(), if not nil.
func respPeerAll(t *testing.T, set func() string, get func(k int) string, other func() string) string {
	t.Helper()
	return "redis://" + loadtest.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			args, err := readCommand(br)
			if err != nil {
				return
			}
			reply := set()
			if other != nil && !strings.EqualFold(args[0], "SET") && !strings.EqualFold(args[0], "GET") {
				reply = other()
			}
			if strings.EqualFold(args[0], "GET") {
				k, _ := strconv.Atoi(strings.TrimLeft(strings.TrimPrefix(args[1], "key:"), "0"))
				reply = get(k)
			}
			if reply == "" {
				return
			}
			if _, err := io.WriteString(c, reply); err != nil {
				return
			}
		}
	})
}

// readCommand reads one RESP array of bulk strings.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		if line, err = br.ReadString('\n'); err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

func bulkString(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// rightValue is key k's value as the scenario writes it (size 128).
func rightValue(k int) string { return string(appendKVValue(nil, int64(k), 128)) }

func runKVChecks(t *testing.T, ko KVOptions, n int64, want map[string]int64) {
	t.Helper()
	ko.Keys, ko.Timeout = kvCheckKeys, 5*time.Second
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 1, Requests: n}}, ko)
	if len(res.Failures) == 0 {
		res.Failures = nil
	}
	if res.Requests != n || !maps.Equal(res.Failures, want) {
		t.Errorf("%s over %s: %d requests, failures %v; want %v", ko.Name, ko.Protocol, res.Requests, res.Failures, want)
	}
}

func TestKVRESPWrongReplies(t *testing.T) {
	ok := func() string { return "+OK\r\n" }
	right := func(k int) string { return bulkString(rightValue(k)) }
	const n = 20
	for _, c := range []struct {
		name     string
		scenario string
		set      func() string
		get      func(int) string
		want     map[string]int64
	}{
		{"right", ScenarioKVGet, ok, right, nil},
		{"right", ScenarioKVSet, ok, right, nil},
		{"SET answered +NO", ScenarioKVSet, func() string { return "+NO\r\n" }, right, map[string]int64{"check: SET reply '+', want +OK": n}},
		{"SET answered $2 OK", ScenarioKVSet, func() string { return bulkString("OK") }, right, map[string]int64{"check: SET reply '$', want +OK": n}},
		{"SET answered -ERR", ScenarioKVSet, func() string { return "-OOM no memory\r\n" }, right, map[string]int64{"error reply OOM": n}},
		{"GET answered an integer", ScenarioKVGet, ok, func(int) string { return ":1\r\n" }, map[string]int64{"check: GET reply ':', want a bulk string": n}},
		{"GET answered nil", ScenarioKVGet, ok, func(int) string { return "$-1\r\n" }, map[string]int64{kvMissingFail: n}},
		{"GET answered another key's value", ScenarioKVGet, ok, func(k int) string { return bulkString(rightValue(k + 1)) }, map[string]int64{kvCheckFail: n}},
		{"GET answered the value cut", ScenarioKVGet, ok, func(k int) string { return bulkString(rightValue(k)[:127]) }, map[string]int64{kvCheckFail: n}},
		{"GET answered -ERR", ScenarioKVGet, ok, func(int) string { return "-WRONGTYPE no\r\n" }, map[string]int64{"error reply WRONGTYPE": n}},
	} {
		t.Run(c.scenario+"/"+c.name, func(t *testing.T) {
			runKVChecks(t, KVOptions{Name: c.scenario, URL: respPeer(t, c.set, c.get)}, n, c.want)
		})
	}
	// DEL and PEXPIRE want an integer, 0 or 1; a GET meant to miss
	// (nokey:…) wants nothing, and a value fails it.
	del := KVOptions{Name: ScenarioKVMixed, Ratio: Ratio{Del: 1}, NoPreload: true}
	expire := KVOptions{Name: ScenarioKVMixed, Ratio: Ratio{Expire: 1}, ExpiryMin: time.Second, ExpiryMax: time.Second, NoPreload: true}
	absent := KVOptions{Name: ScenarioKVGet, MissRatio: 1, NoPreload: true}
	for _, c := range []struct {
		name  string
		ko    KVOptions
		reply string
		get   func(int) string
		want  map[string]int64
	}{
		{"DEL answered :1", del, ":1\r\n", right, nil},
		{"DEL answered :0", del, ":0\r\n", right, nil},
		{"DEL answered +OK", del, "+OK\r\n", right, map[string]int64{"check: DEL reply '+', want :0 or :1": n}},
		{"DEL answered :2", del, ":2\r\n", right, map[string]int64{"check: DEL reply ':', want :0 or :1": n}},
		{"PEXPIRE answered :1", expire, ":1\r\n", right, nil},
		{"PEXPIRE answered $1", expire, bulkString("1"), right, map[string]int64{"check: EXPIRE reply '$', want :0 or :1": n}},
		{"GET of an absent key answered nil", absent, "", func(int) string { return "$-1\r\n" }, nil},
		{"GET of an absent key answered a value", absent, "", right, map[string]int64{kvCheckFail: n}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.ko.URL = respPeerAll(t, ok, c.get, func() string { return c.reply })
			runKVChecks(t, c.ko, n, c.want)
		})
	}
}

// TestKVRESPRefused: a server that is not there fails every command of
// every batch with the dial's reason.
func TestKVRESPRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, p := range []int{1, 4} {
		res := runKV(t, load.Options{Options: results.Options{Concurrency: 1, Requests: 8}}, KVOptions{Name: ScenarioKVSet, URL: "redis://" + addr, Keys: kvCheckKeys, Pipeline: p, Timeout: 5 * time.Second})
		if want := map[string]int64{"connection refused": 8}; !maps.Equal(res.Failures, want) || res.Requests != 8 {
			t.Errorf("-P %d: %d requests, failures %v; want %v", p, res.Requests, res.Failures, want)
		}
	}
}

// TestKVRESPPipelineCut: a peer that hangs up after the first reply of a
// pipelined batch fails the rest of the batch, each with the reason.
func TestKVRESPPipelineCut(t *testing.T) {
	var replies atomic.Int64
	url := "redis://" + loadtest.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for range 4 { // the whole batch, then one reply
			if _, err := readCommand(br); err != nil {
				return
			}
		}
		replies.Add(1)
		io.WriteString(c, "+OK\r\n")
	})
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 1, Requests: 4}}, KVOptions{Name: ScenarioKVSet, URL: url, Keys: kvCheckKeys, Pipeline: 4, Timeout: 5 * time.Second})
	if want := map[string]int64{"closed before response": 3}; !maps.Equal(res.Failures, want) || res.Requests != 4 || replies.Load() != 1 {
		t.Errorf("%d requests, failures %v; want %v", res.Requests, res.Failures, want)
	}
}

// kvHTTPPeer answers PUT /kv/{key} with putStatus (204 is right) and GET
// of key k with get(k): a status and a body; a status of 0 hangs up.
type kvHTTPPeer struct {
	putStatus int
	get       func(k int, json bool) (int, string)
	delStatus int // DELETE's (0: putStatus)
}

func (p *kvHTTPPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/kv/")
	status, body := p.putStatus, ""
	if r.Method == "GET" {
		k, _ := strconv.Atoi(strings.TrimLeft(strings.TrimPrefix(key, "key:"), "0"))
		status, body = p.get(k, r.Header.Get("Accept") != "application/octet-stream")
	} else {
		if r.Method == "DELETE" && p.delStatus != 0 {
			status = p.delStatus
		}
		io.Copy(io.Discard, r.Body)
	}
	if status == 0 {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
		return
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func kvJSON(key, value string) string {
	return fmt.Sprintf(`{"key":%q,"value":%q,"ttl_ms":0}`, key, value)
}

func rightGet(k int, json bool) (int, string) {
	if json {
		return 200, kvJSON(string(appendKVKey(nil, int64(k))), rightValue(k))
	}
	return 200, rightValue(k)
}

func TestKVHTTPWrongReplies(t *testing.T) {
	const n = 20
	for _, c := range []struct {
		name     string
		scenario string
		protos   []string
		peer     *kvHTTPPeer
		want     map[string]int64
	}{
		{"right", ScenarioKVSet, nil, &kvHTTPPeer{putStatus: 204, get: rightGet}, nil},
		{"right", ScenarioKVGet, nil, &kvHTTPPeer{putStatus: 204, get: rightGet}, nil},
		{"PUT answered 200", ScenarioKVSet, nil, &kvHTTPPeer{putStatus: 200, get: rightGet}, map[string]int64{"status 200": n}},
		{"PUT hung up", ScenarioKVSet, nil, &kvHTTPPeer{putStatus: 0, get: rightGet}, map[string]int64{"closed before response": n}},
		{"GET answered 404", ScenarioKVGet, nil, &kvHTTPPeer{putStatus: 204, get: func(int, bool) (int, string) { return 404, "" }}, map[string]int64{kvMissingFail: n}},
		{"GET answered 500", ScenarioKVGet, nil, &kvHTTPPeer{putStatus: 204, get: func(int, bool) (int, string) { return 500, "" }}, map[string]int64{"status 500": n}},
		{"GET answered 201", ScenarioKVGet, nil, &kvHTTPPeer{putStatus: 204, get: func(k int, j bool) (int, string) { _, b := rightGet(k, j); return 201, b }}, map[string]int64{"status 201": n}},
		{"GET hung up", ScenarioKVGet, nil, &kvHTTPPeer{putStatus: 204, get: func(int, bool) (int, string) { return 0, "" }}, map[string]int64{"closed before response": n}},
		{"GET answered another key's value", ScenarioKVGet, nil, &kvHTTPPeer{putStatus: 204, get: func(k int, j bool) (int, string) { return rightGet(k+1, j) }}, map[string]int64{kvCheckFail: n}},
		{"GET answered the right value for the wrong key", ScenarioKVGet, []string{ProtocolHTTPJSON},
			&kvHTTPPeer{putStatus: 204, get: func(k int, _ bool) (int, string) { return 200, kvJSON("key:x", rightValue(k)) }}, map[string]int64{kvCheckFail: n}},
		{"GET answered no JSON", ScenarioKVGet, []string{ProtocolHTTPJSON},
			&kvHTTPPeer{putStatus: 204, get: func(k int, _ bool) (int, string) { return 200, `{"key":` }}, map[string]int64{"decode json body": n}},
		{"DELETE answered 404", "del", nil, &kvHTTPPeer{putStatus: 204, get: rightGet, delStatus: 404}, nil},
		{"DELETE answered 500", "del", nil, &kvHTTPPeer{putStatus: 204, get: rightGet, delStatus: 500}, map[string]int64{"status 500": n}},
		{"DELETE hung up", "del", nil, &kvHTTPPeer{putStatus: 0, get: rightGet}, map[string]int64{"closed before response": n}},
		{"GET of an absent key answered 404", "absent", nil, &kvHTTPPeer{putStatus: 204, get: func(int, bool) (int, string) { return 404, "" }}, nil},
		{"GET of an absent key answered a value", "absent", nil, &kvHTTPPeer{putStatus: 204, get: rightGet}, map[string]int64{kvCheckFail: n}},
	} {
		protos := c.protos
		if protos == nil {
			protos = []string{ProtocolHTTPRaw, ProtocolHTTPJSON}
		}
		for _, proto := range protos {
			t.Run(proto+"/"+c.scenario+"/"+c.name, func(t *testing.T) {
				ts := loadtest.StartHTTP(t, c.peer.ServeHTTP)
				ko := KVOptions{Name: c.scenario, Protocol: proto, URL: strings.TrimSuffix(ts.URL, "/")}
				switch c.scenario { // DELETE only; GETs meant to miss
				case "del":
					ko.Name, ko.Ratio, ko.NoPreload = ScenarioKVMixed, Ratio{Del: 1}, true
				case "absent":
					ko.Name, ko.MissRatio, ko.NoPreload = ScenarioKVGet, 1, true
				}
				runKVChecks(t, ko, n, c.want)
			})
		}
	}
}
