package reqlog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"path"
	"strings"
	"sync"
)

// Redacted stands in a log for a secret's value (Options.Secrets off).
const Redacted = "REDACTED"

// MaxKeptBody is the largest body a log keeps by default: a longer one,
// and any body of the KV store (/kv/), is kept out, its length noted
// ("bl"), unless Options.Bodies.
const MaxKeptBody = 64 << 10

// secretNameSets are secretNames, the header, query-parameter and member
// names whose values a log keeps out by default, as normName writes them
// (a name ending in one of secretSuffixes is a secret too; docs/replay.md
// lists both), and gluedNames, the same without their '_': a camel-case
// header name reaches a server lower-cased or canonicalized (accessToken
// arrives as Accesstoken, over HTTP/2 as accesstoken). Built on first
// use: as package variables they were ~5 kB of live heap in every process
// of the one binary, `wirebench serve` included, whose GC marks them on
// every cycle whether or not it records requests.
var secretNameSets = sync.OnceValues(func() (secretNames, gluedNames map[string]bool) {
	secretNames = map[string]bool{
		"authorization": true, "proxy_authorization": true, "authentication": true,
		"cookie": true, "set_cookie": true, "cookie2": true, "set_cookie2": true,
		"api_key": true, "apikey": true, "key": true, "token": true, "access_token": true,
		"refresh_token": true, "id_token": true, "auth": true, "jwt": true, "password": true,
		"passwd": true, "pwd": true, "passphrase": true, "secret": true, "client_secret": true,
		"credential": true, "credentials": true, "sig": true, "signature": true,
		"session": true, "sessionid": true, "session_id": true, "x_amz_credential": true,
		"csrf": true, "xsrf": true, "csrfmiddlewaretoken": true, "phpsessid": true,
		"assertion": true, "bearer": true,
	}
	gluedNames = make(map[string]bool, len(secretNames))
	for n := range secretNames {
		gluedNames[strings.ReplaceAll(n, "_", "")] = true
	}
	return secretNames, gluedNames
})

var secretSuffixes = []string{
	"_token", "_key", "_apikey", "_secret", "_password", "_passwd", "_pwd", "_passphrase",
	"_signature", "_sig", "_credential", "_credentials", "_session", "_sessionid",
	"_session_id", "_auth", "_jwt", "_authorization", "_assertion",
}

// gluedSuffixes are the endings that make a name a secret with no
// separator before them (see secretNameSets). "key" is not among them:
// monkey, turkey.
var gluedSuffixes = []string{"token", "secret", "password", "passwd", "passphrase", "apikey", "signature", "credential", "credentials", "sessionid"}

// IsSecret tells whether a header, query parameter, form field or JSON
// member named name holds a secret: case-insensitive, '-' and '_' alike,
// camel case split (accessToken, clientSecret) or lost (Accesstoken), a
// bracketed or dotted form name by its last part (user[password],
// user.token, password[]), a trailing number ignored
// (X-Hub-Signature-256).
func IsSecret(name string) bool {
	secretNames, gluedNames := secretNameSets()
	for _, n := range normNames(name) {
		if secretNames[n] {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(n, s) {
				return true
			}
		}
		g := strings.ReplaceAll(n, "_", "")
		if gluedNames[g] {
			return true
		}
		for _, s := range gluedSuffixes {
			if strings.HasSuffix(g, s) {
				return true
			}
		}
	}
	return false
}

// IsSecretValue tells whether a value is a credential whatever its name:
// an HTTP authorization (a scheme and its credentials: "Bearer x",
// "Basic YWRhOnB3", "Digest username=…", "AWS4-HMAC-SHA256 Credential=…"),
// as gateways and proxies copy into headers of their own naming
// (X-Forwarded-Authorization), or a JWT (three base64url parts, the
// first a JSON object: eyJ…). Text that only starts with a scheme's name
// ("Basic is fine") is not one.
func IsSecretValue(v string) bool {
	v = strings.TrimSpace(v)
	if isJWT(v) || isPrefixedKey(v) {
		return true
	}
	scheme, cred, ok := strings.Cut(v, " ")
	cred = strings.TrimSpace(cred)
	if !ok || cred == "" {
		return false
	}
	switch strings.ToLower(scheme) {
	case "basic":
		// user:password in base64 ("Basic plan" is a word).
		b, err := base64.StdEncoding.DecodeString(cred)
		return err == nil && bytes.IndexByte(b, ':') >= 0
	case "bearer", "token", "negotiate", "ntlm", "dpop", "jwt", "apikey", "key":
		// One token68 (RFC 9110 §11.2): no space in it.
		return isToken68(cred)
	case "digest", "aws4-hmac-sha256", "hawk", "oauth", "hoba", "mutual", "vapid",
		"scram-sha-1", "scram-sha-256", "gnap", "privatetoken", "concealed":
		// Auth parameters: name=value pairs.
		return strings.Contains(cred, "=")
	}
	return false
}

func isToken68(s string) bool {
	t := strings.TrimRight(s, "=")
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// isJWT: header.payload[.signature], each part base64url, the header a
// JSON object ("eyJ" is the encoding of `{"`).
func isJWT(s string) bool {
	if !strings.HasPrefix(s, "eyJ") {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 5 || len(parts[0]) < 8 || len(parts[1]) < 4 {
		return false
	}
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// normNames returns the forms of name IsSecret looks up: lower case with
// '-', '.' and ' ' written '_', as written and with its camel case split.
func normNames(name string) []string {
	name = strings.TrimSuffix(name, "[]")
	if strings.HasSuffix(name, "]") {
		if i := strings.LastIndexByte(name, '['); i >= 0 {
			name = name[i+1 : len(name)-1]
		}
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	plain := strings.Map(normRune, strings.ToLower(name))
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if i > 0 && 'A' <= c && c <= 'Z' {
			p := name[i-1]
			lowerBefore := 'a' <= p && p <= 'z' || '0' <= p && p <= '9'
			acronymEnd := 'A' <= p && p <= 'Z' && i+1 < len(name) && 'a' <= name[i+1] && name[i+1] <= 'z'
			if lowerBefore || acronymEnd {
				b.WriteByte('_')
			}
		}
		b.WriteByte(c)
	}
	split := strings.Map(normRune, strings.ToLower(b.String()))
	out := []string{plain, split}
	for _, n := range []string{plain, split} {
		// A trailing number: X-Hub-Signature-256, token_2.
		if t := strings.TrimRight(n, "0123456789"); t != n && strings.HasSuffix(t, "_") {
			out = append(out, strings.TrimSuffix(t, "_"))
		}
	}
	return out
}

func normRune(r rune) rune {
	switch r {
	case '-', '.', ' ':
		return '_'
	}
	// A control byte in a name (token%00, token%09) reads as a separator
	// too: servers that strip or cut at it see the secret's name.
	if r < 0x20 || r == 0x7f {
		return '_'
	}
	return r
}

// redactQuery replaces the values of secret parameters in a query
// string or form body (a=1&api_key=x → a=1&api_key=REDACTED; '&' and
// ';' separate), and of those holding one of known (as redactPath), and
// redacts a value that is a URL or path as a target
// (next=/reset/REDACTED; one percent-encoded whole is written Redacted
// whole), keeping the rest as it was byte for byte; n counts the values
// replaced.
func redactQuery(q string, known []string) (out string, n int) {
	if q == "" {
		return q, 0
	}
	var b strings.Builder
	for q != "" {
		kv := q
		sep := ""
		if i := strings.IndexAny(q, "&;"); i >= 0 {
			kv, sep, q = q[:i], q[i:i+1], q[i+1:]
		} else {
			q = ""
		}
		k, _, hasValue := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		switch v, m := queryValue(kv[len(k):], known); {
		case hasValue && (IsSecret(name) || secretQueryValue(kv[len(k)+1:])):
			b.WriteString(k + "=" + Redacted)
			n++
		case hasValue && m > 0:
			b.WriteString(k + "=" + v)
			n += m
		default:
			b.WriteString(kv)
		}
		b.WriteString(sep)
	}
	return b.String(), n
}

// queryValue redacts a query value (eq: "=value", or "" with none) that
// holds a known credential, or is a URL or path carrying one (a login's
// ?next=, OAuth's redirect_uri): the value as written back, and how many
// were replaced (0: keep it as it was).
func queryValue(eq string, known []string) (string, int) {
	if eq == "" || eq == "=" || eq == "="+Redacted {
		return "", 0
	}
	raw := eq[1:]
	dec, err := url.QueryUnescape(raw)
	if err != nil {
		dec = raw
	}
	if holdsKnown(dec, known) {
		return Redacted, 1
	}
	if !urlLike(dec) {
		return "", 0
	}
	if urlLike(raw) { // written as a URL: redacted in place
		return redactTarget(raw, known)
	}
	if _, m := redactTarget(dec, known); m > 0 {
		return Redacted, 1 // percent-encoded: no byte of it kept
	}
	return "", 0
}

// secretQueryValue: a query or form value that is a credential
// (IsSecretValue), read unescaped ("Bearer+x", "Bearer%20x").
func secretQueryValue(v string) bool {
	if u, err := url.QueryUnescape(v); err == nil {
		v = u
	}
	return IsSecretValue(v)
}

// redactTarget redacts a target's query, fragment and path (redactPath,
// known the credentials already known of its request) and, in an
// absolute URL, the password of its user information.
func redactTarget(target string, known []string) (string, int) {
	n := 0
	prefix := ""
	if i := strings.Index(target, "://"); i > 0 && isScheme(target[:i]) {
		rest := target[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if c := strings.IndexByte(auth[:at], ':'); c >= 0 {
				auth = auth[:c+1] + Redacted + auth[at:]
				n++
			}
		}
		prefix, target = target[:i+3]+auth, rest[end:]
	}
	// The fragment too: OAuth's implicit flow puts its tokens there
	// (#access_token=…), and a recorded URL can carry it.
	rest, frag, hasFrag := strings.Cut(target, "#")
	path, query, hasQuery := strings.Cut(rest, "?")
	known = append(append(known[:len(known):len(known)], querySecrets(query)...), querySecrets(frag)...)
	var m, k, p int
	path, p = redactPath(path, known)
	query, m = redactQuery(query, known)
	frag, k = redactQuery(frag, known)
	if hasQuery {
		path += "?" + query
	}
	if hasFrag {
		path += "#" + frag
	}
	return prefix + path, n + p + m + k
}

// targetPath is a target's path: an absolute URL's without its scheme
// and host, the query cut.
func targetPath(target string) string {
	_, target, _ = SplitAbsolute(target)
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	return target
}

// isKV: a request to the KV store, whose bodies are its values: by its
// path as sent, decoded (net/http routes /%6bv/k to /kv/k) and cleaned
// (/x/../kv/k, //kv/k), so that no spelling a server may take for the
// store keeps a value in the log.
func isKV(target string) bool {
	p := targetPath(target)
	forms := []string{p}
	if u, err := url.PathUnescape(p); err == nil {
		forms = append(forms, u, path.Clean("/"+u))
	}
	for _, f := range forms {
		if f == "/kv" || strings.HasPrefix(f, "/kv/") {
			return true
		}
	}
	return false
}

// keep applies o to r: the request as the log writes it, and how many
// secrets were replaced and bodies kept out. r is not changed.
func (o Options) keep(r *Request) (q Request, redacted int, bodyOut bool) {
	q = *r
	if !o.Secrets {
		known := append(knownSecrets(r.Header), o.Known...)
		q.Target, redacted = redactTarget(r.Target, known)
		form, copied := false, false
		for i, h := range r.Header {
			if strings.EqualFold(h[0], "Content-Type") && strings.HasPrefix(strings.ToLower(strings.TrimSpace(h[1])), "application/x-www-form-urlencoded") {
				form = true
			}
			v, n := Redacted, 1
			switch {
			case h[1] == Redacted:
				continue
			case IsSecret(h[0]) || IsSecretValue(h[1]):
			case urlLike(h[1]):
				// A URL in a header (Referer, Location) is redacted
				// as a target is.
				if v, n = redactTarget(h[1], known); n == 0 {
					continue
				}
			default:
				continue
			}
			if !copied { // the caller's slice stays as it was
				q.Header, copied = append([][2]string(nil), r.Header...), true
			}
			q.Header[i][1] = v
			redacted += n
		}
		if len(q.Body) > 0 {
			var n int
			if q.Body, n, bodyOut = redactBody(r.Header, q.Body, q.Truncated, form); bodyOut {
				q.BodyLen = max(q.BodyLen, int64(len(r.Body)))
				q.Truncated = false
			}
			redacted += n
		}
	}
	if !o.Bodies && len(q.Body) > 0 && (isKV(q.Target) || len(q.Body) > MaxKeptBody || q.Truncated) {
		q.BodyLen = max(q.BodyLen, int64(len(q.Body)))
		q.Body, q.Truncated, bodyOut = nil, false, true
	}
	return q, redacted, bodyOut
}

// redactBody redacts the secrets of a request body: a form's fields, a
// multipart form's parts, a JSON body's members (JSON told by its
// Content-Type, or by its first byte whatever that says: sendBeacon and
// CORS-simple fetches send JSON as text/plain). out is true when the body
// must be kept out whole: a form or JSON body that does not parse or was
// cut, where no field can be told from another.
func redactBody(header [][2]string, body []byte, cut, form bool) (b []byte, n int, out bool) {
	ct := ""
	for _, h := range header {
		if strings.EqualFold(h[0], "Content-Type") {
			ct = h[1]
			break
		}
	}
	media, params, _ := mime.ParseMediaType(ct)
	switch {
	case form:
		// Whatever its size (--record-bodies keeps large ones); a cut
		// one too: a field's name is whole or its value is gone.
		s, n := redactQuery(string(body), nil)
		return []byte(s), n, false
	case strings.HasPrefix(media, "multipart/"):
		b, n, ok := redactMultipart(body, params["boundary"])
		if !ok || cut {
			return nil, 0, true
		}
		return b, n, false
	}
	declared := media == "application/json" || strings.HasSuffix(media, "+json")
	// A byte order mark before the JSON: parsers that skip it (Jackson,
	// System.Text.Json) read the members after it, so they are redacted
	// after it too, and the mark is kept.
	bom := bytes.HasPrefix(body, utf8BOM)
	if bom {
		body = body[len(utf8BOM):]
	}
	t := bytes.TrimLeft(body, " \t\r\n")
	sniffed := (ct == "" || !declared) && len(t) > 0 && (t[0] == '{' || t[0] == '[')
	if !declared && !sniffed {
		return withBOM(bom, body), 0, false
	}
	b, n, ok := redactJSON(body)
	switch {
	case ok && !cut && len(body) <= MaxBody:
		return withBOM(bom, b), n, false
	case declared || ct == "" || cut || len(body) > MaxBody:
		// Not JSON after all, or cut: no member can be told from
		// another, so nothing of it is kept.
		return nil, 0, true
	}
	return withBOM(bom, body), 0, false // text that only starts like JSON
}

var utf8BOM = []byte("\xef\xbb\xbf")

// withBOM puts back the byte order mark redactBody took off.
func withBOM(bom bool, b []byte) []byte {
	if !bom {
		return b
	}
	return append(append([]byte(nil), utf8BOM...), b...)
}

// redactMultipart rewrites a multipart body with the content of every
// part named like a secret (its form name, IsSecret) written Redacted;
// the other parts keep their headers and bytes. ok is false when the
// body does not parse.
func redactMultipart(body []byte, boundary string) (out []byte, n int, ok bool) {
	if boundary == "" {
		return nil, 0, false
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(boundary); err != nil {
		return nil, 0, false
	}
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, false
		}
		w, err := mw.CreatePart(p.Header)
		if err != nil {
			return nil, 0, false
		}
		if IsSecret(p.FormName()) {
			if _, err := io.Copy(io.Discard, p); err != nil {
				return nil, 0, false
			}
			io.WriteString(w, Redacted)
			n++
			continue
		}
		if _, err := io.Copy(w, p); err != nil {
			return nil, 0, false
		}
	}
	if err := mw.Close(); err != nil {
		return nil, 0, false
	}
	if n == 0 {
		return body, 0, true
	}
	return buf.Bytes(), n, true
}

// redactJSON replaces the value of every object member named like a
// secret (IsSecret: "password", "token", "api_key", "client_secret", …),
// at any depth and whatever its type, with the string Redacted, keeping
// every other byte as sent; n counts the values replaced. A body that is
// not valid JSON is returned as it was, with ok false.
func redactJSON(body []byte) (out []byte, n int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type span struct {
		from, to int64
		text     string // written in its place; "": "REDACTED"
	}
	var (
		spans []span
		// stack: for each open container, whether it is an object
		// and, if so, whether its next token is a key.
		isObj, wantKey []bool
	)
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			if len(isObj) > 0 { // cut inside a value
				return body, 0, false
			}
			break
		}
		if err != nil {
			return body, 0, false
		}
		top := len(isObj) - 1
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			isObj, wantKey = isObj[:top], wantKey[:top]
			if top > 0 && isObj[top-1] {
				wantKey[top-1] = true
			}
			continue
		}
		if top >= 0 && isObj[top] && wantKey[top] {
			key, _ := tok.(string)
			wantKey[top] = false
			if !IsSecret(key) {
				continue
			}
			// The value: skip it whole, noting where it starts and ends.
			from := dec.InputOffset()
			if err := skipValue(dec); err != nil {
				return body, 0, false
			}
			to := dec.InputOffset()
			// from is just past the key; the value starts after ':'.
			rest := body[from:to]
			i := bytes.IndexByte(rest, ':')
			if i < 0 {
				return body, 0, false
			}
			start := from + int64(i) + 1
			for start < to && strings.IndexByte(" \t\r\n", body[start]) >= 0 {
				start++
			}
			spans = append(spans, span{start, to, ""})
			wantKey[top] = true
			continue
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			isObj, wantKey = append(isObj, d == '{'), append(wantKey, d == '{')
			continue
		}
		if v, isStr := tok.(string); isStr {
			// A credential under any name: its string, quotes included;
			// a URL or path (a callback, a link sent by mail) with its
			// credentials redacted as a target's.
			secret, text := IsSecretValue(v), ""
			if !secret && urlLike(v) {
				if r, m := redactTarget(v, nil); m > 0 {
					secret, text = true, jsonString(r)
				}
			} else if !secret {
				// A header line ("Authorization: Bearer …", as a
				// client's options keep its -H) keeps its name.
				if r, m, _ := RedactHeaderLine(v); m > 0 {
					secret, text = true, jsonString(r)
				}
			}
			after := dec.InputOffset()
			if i := bytes.IndexByte(body[before:after], '"'); secret && i >= 0 {
				spans = append(spans, span{before + int64(i), after, text})
			}
		}
		if top >= 0 && isObj[top] {
			wantKey[top] = true // a member's scalar value read
		}
	}
	if len(spans) == 0 {
		return body, 0, true
	}
	out = make([]byte, 0, len(body))
	last := int64(0)
	for _, s := range spans {
		out = append(out, body[last:s.from]...)
		if s.text != "" {
			out = append(out, s.text...)
		} else {
			out = append(out, '"')
			out = append(out, Redacted...)
			out = append(out, '"')
		}
		last = s.to
	}
	return append(out, body[last:]...), len(spans), true
}

// jsonString is s as a JSON string, '<', '>' and '&' as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// skipValue reads one whole JSON value from dec.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
