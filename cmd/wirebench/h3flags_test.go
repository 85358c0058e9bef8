package main

import (
	"strings"
	"testing"
)

// TestServeH3HandshakeRateFlag: 0 and below -1 are refused as bad usage
// before anything listens; -1 (unbounded) is a valid value.
func TestServeH3HandshakeRateFlag(t *testing.T) {
	for _, v := range []string{"0", "-2"} {
		code, _, errOut := runCLI(t, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--h3-handshake-rate", v)
		if code != 2 || !strings.Contains(errOut, "h3-handshake-rate") {
			t.Errorf("--h3-handshake-rate %s: exit %d, %q; want exit 2 naming the flag", v, code, errOut)
		}
	}
}

// TestServeH3HandshakeBurstFlag: a burst of no time or past a minute is
// refused as bad usage, naming the flag.
func TestServeH3HandshakeBurstFlag(t *testing.T) {
	for _, v := range []string{"0", "-1s", "2m"} {
		code, _, errOut := runCLI(t, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--h3-handshake-burst", v)
		if code != 2 || !strings.Contains(errOut, "h3-handshake-burst") {
			t.Errorf("--h3-handshake-burst %s: exit %d, %q; want exit 2 naming the flag", v, code, errOut)
		}
	}
}

// TestServeH3HandshakeShareFlag: a share of none, below none or above the
// whole is refused as bad usage, naming the flag (1 is valid: no gate).
func TestServeH3HandshakeShareFlag(t *testing.T) {
	for _, v := range []string{"0", "-0.5", "1.5", "NaN"} {
		code, _, errOut := runCLI(t, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--h3-handshake-share", v)
		if code != 2 || !strings.Contains(errOut, "h3-handshake-share") {
			t.Errorf("--h3-handshake-share %s: exit %d, %q; want exit 2 naming the flag", v, code, errOut)
		}
	}
}

// TestServeH3RetryAfterFlag: 0 and below -1 are refused as bad usage,
// naming the flag (-1 is valid: never a Retry).
func TestServeH3RetryAfterFlag(t *testing.T) {
	for _, v := range []string{"0", "-2"} {
		code, _, errOut := runCLI(t, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--h3-retry-after", v)
		if code != 2 || !strings.Contains(errOut, "h3-retry-after") {
			t.Errorf("--h3-retry-after %s: exit %d, %q; want exit 2 naming the flag", v, code, errOut)
		}
	}
}

// TestServeH3SourceHandshakeShareFlag: a source's share below none (but
// -1), above the gate's share or not a number is refused as bad usage,
// naming the flag (0: half the gate's; -1: the whole of it).
func TestServeH3SourceHandshakeShareFlag(t *testing.T) {
	for _, v := range []string{"-0.5", "-2", "0.2", "NaN"} {
		code, _, errOut := runCLI(t, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--h3-source-handshake-share", v)
		if code != 2 || !strings.Contains(errOut, "h3-source-handshake-share") {
			t.Errorf("--h3-source-handshake-share %s: exit %d, %q; want exit 2 naming the flag", v, code, errOut)
		}
	}
}
