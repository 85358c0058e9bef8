package reqlog

import (
	"net/url"
	"strings"
)

// A URL's path can carry a credential as well as its query: a password
// reset or e-mail confirmation link (/reset/<token>), an API that names a
// key by itself (/api/v1/keys/sk_live_…), a webhook URL whose path is its
// secret. Names do not help there, so a segment is told by its value:
// redactPath's rules, listed in docs/replay.md.

// keyPrefixes are the prefixes of API keys and tokens that their issuers
// give a fixed form, so that a scanner can tell one anywhere (GitHub's,
// Stripe's, Slack's, AWS's, …). A value that starts with one and goes on
// with at least minKeyRest token characters, a digit among them, is a
// credential whatever its name (IsSecretValue).
var keyPrefixes = []string{
	"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_", // Stripe
	"sk-",                                                 // OpenAI, Anthropic (sk-proj-…, sk-ant-…)
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", // GitHub
	"glpat-", "gldt-", // GitLab
	"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-", // Slack
	"AKIA", "ASIA", // AWS access key IDs
	"AIza", "ya29.", // Google API keys, OAuth access tokens
	"npm_", "pypi-", "SG.", "hf_", "dop_v1_", "shpat_", "shpss_", "shpca_", "shppa_",
}

const minKeyRest = 16

// isPrefixedKey: a value of a known key form (keyPrefixes).
func isPrefixedKey(v string) bool {
	for _, p := range keyPrefixes {
		if len(v)-len(p) >= minKeyRest && strings.HasPrefix(v, p) {
			rest := v[len(p):]
			return tokenChars(rest) && strings.ContainsAny(rest, "0123456789")
		}
	}
	return false
}

// tokenChars: letters, digits and - . _ ~ + = only (a token68 without
// '/', which would end a path segment).
func tokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+=", c) >= 0) {
			return false
		}
	}
	return true
}

// credentialWords are path segments (as normName writes them) after
// which a token-shaped segment is a credential, as is one after a
// segment named like a secret (IsSecret: /token/…, /api_key/…).
var credentialWords = map[string]bool{
	"keys": true, "tokens": true, "secrets": true, "passwords": true, "sessions": true,
	"reset": true, "password_reset": true, "passwordreset": true, "reset_password": true,
	"verify": true, "verification": true, "confirm": true, "confirmation": true,
	"activate": true, "activation": true, "invite": true, "invites": true,
	"invitation": true, "invitations": true, "magic": true, "magic_link": true,
	"login": true, "signin": true, "unsubscribe": true, "otp": true, "webhook": true,
	"webhooks": true, "hooks": true,
}

// afterCredentialWord: seg, following a credential word, is shaped like
// a token: at least 16 token characters, a letter and a digit among them
// (a hex or base64 secret, a UUID; not "callback", "list" or "v2").
func afterCredentialWord(seg string) bool {
	return len(seg) >= 16 && tokenChars(seg) && strings.ContainsAny(seg, "0123456789") &&
		strings.IndexFunc(seg, func(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }) >= 0
}

// randomLooking: seg looks like a random token wherever it is: at least
// 20 characters of base64url (letters, digits, - and _) with upper- and
// lower-case letters and digits, at most one in eight a - or _, more
// than a third of neighbouring characters of different kinds (lower,
// upper, digit, - or _), and less than 60% of it in words (a capital and
// two or more lower-case letters, or three or more lower-case). A random
// base64url string of 20 characters passes 9 times in 10, of 32 about
// 49 in 50; a CamelCaseName fails on its words, a slug on its dashes;
// hex digests, UUIDs and ULIDs, with one case, are not taken (a content
// hash in a path is no secret).
func randomLooking(seg string) bool {
	if len(seg) < 20 {
		return false
	}
	var count [4]int
	changes, words := 0, 0
	for i := 0; i < len(seg); i++ {
		k := charKind(seg[i])
		if k < 0 {
			return false
		}
		count[k]++
		if i > 0 && k != charKind(seg[i-1]) {
			changes++
		}
		if k == kindLower && (i == 0 || charKind(seg[i-1]) != kindLower) {
			run := i + 1
			for run < len(seg) && charKind(seg[run]) == kindLower {
				run++
			}
			switch l := run - i; {
			case i > 0 && charKind(seg[i-1]) == kindUpper && l >= 2:
				words += l + 1
			case l >= 3:
				words += l
			}
		}
	}
	return count[kindLower] > 0 && count[kindUpper] > 0 && count[kindDigit] > 0 &&
		8*count[kindSep] <= len(seg) && 3*changes > len(seg) && 10*words < 6*len(seg)
}

const (
	kindLower = iota
	kindUpper
	kindDigit
	kindSep
)

// charKind is c's kind for randomLooking; -1 outside base64url.
func charKind(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return kindLower
	case 'A' <= c && c <= 'Z':
		return kindUpper
	case '0' <= c && c <= '9':
		return kindDigit
	case c == '-' || c == '_':
		return kindSep
	}
	return -1
}

// minKnown is the shortest credential value looked for in a path: a
// shorter one would match by chance.
const minKnown = 8

// redactPath redacts the path segments of path (no scheme, host, query
// or fragment) that carry a credential, and the secret parameters of a
// segment's own (/cart;jsessionid=…). A segment, percent-decoded, is
// written Redacted whole when it
//   - holds one of known (this request's secret header and query values,
//     and the recorder's own credentials), minKnown bytes or longer;
//   - is a credential by value (IsSecretValue: a JWT, a key of a known
//     form, an escaped "Bearer x");
//   - follows a segment named like a secret or a credential word
//     (credentialWords) and is shaped like a token (afterCredentialWord);
//   - or looks like a random token wherever it is (randomLooking).
//
// n counts the values replaced.
func redactPath(path string, known []string) (string, int) {
	segs := strings.Split(path, "/")
	n := 0
	prev := ""
	for i, seg := range segs {
		name, params, hasParams := strings.Cut(seg, ";")
		plain, err := url.PathUnescape(name)
		if err != nil {
			plain = name
		}
		if name != Redacted && pathSecret(plain, prev, known) {
			name = Redacted
			n++
		}
		if hasParams {
			var m int
			params, m = redactQuery(params, known)
			name, n = name+";"+params, n+m
		}
		segs[i], prev = name, plain
	}
	return strings.Join(segs, "/"), n
}

// pathSecret applies redactPath's rules to one decoded segment.
func pathSecret(seg, prev string, known []string) bool {
	if seg == "" {
		return false
	}
	if holdsKnown(seg, known) || IsSecretValue(seg) || randomLooking(seg) {
		return true
	}
	if prev == "" || !afterCredentialWord(seg) {
		return false
	}
	return IsSecret(prev) || credentialWords[strings.Map(normRune, strings.ToLower(prev))]
}

// holdsKnown: v holds one of known, minKnown bytes or longer.
func holdsKnown(v string, known []string) bool {
	for _, k := range known {
		if len(k) >= minKnown && strings.Contains(v, k) {
			return true
		}
	}
	return false
}

// knownSecrets are the credentials a request carries in its secret
// headers (an authorization's credentials, a cookie's values, a secret
// header's value), for redactPath to find in its path too.
func knownSecrets(header [][2]string) []string {
	var out []string
	for _, h := range header {
		name, v := h[0], strings.TrimSpace(h[1])
		switch {
		case strings.EqualFold(name, "Cookie") || strings.EqualFold(name, "Set-Cookie"):
			for _, c := range strings.Split(v, ";") {
				if _, cv, ok := strings.Cut(c, "="); ok {
					out = append(out, strings.Trim(strings.TrimSpace(cv), `"`))
				}
			}
		case IsSecretValue(v):
			if _, cred, ok := strings.Cut(v, " "); ok {
				v = strings.TrimSpace(cred)
			}
			out = append(out, v)
		case IsSecret(name):
			out = append(out, v)
		}
	}
	return out
}

// querySecrets are the values of a query's secret parameters, decoded.
func querySecrets(q string) []string {
	var out []string
	for kv := range strings.FieldsFuncSeq(q, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if name, err := url.QueryUnescape(k); err == nil {
			k = name
		}
		if u, err := url.QueryUnescape(v); err == nil {
			v = u
		}
		if IsSecret(k) || IsSecretValue(v) {
			out = append(out, v)
		}
	}
	return out
}

// urlLike: a header or metadata value that is a URL or a path (Referer,
// Location, X-Original-URL, X-Forwarded-Uri), whose query and path
// RedactTarget redacts as a request target's.
func urlLike(v string) bool {
	if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") {
		return !strings.ContainsAny(v, " \t")
	}
	_, _, abs := SplitAbsolute(v)
	return abs && !strings.ContainsAny(v, " \t")
}

// RedactTarget is a request target (a path with its query, or an
// absolute URL), or a header value holding one, as a log without
// Options.Secrets keeps it: the password of its user information, its
// query's and fragment's secret parameters and its path's credentials
// (redactPath) written Redacted; n counts them. A value that is not a
// URL or a path is returned as it is.
func RedactTarget(target string) (string, int) {
	if !urlLike(target) {
		return target, 0
	}
	return redactTarget(target, nil)
}
