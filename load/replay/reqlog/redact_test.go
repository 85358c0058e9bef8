package reqlog

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "Set-Cookie": true,
		"api_key": true, "API-KEY": true, "apikey": true, "key": true, "token": true, "access_token": true,
		"password": true, "secret": true, "client_secret": true, "sig": true, "signature": true,
		"X-Amz-Signature": true, "X-Amz-Security-Token": true, "X-Api-Key": true, "github_token": true,
		"Content-Type": false, "Accept": false, "limit": false, "keys": false, "tokens": false, "id": false,
		"signed": false, "page": false,
	} {
		if IsSecret(name) != want {
			t.Errorf("IsSecret(%q) = %v, want %v", name, !want, want)
		}
	}
}

// TestWriterKeepsNoSecrets: the zero Options redact secret headers,
// query parameters, a URL's password and a form body's secrets, and keep
// out KV bodies and bodies over MaxKeptBody; the caller's request is not
// changed. Options{Secrets, Bodies} keep everything.
func TestWriterKeepsNoSecrets(t *testing.T) {
	big := bytes.Repeat([]byte("b"), MaxKeptBody+1)
	in := []Request{
		{At: 1, Method: "GET", Target: "/users?limit=2&api_key=s1&Token=s2#frag", Header: [][2]string{{"Authorization", "Bearer s3"}, {"Accept", "x"}, {"Cookie", "a=s4"}}},
		{At: 2, Method: "GET", Target: "http://ada:s5@example.com:8080/x?access%5Ftoken=s6"},
		{At: 3, Method: "PUT", Target: "/kv/k", Body: []byte("s7")},
		{At: 4, Method: "POST", Target: "/login", Header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, Body: []byte("user=ada&password=s8")},
		{At: 5, Method: "POST", Target: "/echo", Body: big},
		{At: 6, Method: "POST", Target: "/echo", Body: []byte("small")},
	}
	keep := func(o Options) (string, []Request, WriterStats) { return writeLog(t, o, in) }
	raw, got, st := keep(Options{})
	for i := 1; i <= 8; i++ {
		if s := "s" + string(rune('0'+i)); strings.Contains(raw, s) || strings.Contains(string(got[min(i, 5)].Body), s) {
			t.Errorf("the log holds %q:\n%s", s, raw)
		}
	}
	want := []string{
		"/users?limit=2&api_key=REDACTED&Token=REDACTED#frag",
		"http://ada:REDACTED@example.com:8080/x?access%5Ftoken=REDACTED",
	}
	if got[0].Target != want[0] || got[1].Target != want[1] {
		t.Errorf("targets %q %q, want %q", got[0].Target, got[1].Target, want)
	}
	if h := got[0].Header; h[0][1] != Redacted || h[1][1] != "x" || h[2][1] != Redacted {
		t.Errorf("headers %q", h)
	}
	if in[0].Header[0][1] != "Bearer s3" {
		t.Errorf("the caller's request changed: %q", in[0].Header)
	}
	if string(got[3].Body) != "user=ada&password=REDACTED" {
		t.Errorf("form body %q", got[3].Body)
	}
	if len(got[2].Body) != 0 || got[2].BodyLen != 2 || len(got[4].Body) != 0 || got[4].BodyLen != MaxKeptBody+1 || string(got[5].Body) != "small" {
		t.Errorf("bodies: kv %q/%d, big %d/%d, small %q", got[2].Body, got[2].BodyLen, len(got[4].Body), got[4].BodyLen, got[5].Body)
	}
	if st != (WriterStats{Requests: 6, Redacted: 7, BodiesOut: 2}) {
		t.Errorf("stats %+v", st)
	}
	raw, got, st = keep(Options{Secrets: true, Bodies: true})
	for i := 1; i <= 6; i++ {
		if s := "s" + string(rune('0'+i)); !strings.Contains(raw, s) {
			t.Errorf("asked to keep secrets, the log lacks %q", s)
		}
	}
	if string(got[2].Body) != "s7" || !bytes.Equal(got[4].Body, big) || st.Redacted != 0 || st.BodiesOut != 0 {
		t.Errorf("asked to keep bodies: %q, %d bytes, %+v", got[2].Body, len(got[4].Body), st)
	}
}

// TestCreate: 0600, exclusive, never through a symlink, force replaces a
// regular file with a new one and writes a device in place.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	f, err := Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if _, err := Create(p, false); !errors.Is(err, ErrExists) {
		t.Errorf("over an existing file: %v", err)
	}
	os.WriteFile(p, []byte("old"), 0o644)
	if f, err = Create(p, true); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 || fi.Size() != 0 {
		t.Errorf("forced: mode %v size %d", fi.Mode(), fi.Size())
	}
	link := filepath.Join(dir, "link")
	os.Symlink(p, link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	for _, l := range []string{link, dangling} {
		for _, force := range []bool{false, true} {
			_, err := Create(l, force)
			if err == nil {
				t.Errorf("Create(%s, %v) went through the link", l, force)
				continue
			}
			// Told as a link, naming it, with or without force: not
			// "file exists, use --force", which cannot help.
			if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), l+" is a symlink") {
				t.Errorf("Create(%s, %v): %v, want the path named as a symlink", l, force, err)
			}
			if dangles := strings.Contains(err.Error(), "does not exist: nothing was created"); dangles != (l == dangling) {
				t.Errorf("Create(%s, %v): %v: dangling told %v, want %v", l, force, err, dangles, l == dangling)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("a file was made through the dangling link")
	}
	if _, err := Create(dir, true); err == nil {
		t.Error("a directory was taken")
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		if _, err := Create("/dev/null", false); !errors.Is(err, ErrExists) {
			t.Errorf("/dev/null without force: %v", err)
		}
		f, err := Create("/dev/null", true)
		if err != nil {
			t.Fatalf("/dev/null with force: %v", err)
		}
		f.Close()
		if fi, _ := os.Stat("/dev/null"); fi.Mode()&os.ModeDevice == 0 {
			t.Fatal("/dev/null is no longer a device")
		}
	}
}

// TestWriterRedactsJSONBodies: a JSON body's members named like secrets
// ("password", "token", "api_key", "authorization", …), at any depth and of
// any type, are written Redacted and every other byte is kept as sent
// (text/plain JSON too); a body that claims JSON but does not parse, or
// was cut, is kept out whole. --record-secrets keeps them.
func TestWriterRedactsJSONBodies(t *testing.T) {
	in := []Request{
		{At: 1, Method: "POST", Target: "/login", Header: [][2]string{{"Content-Type", "application/json; charset=utf-8"}},
			Body: []byte(`{"user":"ada", "password" : "j1","nested":{"api_key":"j2","list":[{"access_token":"j3"}]},"token":{"a":["j4"]},"authorization":12345,"n":1}`)},
		{At: 2, Method: "POST", Target: "/x", Body: []byte(`[{"client_secret":"j6","keep":"me"}]`)}, // no Content-Type: told by its first byte
		{At: 3, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "application/vnd.api+json"}}, Body: []byte(`{"password":"j7"`)},
		{At: 4, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "text/plain"}}, Body: []byte(`{"password":"plain"}`)},
		{At: 5, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "text/plain"}}, Body: []byte(`{not json}`)},
	}
	raw, got, st := writeLog(t, Options{}, in)
	for _, s := range []string{"j1", "j2", "j3", "j4", "12345", "j6", "j7"} {
		if strings.Contains(raw, s) || strings.Contains(string(got[0].Body)+string(got[1].Body)+string(got[2].Body), s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if want := `{"user":"ada", "password" : "REDACTED","nested":{"api_key":"REDACTED","list":[{"access_token":"REDACTED"}]},"token":"REDACTED","authorization":"REDACTED","n":1}`; string(got[0].Body) != want {
		t.Errorf("body\n%s\nwant\n%s", got[0].Body, want)
	}
	if want := `[{"client_secret":"REDACTED","keep":"me"}]`; string(got[1].Body) != want {
		t.Errorf("body %s, want %s", got[1].Body, want)
	}
	if len(got[2].Body) != 0 || got[2].BodyLen != int64(len(in[2].Body)) {
		t.Errorf("a cut JSON body kept: %q (%d)", got[2].Body, got[2].BodyLen)
	}
	if string(got[3].Body) != `{"password":"REDACTED"}` {
		t.Errorf("a text/plain JSON body: %q", got[3].Body)
	}
	if string(got[4].Body) != `{not json}` {
		t.Errorf("a text/plain body that is not JSON changed: %q", got[4].Body)
	}
	if st.Redacted != 7 || st.BodiesOut != 1 {
		t.Errorf("stats %+v, want 7 redacted, 1 body out", st)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{Secrets: true})
	for i := range in {
		w.Write(&in[i])
	}
	w.Flush()
	if got := readAll(t, NewReader(&buf)); !bytes.Equal(got[0].Body, in[0].Body) || !bytes.Equal(got[2].Body, in[2].Body) {
		t.Errorf("--record-secrets changed bodies: %s / %s", got[0].Body, got[2].Body)
	}
}

// TestWriterRedactsAuthenticatedTraffic: secrets as real clients send
// them, past the plain names: camel case (accessToken, clientSecret,
// X-Session-Id), bracketed and dotted form names (user[password],
// password[]), ';'-separated queries, an OAuth fragment
// (#access_token=), multipart forms, and JSON sent as text/plain (as
// navigator.sendBeacon and CORS-simple fetches send it).
func TestWriterRedactsAuthenticatedTraffic(t *testing.T) {
	mp := "--XB\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nada\r\n" +
		"--XB\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nS_m1\r\n" +
		"--XB\r\nContent-Disposition: form-data; name=\"user[api_key]\"\r\n\r\nS_m2\r\n--XB--\r\n"
	in := []Request{
		{At: 1, Method: "GET", Target: "/u?accessToken=S_c1&clientSecret=S_c2&AccessToken=S_c3&limit=1",
			Header: [][2]string{{"Accesstoken", "S_c9"}, {"x-authtoken", "S_c10"}, {"accessToken", "S_c4"}, {"X-Session-Id", "S_c5"}, {"Cookie2", "S_c6"}, {"X-Hub-Signature-256", "S_c7"}, {"Authentication", "S_c8"}}},
		{At: 2, Method: "GET", Target: "/u?password[]=S_b1&user[password]=S_b2&user.token=S_b3&a=1;token=S_b4"},
		{At: 3, Method: "GET", Target: "/cb#access_token=S_f1&state=keep"},
		{At: 4, Method: "GET", Target: "/cb?x=1#id_token=S_f2"},
		{At: 5, Method: "POST", Target: "/login", Header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, Body: []byte("user[password]=S_b5&csrfmiddlewaretoken=S_b6&credentials=S_b7&passphrase=S_b8")},
		{At: 6, Method: "POST", Target: "/login", Header: [][2]string{{"Content-Type", "multipart/form-data; boundary=XB"}}, Body: []byte(mp)},
		{At: 7, Method: "POST", Target: "/beacon", Header: [][2]string{{"Content-Type", "text/plain;charset=UTF-8"}}, Body: []byte(`{"refreshToken":"S_t1","idToken":"S_t2","keep":"me"}`)},
		{At: 8, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "multipart/form-data; boundary=XB"}}, Body: []byte("--XB\r\nS_broken")},
		{At: 9, Method: "GET", Target: "/cart;jsessionid=S_p1/item;v=2;PHPSESSID=S_p2?x=1"},
	}
	raw, got, _ := writeLog(t, Options{}, in)
	var bodies strings.Builder
	for _, r := range got {
		bodies.Write(r.Body)
	}
	for _, s := range []string{"S_c9", "S_c10", "S_c1", "S_c2", "S_c3", "S_c4", "S_c5", "S_c6", "S_c7", "S_c8", "S_b1", "S_b2", "S_b3", "S_b4", "S_b5", "S_b6", "S_b7", "S_b8", "S_f1", "S_f2", "S_m1", "S_m2", "S_t1", "S_t2", "S_broken", "S_p1", "S_p2"} {
		if strings.Contains(raw, s) || strings.Contains(bodies.String(), s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if want := "/cb#access_token=REDACTED&state=keep"; got[2].Target != want {
		t.Errorf("target %q, want %q", got[2].Target, want)
	}
	if want := "/u?password[]=REDACTED&user[password]=REDACTED&user.token=REDACTED&a=1;token=REDACTED"; got[1].Target != want {
		t.Errorf("target %q, want %q", got[1].Target, want)
	}
	if want := "/cart;jsessionid=REDACTED/item;v=2;PHPSESSID=REDACTED?x=1"; got[8].Target != want {
		t.Errorf("target %q, want %q", got[8].Target, want)
	}
	if !strings.Contains(string(got[5].Body), "ada") || !strings.Contains(string(got[5].Body), Redacted) {
		t.Errorf("multipart body %q: want its user kept and its password redacted", got[5].Body)
	}
	if want := `{"refreshToken":"REDACTED","idToken":"REDACTED","keep":"me"}`; string(got[6].Body) != want {
		t.Errorf("text/plain JSON %s, want %s", got[6].Body, want)
	}
	if len(got[7].Body) != 0 || got[7].BodyLen == 0 {
		t.Errorf("a multipart body that does not parse was kept: %q", got[7].Body)
	}
	// --record-bodies without --record-secrets: a large form keeps its
	// fields but not its secrets.
	big := Request{At: 9, Method: "POST", Target: "/login", Header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}},
		Body: []byte("pad=" + strings.Repeat("p", MaxKeptBody) + "&password=S_big")}
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{Bodies: true})
	w.Write(&big)
	w.Flush()
	if g := readAll(t, NewReader(&buf)); len(g) != 1 || !strings.HasSuffix(string(g[0].Body), "&password="+Redacted) {
		t.Errorf("--record-bodies kept a large form's password")
	}
	for name, want := range map[string]bool{"monkey": false, "keys": false, "tokens": false, "sessions": false, "page_token_count": false, "code": false} {
		if IsSecret(name) != want {
			t.Errorf("IsSecret(%q) = %v", name, !want)
		}
	}
}

// TestKVBodyWithAURLInItsQuery: a /kv/ request whose query holds a URL
// is still the KV store's, and its value is kept out.
func TestKVBodyWithAURLInItsQuery(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	w.Write(&Request{At: 1, Method: "PUT", Target: "/kv/k?x=http://h/users", Body: []byte("S_kv")})
	w.Flush()
	if strings.Contains(buf.String(), "S_kv") || strings.Contains(string(readAll(t, NewReader(&buf))[0].Body), "S_kv") {
		t.Errorf("a KV value was kept: %s", buf.String())
	}
}

// TestWriterRedactsCredentialsByValue: a credential is known by its value
// as well as by its name: a header or parameter that is not named like a
// secret but carries an HTTP authorization (Bearer, Basic, …) or a JWT —
// X-Authorization, X-Forwarded-Authorization (proxies and gateways copy the
// caller's there), an IAP assertion, an OAuth client assertion — is
// redacted, in headers, queries, forms and JSON bodies alike.
func TestWriterRedactsCredentialsByValue(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJWX2oxIn0.V_j1sigV_j1sigV_j1sig"
	in := []Request{
		{At: 1, Method: "GET", Target: "/u?client_assertion=V_q1&bearer=V_q2&tok=" + jwt + "&limit=2",
			Header: [][2]string{
				{"X-Authorization", "Bearer V_h1"}, {"X-Forwarded-Authorization", "Basic V_h2"}, {"X-Upstream", "Basic VjpoMmI="},
				{"X-Goog-Iap-Jwt-Assertion", "V_h3"}, {"X-Original-Auth", "bearer V_h4"},
				{"X-Whatever", jwt}, {"X-Digest", "Digest username=V_h5"}, {"Accept", "application/json"},
			}},
		{At: 2, Method: "POST", Target: "/login", Header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}},
			Body: []byte("user=ada&assertion=V_f1&upstream=Bearer+V_f2")},
		{At: 3, Method: "POST", Target: "/users", Header: [][2]string{{"Content-Type", "application/json"}},
			Body: []byte(`{"name":"ada","upstream":"Bearer V_j2","list":["` + jwt + `","keep"],"note":"Basic is fine"}`)},
	}
	raw, got, _ := writeLog(t, Options{}, in)
	var bodies strings.Builder
	for _, r := range got {
		bodies.Write(r.Body)
	}
	for _, s := range []string{"V_q1", "V_q2", "V_h1", "V_h2", "V_h3", "V_h4", "V_h5", "VjpoMmI", "V_j1", "V_f1", "V_f2", "V_j2"} {
		if strings.Contains(raw, s) || strings.Contains(bodies.String(), s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if h := got[0].Header; h[len(h)-1][1] != "application/json" {
		t.Errorf("Accept changed: %q", h)
	}
	if want := "/u?client_assertion=REDACTED&bearer=REDACTED&tok=REDACTED&limit=2"; got[0].Target != want {
		t.Errorf("target %q, want %q", got[0].Target, want)
	}
	if want := `{"name":"ada","upstream":"REDACTED","list":["REDACTED","keep"],"note":"Basic is fine"}`; string(got[2].Body) != want {
		t.Errorf("JSON body %s, want %s", got[2].Body, want)
	}
	for v, want := range map[string]bool{"Bearer x": true, "basic YWRhOnB3": true, "Basic plan": false, "Bearer": false, "Basic is fine": false, "Bearer a b": false,
		jwt: true, "eyJ.not": false, "hello": false, "Token abc": true, "AWS4-HMAC-SHA256 Credential=x": true} {
		if IsSecretValue(v) != want {
			t.Errorf("IsSecretValue(%q) = %v", v, !want)
		}
	}
}

// TestWriterRedactsPastABOMAndControlBytes: a JSON body led by a UTF-8
// byte order mark (which Jackson and System.Text.Json skip), declared or
// sent as text/plain, and a query parameter whose name carries a control
// byte (token%00, api_key%09) keep none of their secrets; the mark and
// every other byte stay as sent.
func TestWriterRedactsPastABOMAndControlBytes(t *testing.T) {
	in := []Request{
		{At: 1, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "text/plain"}}, Body: []byte("\ufeff  {\"name\":\"ada\",\"secret\":\"b1\"}")},
		{At: 2, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte("\ufeff{\"password\":\"b2\",\"n\":1}")},
		{At: 3, Method: "POST", Target: "/x", Body: []byte("\ufeff[{\"token\":\"b3\"}]")},
		{At: 4, Method: "GET", Target: "/users?token%00=b4&api_key%09=b5&%7Fsecret=b6&limit=2"},
		{At: 5, Method: "POST", Target: "/x", Header: [][2]string{{"Content-Type", "text/plain"}}, Body: []byte("\ufeffjust text b7")},
	}
	raw, got, _ := writeLog(t, Options{}, in)
	for _, s := range []string{"b1", "b2", "b3", "b4", "b5", "b6"} {
		if strings.Contains(raw, s) || strings.Contains(string(got[0].Body)+string(got[1].Body)+string(got[2].Body), s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if want := "\ufeff  {\"name\":\"ada\",\"secret\":\"REDACTED\"}"; string(got[0].Body) != want {
		t.Errorf("body %q, want %q", got[0].Body, want)
	}
	if want := "\ufeff{\"password\":\"REDACTED\",\"n\":1}"; string(got[1].Body) != want {
		t.Errorf("body %q, want %q", got[1].Body, want)
	}
	if want := "/users?token%00=REDACTED&api_key%09=REDACTED&%7Fsecret=REDACTED&limit=2"; got[3].Target != want {
		t.Errorf("target %q, want %q", got[3].Target, want)
	}
	if string(got[4].Body) != string(in[4].Body) {
		t.Errorf("a text body led by a BOM changed: %q", got[4].Body)
	}
}

// TestRedactPath: a credential in a URL's path is written REDACTED as
// one in its query is — a known value of the request's (its bearer
// token, a cookie, a secret query value), a credential by value (a JWT,
// a key of a known form), a token-shaped segment after a credential word
// (/reset/…, /keys/…), a random-looking one anywhere — while the paths
// of an API (numbers, words, slugs, UUIDs and hex digests outside those
// words, ULIDs, file names) are kept byte for byte.
func TestRedactPath(t *testing.T) {
	auth := [][2]string{{"Authorization", "Bearer tok-3f9a1c77e2"}, {"Cookie", "sid=c00k1e-5ecret"}}
	for _, c := range []struct {
		target string
		header [][2]string
		want   string
	}{
		{"/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f", nil, "/reset/REDACTED"},
		{"/password-reset/8c1f2b7a-0d3e-4f5a-9b6c-7d8e9f0a1b2c?x=1", nil, "/password-reset/REDACTED?x=1"},
		{"/api/v1/keys/sk_live_51HqLyjWDarjtT1zdp7dc", nil, "/api/v1/keys/REDACTED"},
		{"/v1/projects/ghp_16C7e42F292c6912E7710c838347Ae178B4a/issues", nil, "/v1/projects/REDACTED/issues"},
		{"/token/9f86d081884c7d659a2feaa0c55ad015", nil, "/token/REDACTED"},
		{"/verify/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", nil, "/verify/REDACTED"},
		{"/download/Xk3pQ9rT2vL8mN4bZ7wC1yH6", nil, "/download/REDACTED"},
		{"/auth/Bearer%20abc123def456", nil, "/auth/REDACTED"},
		{"/users/tok-3f9a1c77e2/todos", auth, "/users/REDACTED/todos"},
		{"/s/c00k1e-5ecret", auth, "/s/REDACTED"},
		{"/confirm/abc?api_key=k3y-v4lue-0001", nil, "/confirm/abc?api_key=REDACTED"},
		{"/files/k3y-v4lue-0001.txt?api_key=k3y-v4lue-0001", nil, "/files/REDACTED?api_key=REDACTED"},
		{"http://ada:pw@example.com/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f", nil, "http://ada:REDACTED@example.com/reset/REDACTED"},
		{"/cart;jsessionid=abc/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f;v=1", nil, "/cart;jsessionid=REDACTED/reset/REDACTED;v=1"},
		{"/login?next=/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f&x=1", nil, "/login?next=/reset/REDACTED&x=1"},
		{"/login?next=%2Freset%2F3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f&x=1", nil, "/login?next=REDACTED&x=1"},
		{"/cb?back=https://app.example/keys/sk_test_4eC39HqLyjWDarjtT1zdp7dc", nil, "/cb?back=https://app.example/keys/REDACTED"},
		{"/cb?back=https://app.example/u/Xk3pQ9rT2vL8mN4bZ7wC1yH6?a=1", nil, "/cb?back=https://app.example/u/REDACTED?a=1"},
		{"/users?hint=tok-3f9a1c77e2", auth, "/users?hint=REDACTED"},
		// Kept.
		{"/cb?redirect_uri=https://app.example/done&state=1", nil, "/cb?redirect_uri=https://app.example/done&state=1"},
		{"/login?next=%2Fusers%2F1", nil, "/login?next=%2Fusers%2F1"},
		{"/users/123/todos?limit=2", auth, "/users/123/todos?limit=2"},
		{"/auth/login", nil, "/auth/login"},
		{"/oauth/token", nil, "/oauth/token"},
		{"/keys/list", nil, "/keys/list"},
		{"/reset/done", nil, "/reset/done"},
		{"/blobs/sha256/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", nil, "/blobs/sha256/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"/orders/01ARZ3NDEKTSV4RRFFQ69G5FAV", nil, "/orders/01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"/users/550e8400-e29b-41d4-a716-446655440000", nil, "/users/550e8400-e29b-41d4-a716-446655440000"},
		{"/docs/GetUserProfileV2ByAccountId", nil, "/docs/GetUserProfileV2ByAccountId"},
		{"/blog/My-First-Post-About-HTTP2-In-2024", nil, "/blog/My-First-Post-About-HTTP2-In-2024"},
		{"/static/main.8f3a2b1c.js", nil, "/static/main.8f3a2b1c.js"},
		{"/redirect?to=http://x/y", nil, "/redirect?to=http://x/y"},
		{"/kv/greeting", nil, "/kv/greeting"},
	} {
		_, got, _ := writeLog(t, Options{}, []Request{{At: 1, Method: "GET", Target: c.target, Header: c.header}})
		if got[0].Target != c.want {
			t.Errorf("%s: %s, want %s", c.target, got[0].Target, c.want)
		}
		_, got, _ = writeLog(t, Options{Secrets: true}, []Request{{At: 1, Method: "GET", Target: c.target, Header: c.header}})
		if got[0].Target != c.target {
			t.Errorf("%s with Secrets: %s", c.target, got[0].Target)
		}
	}
	// A URL in a JSON string: its credentials redacted, the rest kept.
	body := `{"callback":"https://app.example/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f?a=1&b=2","home":"/users/1","n":"x"}`
	_, got, _ := writeLog(t, Options{}, []Request{{At: 1, Method: "POST", Target: "/hooks", Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(body)}})
	if want := `{"callback":"https://app.example/reset/REDACTED?a=1&b=2","home":"/users/1","n":"x"}`; string(got[0].Body) != want {
		t.Errorf("JSON body %s, want %s", got[0].Body, want)
	}
	// The recorder's own credentials (serve's --auth-token), and a URL
	// in a header (Referer), redacted the same way.
	_, got, st := writeLog(t, Options{Known: []string{"srv-t0ken-77"}}, []Request{{At: 1, Method: "GET", Target: "/a/srv-t0ken-77",
		Header: [][2]string{{"Referer", "https://example.com/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f?ok=1"}, {"X-Key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}}}})
	if got[0].Target != "/a/REDACTED" || got[0].Header[0][1] != "https://example.com/reset/REDACTED?ok=1" || got[0].Header[1][1] != Redacted || st.Redacted != 3 {
		t.Errorf("known value, Referer, prefixed key: %q %q, %d redacted", got[0].Target, got[0].Header, st.Redacted)
	}
}

// TestPrefixedKeys: keys of a known form are credentials by value,
// whatever their name; a prefix alone, or words after it, are not.
func TestPrefixedKeys(t *testing.T) {
	for v, want := range map[string]bool{
		"sk_live_51HqLyjWDarjtT1zdp7dc": true, "AKIAIOSFODNN7EXAMPLE": true, "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy": true,
		"github_pat_11ABCDEFG0123456789_abcdefghij": true, "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe": true,
		"sk_live_": false, "sk-short1": false, "sk-some-words-but-no-digits": false, "AKIA is a prefix": false, "ghp_": false,
	} {
		if IsSecretValue(v) != want {
			t.Errorf("IsSecretValue(%q) = %v, want %v", v, !want, want)
		}
	}
}

// TestRandomLooking: seeded random base64url tokens of 20 and 32
// characters are told random at least 86% and 96% of the time (the
// rule's documented misses: about 1 in 10 and 1 in 50), the names and
// identifiers of an API never.
func TestRandomLooking(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, min int }{{20, 860}, {32, 960}} {
		told := 0
		for range 1000 {
			b := make([]byte, c.n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			if randomLooking(string(b)) {
				told++
			}
		}
		t.Logf("%d-character tokens: %d of 1000 told random", c.n, told)
		if told < c.min {
			t.Errorf("%d-character tokens: %d of 1000 told random, want at least %d", c.n, told, c.min)
		}
	}
	for _, s := range []string{
		"GetUserProfileV2ByAccountId", "GetUserProfileV2ById", "My-First-Post-About-HTTP2-In-2024", "listOrdersByCustomerId2024",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"550e8400-e29b-41d4-a716-446655440000", "507f1f77bcf86cd799439011", "IMG_20240101_123456",
		"ReleaseNotes_v1_2_3_Final", "CHANGELOG-2024-11-29", "x86_64-unknown-linux-gnu", "getHTTP2ServerPushConfig",
		"iPhone15ProMaxReview2024", "OAuth2TokenExchangeDemo", "S3BucketPolicyV2Example", "Win10x64SetupEnterpriseEdition",
	} {
		if randomLooking(s) {
			t.Errorf("randomLooking(%q): an API's name told random", s)
		}
	}
}

// FuzzRedactTarget: redacting a target never fails, keeps its path's
// segments (as many '/'), and a redacted target redacts to itself.
func FuzzRedactTarget(f *testing.F) {
	for _, s := range []string{"/reset/3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f?api_key=x#t=1", "http://a:b@h/x;sid=1/y", "/%zz/sk_live_51HqLyjWDarjtT1zdp7dc", "/a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		got, _ := redactTarget(target, []string{"known-secret-1"})
		path := func(s string) string { s, _, _ = strings.Cut(s, "#"); s, _, _ = strings.Cut(s, "?"); return s }
		if strings.Count(path(got), "/") != strings.Count(path(target), "/") {
			t.Fatalf("%q → %q: segments changed", target, got)
		}
		if again, _ := redactTarget(got, []string{"known-secret-1"}); again != got {
			t.Fatalf("%q → %q → %q", target, got, again)
		}
	})
}

// TestKVBodyUnderAnEncodedPath: a target that reaches the KV store only
// once decoded or cleaned (/%6bv/k, which net/http routes to /kv/k and
// stores) is the KV store's too, and its value is kept out.
func TestKVBodyUnderAnEncodedPath(t *testing.T) {
	for _, target := range []string{"/%6bv/k", "/%6B%76/k", "/kv%2Fk", "/x/../kv/k", "//kv/k", "/./kv", "http://h/%6bv/k?a=1"} {
		var buf bytes.Buffer
		w := NewWriter(&buf, Options{})
		w.Write(&Request{At: 1, Method: "PUT", Target: target, Body: []byte("S_kv")})
		w.Flush()
		raw := buf.String()
		if got := readAll(t, NewReader(&buf)); strings.Contains(raw, "S_kv") || string(got[0].Body) != "" || got[0].BodyLen != 4 {
			t.Errorf("PUT %s: the log keeps the KV value: %q", target, raw)
		}
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	w.Write(&Request{At: 1, Method: "POST", Target: "/kvx/k", Body: []byte("kept")})
	w.Flush()
	if got := readAll(t, NewReader(&buf)); string(got[0].Body) != "kept" {
		t.Errorf("a body of /kvx/ was kept out: %+v", got[0])
	}
}
