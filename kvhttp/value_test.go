package kvhttp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/access"
)

func mustMsgpack(v any) []byte { b, _ := msgpack.Marshal(v); return b }
func mustCBOR(v any) []byte    { b, _ := cbor.Marshal(v); return b }

// TestPutWithoutValue: in every format, a PUT whose body has no value
// (missing, misspelt or null) is a 400 and the old value stays; an empty
// value is a value. (Before: 204, and "" stored over the old value.)
func TestPutWithoutValue(t *testing.T) {
	srv, st := setup(t, 1<<20)
	ttlOnly := protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 5000)
	emptyVal := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), nil)
	cases := []struct {
		ctype string
		body  []byte
		ok    bool // a value is present
	}{
		{"application/json", []byte(`{}`), false},
		{"application/json", []byte(`{"valeu":"x"}`), false},
		{"application/json", []byte(`{"value":null}`), false},
		{"application/json", []byte(`{"ttl_ms":5000}`), false},
		{"application/json", []byte(`{"value":""}`), true},
		{"text/toon", []byte("foo: bar\n"), false},
		{"text/toon", []byte("value: null\n"), false},
		{"text/toon", []byte("ttl_ms: 5\n"), false},
		{"text/toon", []byte("value: new\n"), true},
		{"application/msgpack", mustMsgpack(map[string]any{}), false},
		{"application/msgpack", mustMsgpack(map[string]any{"valeu": "x"}), false},
		{"application/msgpack", mustMsgpack(map[string]any{"value": nil}), false},
		{"application/msgpack", mustMsgpack(map[string]any{"value": []byte("new")}), true},
		{"application/cbor", mustCBOR(map[string]any{}), false},
		{"application/cbor", mustCBOR(map[string]any{"value": nil}), false},
		{"application/cbor", mustCBOR(map[string]any{"value": []byte{}}), true},
		{"application/x-protobuf", nil, false},
		{"application/x-protobuf", ttlOnly, false},
		{"application/x-protobuf", emptyVal, true},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s %q", i, c.ctype, c.body), func(t *testing.T) {
			key := fmt.Sprintf("k%d", i)
			if _, _, err := st.Set(key, []byte("old"), kv.SetOpts{}); err != nil {
				t.Fatal(err)
			}
			code, _, b := do(t, "PUT", srv.URL+"/kv/"+key, c.ctype, "", c.body)
			v, _, _ := st.Get(key)
			switch {
			case c.ok && code != http.StatusNoContent:
				t.Fatalf("a PUT with a value: %d %s", code, b)
			case c.ok:
				if string(v) == "old" {
					t.Fatalf("a PUT with a value left %q", v)
				}
			case code != http.StatusBadRequest || !strings.Contains(string(b), "value"):
				t.Fatalf("a PUT without a value: %d %s, want 400 naming the value", code, b)
			case string(v) != "old":
				t.Fatalf("a refused PUT changed the value to %q", v)
			}
		})
	}
}

// TestMSetItemWithoutValue: an mset whose item lacks a value is a 400
// and stores none of its items.
func TestMSetItemWithoutValue(t *testing.T) {
	srv, st := setup(t, 1<<20)
	item := func(key string, val []byte) []byte {
		m := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), key)
		if val != nil {
			m = protowire.AppendBytes(protowire.AppendTag(m, 2, protowire.BytesType), val)
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), m)
	}
	for _, c := range []struct{ ctype, body string }{
		{"application/json", `{"items":[{"key":"a","value":"1"},{"key":"b"}]}`},
		{"application/json", `{"items":[{"key":"a","value":"1"},{"key":"b","value":null}]}`},
		{"application/msgpack", string(mustMsgpack(map[string]any{"items": []any{map[string]any{"key": "a", "value": []byte("1")}, map[string]any{"key": "b"}}}))},
		{"application/x-protobuf", string(append(item("a", []byte("1")), item("b", nil)...))},
	} {
		code, _, b := do(t, "POST", srv.URL+"/kv/mset", c.ctype, "", []byte(c.body))
		if code != http.StatusBadRequest || !strings.Contains(string(b), "item 1") || st.Len() != 0 {
			t.Fatalf("%s mset with a valueless item: %d %s; %d keys stored", c.ctype, code, b, st.Len())
		}
	}
}

// TestKeyFromMatchedPath: the key comes from the path the route matched.
// (Before: PUT /%6Bv/enc stored under "/kv/enc".)
func TestKeyFromMatchedPath(t *testing.T) {
	srv, st := setup(t, 1<<20)
	for _, c := range []struct {
		path, key string
	}{
		{"/%6Bv/enc", "enc"},
		{"/%6b%76/x%2Fy", "x/y"},
		{"/kv/a%2Fb", "a/b"},
		{"/kv/%6Beys", "keys"},
		{"/kv/%2Fkv%2Fz", "/kv/z"},
	} {
		if code, _, b := do(t, "PUT", srv.URL+c.path, mediaRaw, "", []byte("v:"+c.path)); code != http.StatusNoContent {
			t.Fatalf("PUT %s: %d %s", c.path, code, b)
		}
		if v, _, ok := st.Get(c.key); !ok || string(v) != "v:"+c.path {
			var keys []string
			st.Keys(func(k string) bool { keys = append(keys, k); return true })
			t.Fatalf("PUT %s: key %q = %q %v; keys %q", c.path, c.key, v, ok, keys)
		}
		if code, _, b := do(t, "GET", srv.URL+c.path, "", mediaRaw, nil); code != 200 || string(b) != "v:"+c.path {
			t.Fatalf("GET %s: %d %q", c.path, code, b)
		}
	}
	n := st.Len()
	if code, _, _ := do(t, "PUT", srv.URL+"/kv%2Fq", mediaRaw, "", []byte("v")); code != http.StatusNotFound || st.Len() != n {
		t.Fatalf("PUT /kv%%2Fq: %d, %d keys (was %d)", code, st.Len(), n)
	}
	// A replica refuses an mset however its path is spelt.
	h := serve(t, Guard{ReadOnly: func() bool { return true }})
	r := httptest.NewRequest("POST", "/%6Bv/mset", strings.NewReader(`{"items":[{"key":"k","value":"v"}]}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("POST /%%6Bv/mset on a replica: %d %s", w.Code, w.Body)
	}
}

// TestWrongTokensRateLimited: wrong tokens count in the client's bucket:
// after the burst, 429, and a right token from another client is not
// affected. (Before: every guess got 401, none was limited.)
func TestWrongTokensRateLimited(t *testing.T) {
	const burst = 5
	h := serve(t, Guard{Token: "s3cret", Limiter: access.NewLimiter(1, burst)})
	try := func(remote, token string) int {
		r := httptest.NewRequest("GET", "/kv/k", nil)
		r.RemoteAddr = remote
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	tried := 0
	for i := range 100 {
		code := try(fmt.Sprintf("10.0.0.1:%d", 1000+i), fmt.Sprintf("guess%d", i))
		if code == http.StatusTooManyRequests {
			break
		}
		if code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, code)
		}
		tried++
	}
	t.Logf("%d wrong tokens before 429 (burst %d)", tried, burst)
	if tried != burst {
		t.Fatalf("%d wrong tokens answered 401 before the first 429, want %d", tried, burst)
	}
	if code := try("10.0.0.1:9", "s3cret"); code != http.StatusTooManyRequests {
		t.Fatalf("the guessing client's right token: %d, want 429 until its bucket refills", code)
	}
	if code := try("10.0.0.2:1", "s3cret"); code != http.StatusNotFound {
		t.Fatalf("another client's right token: %d, want 404 (no key k)", code)
	}
}

// FuzzDecodePut: in every format, a body either decodes to a value or is
// refused; never a panic, and a body the format refuses never stores.
func FuzzDecodePut(f *testing.F) {
	f.Add(uint8(0), []byte(`{"value":"x","ttl_ms":5}`))
	f.Add(uint8(0), []byte(`{"value":null}`))
	f.Add(uint8(1), []byte("value: x\n"))
	f.Add(uint8(2), mustMsgpack(map[string]any{"value": []byte("x")}))
	f.Add(uint8(3), mustCBOR(map[string]any{"value": nil}))
	f.Add(uint8(4), protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), []byte("x")))
	mts := []string{"application/json", "text/toon", "application/msgpack", "application/cbor", "application/x-protobuf"}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		fm, ok := formatFor(mts[int(which)%len(mts)])
		if !ok {
			t.Fatal("format missing")
		}
		val, _, err := fm.decodePut(b)
		if err == nil && val == nil && fm.name() != "protobuf" {
			t.Fatalf("%s: decoded %q to a nil value without an error", fm.name(), b)
		}
		fm.decodeItems(b) // must not panic
	})
}
