package reqlog

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"strings"
)

// Redacted stands in a log for a secret's value (Options.Secrets off).
const Redacted = "REDACTED"

// MaxKeptBody is the largest body a log keeps by default: a longer one,
// and any body of the KV store (/kv/), is kept out, its length noted
// ("bl"), unless Options.Bodies.
const MaxKeptBody = 64 << 10

// secretNames are the header and query-parameter names whose values a
// log keeps out by default, lower case with '-' written '_'; a name
// ending in one of secretSuffixes is a secret too. docs/replay.md lists
// both.
var secretNames = map[string]bool{
	"authorization": true, "proxy_authorization": true, "cookie": true, "set_cookie": true,
	"api_key": true, "apikey": true, "key": true, "token": true, "access_token": true,
	"refresh_token": true, "id_token": true, "auth": true, "jwt": true, "password": true,
	"passwd": true, "pwd": true, "secret": true, "client_secret": true, "sig": true,
	"signature": true, "session": true, "sessionid": true, "session_id": true,
	"x_amz_credential": true,
}

var secretSuffixes = []string{"_token", "_key", "_apikey", "_secret", "_password", "_signature"}

// IsSecret tells whether a header or query parameter named name holds a
// secret (case-insensitive; '-' and '_' alike).
func IsSecret(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if secretNames[n] {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// redactQuery replaces the values of secret parameters in a query
// string (a=1&api_key=x → a=1&api_key=REDACTED), keeping the rest as it
// was byte for byte; n counts the values replaced.
func redactQuery(q string) (out string, n int) {
	if q == "" {
		return q, 0
	}
	var b strings.Builder
	for i, kv := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, hasValue := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && IsSecret(name) {
			b.WriteString(k + "=" + Redacted)
			n++
			continue
		}
		b.WriteString(kv)
	}
	return b.String(), n
}

// redactTarget redacts a target's query and, in an absolute URL, the
// password of its user information.
func redactTarget(target string) (string, int) {
	n := 0
	if i := strings.Index(target, "://"); i >= 0 {
		rest := target[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			if c := strings.IndexByte(rest[:at], ':'); c >= 0 {
				target = target[:i+3] + rest[:c+1] + Redacted + rest[at:]
				n++
			}
		}
	}
	path, query, ok := strings.Cut(target, "?")
	if !ok {
		return target, n
	}
	frag := ""
	if j := strings.IndexByte(query, '#'); j >= 0 {
		query, frag = query[:j], query[j:]
	}
	query, m := redactQuery(query)
	return path + "?" + query + frag, n + m
}

// targetPath is a target's path: an absolute URL's without its scheme
// and host, the query cut.
func targetPath(target string) string {
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
		j := strings.IndexByte(target, '/')
		if j < 0 {
			return "/"
		}
		target = target[j:]
	}
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	return target
}

// isKV: a request to the KV store, whose bodies are its values.
func isKV(target string) bool {
	p := targetPath(target)
	return p == "/kv" || strings.HasPrefix(p, "/kv/")
}

// keep applies o to r: the request as the log writes it, and how many
// secrets were replaced and bodies kept out. r is not changed.
func (o Options) keep(r *Request) (q Request, redacted int, bodyOut bool) {
	q = *r
	if !o.Secrets {
		q.Target, redacted = redactTarget(r.Target)
		form, copied := false, false
		for i, h := range r.Header {
			if strings.EqualFold(h[0], "Content-Type") && strings.HasPrefix(strings.ToLower(strings.TrimSpace(h[1])), "application/x-www-form-urlencoded") {
				form = true
			}
			if !IsSecret(h[0]) || h[1] == Redacted {
				continue
			}
			if !copied { // the caller's slice stays as it was
				q.Header, copied = append([][2]string(nil), r.Header...), true
			}
			q.Header[i][1] = Redacted
			redacted++
		}
		if form && len(q.Body) > 0 && len(q.Body) <= MaxKeptBody {
			if s, n := redactQuery(string(q.Body)); n > 0 {
				q.Body, redacted = []byte(s), redacted+n
			}
		} else if len(q.Body) > 0 && isJSON(r.Header, q.Body) {
			b, n, ok := redactJSON(q.Body)
			if !ok || q.Truncated || len(q.Body) > MaxBody {
				// Not JSON after all, or cut: no member can be told from
				// another, so nothing of it is kept.
				q.BodyLen = max(q.BodyLen, int64(len(q.Body)))
				q.Body, q.Truncated, bodyOut = nil, false, true
			} else if n > 0 {
				q.Body, redacted = b, redacted+n
			}
		}
	}
	if !o.Bodies && len(q.Body) > 0 && (isKV(q.Target) || len(q.Body) > MaxKeptBody || q.Truncated) {
		q.BodyLen = max(q.BodyLen, int64(len(q.Body)))
		q.Body, q.Truncated, bodyOut = nil, false, true
	}
	return q, redacted, bodyOut
}

// isJSON tells whether a request body is JSON by its Content-Type
// (application/json, any +json), or, with none, by its first byte.
func isJSON(header [][2]string, body []byte) bool {
	for _, h := range header {
		if strings.EqualFold(h[0], "Content-Type") {
			ct, _, _ := strings.Cut(strings.ToLower(h[1]), ";")
			ct = strings.TrimSpace(ct)
			return ct == "application/json" || strings.HasSuffix(ct, "+json")
		}
	}
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// redactJSON replaces the value of every object member named like a
// secret (IsSecret: "password", "token", "api_key", "client_secret", …),
// at any depth and whatever its type, with the string Redacted, keeping
// every other byte as sent; n counts the values replaced. A body that is
// not valid JSON is returned as it was, with ok false.
func redactJSON(body []byte) (out []byte, n int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type span struct{ from, to int64 }
	var (
		spans []span
		// stack: for each open container, whether it is an object
		// and, if so, whether its next token is a key.
		isObj, wantKey []bool
	)
	for {
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
			spans = append(spans, span{start, to})
			wantKey[top] = true
			continue
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			isObj, wantKey = append(isObj, d == '{'), append(wantKey, d == '{')
			continue
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
		out = append(out, '"')
		out = append(out, Redacted...)
		out = append(out, '"')
		last = s.to
	}
	return append(out, body[last:]...), len(spans), true
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
