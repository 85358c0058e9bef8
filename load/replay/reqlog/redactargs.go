package reqlog

import (
	"strings"
)

// RedactHeaderLine is a "Name: value" header as given on a command line
// (-H) or kept in a client's options, its value Redacted when the name is
// a secret's (Authorization, Cookie, X-Api-Key…) or the value is a
// credential by value, a URL value with its credentials redacted as a
// target's. ok: s is a header line.
func RedactHeaderLine(s string) (out string, n int, ok bool) {
	name, value, found := strings.Cut(s, ":")
	if !found || name == "" || strings.ContainsAny(name, " \t/?#=") || strings.HasPrefix(value, "//") {
		return s, 0, false
	}
	v := strings.TrimSpace(value)
	switch {
	case v == "":
		return s, 0, true
	case IsSecret(name) || IsSecretValue(v):
		return name + ": " + Redacted, 1, true
	case urlLike(v):
		if r, m := RedactTarget(v); m > 0 {
			return name + ": " + r, m, true
		}
	}
	return s, 0, true
}

// RedactArgs is a command line as a result file keeps it: the arguments
// that carry a credential REDACTED and the rest as given, so the file can
// be shared and the command read (fairness rule 8) without the secrets
// it ran with. A header argument keeps its name (RedactHeaderLine); a
// flag named like a secret (--auth-token T, --password=T) its name; a
// URL its host and path, its query's, fragment's, user information's and
// path's credentials REDACTED (RedactTarget); a credential by value
// (a JWT, a vendor's key, "Bearer …") is REDACTED whole. n counts them.
func RedactArgs(args []string) (out []string, n int) {
	out = make([]string, len(args))
	secretFlag := false
	for i, a := range args {
		out[i] = a
		if secretFlag {
			secretFlag = false
			if !strings.HasPrefix(a, "-") {
				out[i] = Redacted
				n++
				continue
			}
		}
		if name, ok := strings.CutPrefix(a, "-"); ok && name != "" && !strings.HasPrefix(name, " ") {
			name = strings.TrimPrefix(name, "-")
			name, value, hasValue := strings.Cut(name, "=")
			if IsSecret(name) && !keyFileFlags[name] {
				if !hasValue {
					secretFlag = true // its value is the next argument
					continue
				}
				out[i] = a[:len(a)-len(value)] + Redacted
				n++
				continue
			}
			if !hasValue {
				continue
			}
			// --header=Authorization: …, --url=https://…?token=…
			if r, m := redactArg(value); m > 0 {
				out[i] = a[:len(a)-len(value)] + r
				n += m
			}
			continue
		}
		if r, m := redactArg(a); m > 0 {
			out[i], n = r, n+m
		}
	}
	return out, n
}

// keyFileFlags name a file (a TLS key's), not a secret: kept.
var keyFileFlags = map[string]bool{"key": true, "tls-key": true, "client-key": true}

// redactArg is one argument's value with its credentials redacted.
func redactArg(a string) (string, int) {
	if IsSecretValue(a) {
		return Redacted, 1
	}
	if urlLike(a) {
		return RedactTarget(a)
	}
	if r, m, ok := RedactHeaderLine(a); ok {
		return r, m
	}
	return a, 0
}

// RedactOptions is a client's options, written as JSON, with their
// credentials REDACTED: members named like a secret, credentials by
// value, URLs' credentials (as in a recorded JSON body) and header lines
// ("Authorization: Bearer …"). Options that do not parse are returned as
// they are, n 0.
func RedactOptions(b []byte) (out []byte, n int) {
	out, n, ok := redactJSON(b)
	if !ok {
		return b, 0
	}
	return out, n
}
