package reqlog

import (
	"bytes"
	"errors"
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
