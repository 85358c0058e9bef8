package conn

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestAltSvcH3(t *testing.T) {
	for _, tc := range []struct {
		v    string
		host string
		port int
		ok   bool
		err  bool
	}{
		{`h3=":8443"; ma=86400`, "", 8443, true, false},
		{`h3-29=":1", h3="alt.example:443"; ma=60; persist=1`, "alt.example", 443, true, false},
		{`h2=":443", h3="[::1]:9000"`, "::1", 9000, true, false},
		{`h2=":443"`, "", 0, false, false},
		{``, "", 0, false, false},
		{`clear`, "", 0, false, false},
		{`h3=":0"`, "", 0, false, true},
		{`h3=":70000"`, "", 0, false, true},
		{`h3=:443`, "", 0, false, true},
		{`h3="443"`, "", 0, false, true},
		{`h3`, "", 0, false, true},
		{`h3=":" ` + strings.Repeat("x", MaxAltSvc), "", 0, false, true},
	} {
		host, port, ok, err := AltSvcH3(tc.v)
		if host != tc.host || port != tc.port || ok != tc.ok || (err != nil) != tc.err || err != nil && !errors.Is(err, ErrAltSvc) {
			t.Errorf("%.40q: %q %d %v %v", tc.v, host, port, ok, err)
		}
	}
}

// FuzzAltSvcH3: no value panics, an offer is a port in range, and an
// offer found is found again in the value written back.
func FuzzAltSvcH3(f *testing.F) {
	for _, s := range []string{`h3=":443"; ma=86400`, `h2=":1", h3="h:2"`, `clear`, `h3="a,b:1"`, `"`, `h3=""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		host, port, ok, err := AltSvcH3(v)
		if err != nil && ok {
			t.Fatalf("%q: offer and error %v", v, err)
		}
		if !ok {
			return
		}
		if port < 1 || port > 65535 {
			t.Fatalf("%q: port %d", v, port)
		}
		h2, p2, ok2, err2 := AltSvcH3(`h3="` + net.JoinHostPort(host, strconv.Itoa(port)) + `"`)
		if !ok2 || err2 != nil || h2 != host || p2 != port {
			t.Fatalf("%q: %q %d, written back: %q %d %v %v", v, host, port, h2, p2, ok2, err2)
		}
	})
}
